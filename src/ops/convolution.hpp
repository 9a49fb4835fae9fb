// Grouped cross-correlation with 1 to 3 spatial dims, channels-first ([N, C, spatial...]),
// for the level-3 convolution operators (conv_2d, depthwise_conv_2d,
// conv_3d_backprop_filter): the geometry, and the fp64 golden (and fp32 same-precision
// reference) of the forward pass and of the weight gradient as im2col over hb::dgemm /
// hb::sgemm. The im2col buffer materializes padded taps as zeros and the GEMM multiplies
// them, so a non-finite weight (or gradient) that meets padding gives 0 * inf = NaN there,
// as PyTorch's convolution does. Harness only (the baselines do not link it).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "ops/problem.hpp"
#include "ops/work_model.hpp"

namespace hb {

struct ConvGeometry {
    int dims = 2;  // spatial dims used (1..3); unused trailing axes have size 1 and kernel 1
    std::int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;
    std::array<std::int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
    std::array<std::int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1};
    std::array<std::int64_t, 3> pad_before{0, 0, 0}, pad_after{0, 0, 0};

    std::int64_t in_volume() const { return in[0] * in[1] * in[2]; }
    std::int64_t out_volume() const { return out[0] * out[1] * out[2]; }
    std::int64_t kernel_volume() const { return kernel[0] * kernel[1] * kernel[2]; }
    std::int64_t group_in_channels() const { return in_channels / groups; }
    std::int64_t group_out_channels() const { return out_channels / groups; }
    // Multiply-adds of the forward pass (and of the weight gradient: the same products).
    double macs() const {
        return static_cast<double>(batch) * static_cast<double>(out_channels) * static_cast<double>(out_volume()) *
               static_cast<double>(group_in_channels()) * static_cast<double>(kernel_volume());
    }
};

// An int-list attribute with exactly `count` entries; `layout` says what they mean in the
// error ("[top, bottom, left, right]").
std::vector<std::int64_t> int_list_attr(const Problem& p, const std::string& name, std::size_t count,
                                        const std::string& layout);

// floor((in + before + after - dilation * (kernel - 1) - 1) / stride) + 1; 0 when the padded
// input is shorter than the dilated kernel.
std::int64_t conv_output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t dilation,
                              std::int64_t pad_before, std::int64_t pad_after);

// Input positions along one axis that some tap of some output reads (strides larger than
// the dilated kernel skip the rest): what a kernel must at least load.
std::int64_t conv_reachable_positions(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                                      std::int64_t dilation, std::int64_t pad_before);
// batch * in_channels * the reachable positions of every spatial axis.
double conv_reachable_input_elements(const ConvGeometry& g);

// Checks the geometry's invariants (channels divisible by groups, every size and factor
// positive, pads non-negative, outputs non-empty); throws hb::Error prefixed by `context`.
void check_conv_geometry(const ConvGeometry& g, const std::string& context);

// y[n, o, p] = bias[o] + sum over (c, tap) of w[o, c, tap] * x_padded[n, group(o) * Cg + c, p * stride
// + tap * dilation - pad_before]; x [N, Cin, in...], w [Cout, Cin / groups, kernel...], y [N, Cout,
// out...]; bias may be null. T = double (hb::dgemm) or float (hb::sgemm).
template <typename T>
void conv_forward(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y);

// dw[o, c, tap] = sum over n, p of grad[n, o, p] * x_padded[n, group(o) * Cg + c, p * stride + tap *
// dilation - pad_before]: the weight gradient; grad [N, Cout, out...], dw [Cout, Cin / groups, kernel...].
template <typename T>
void conv_backward_weights(const ConvGeometry& g, const T* x, const T* grad, T* dw);

// The forward pass as implicit GEMMs, one per (image, group): [Cout/g, Cin/g * kernel] x
// [Cin/g * kernel, out positions]. Vector implementations are valid (depthwise: m = 1).
Contraction conv_forward_contraction(const ConvGeometry& g, DType dtype);
// The weight gradient, one GEMM per group: [Cout/g, N * out positions] x [N * out positions,
// Cin/g * kernel].
Contraction conv_weight_grad_contraction(const ConvGeometry& g, DType dtype);

}  // namespace hb
