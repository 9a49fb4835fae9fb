#include "ops/convolution.hpp"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "ops/dgemm.hpp"

namespace hb {

std::vector<std::int64_t> int_list_attr(const Problem& p, const std::string& name, std::size_t count,
                                        const std::string& layout) {
    const AttrValue& a = p.attr(name);
    if (a.type != AttrType::int_list || a.ints.size() != count)
        throw Error(p.context() + name + " is " + a.to_string() + "; it must be a list of " + std::to_string(count) +
                    " integers " + layout);
    return a.ints;
}

std::int64_t conv_output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t dilation,
                              std::int64_t pad_before, std::int64_t pad_after) {
    const std::int64_t span = in + pad_before + pad_after - dilation * (kernel - 1) - 1;
    if (span < 0 || stride < 1) return 0;
    return span / stride + 1;
}

std::int64_t conv_reachable_positions(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                                      std::int64_t dilation, std::int64_t pad_before) {
    std::vector<char> read(static_cast<std::size_t>(std::max<std::int64_t>(in, 0)), 0);
    std::int64_t count = 0;
    for (std::int64_t o = 0; o < out; ++o)
        for (std::int64_t t = 0; t < kernel; ++t) {
            const std::int64_t i = o * stride + t * dilation - pad_before;
            if (i < 0 || i >= in || read[static_cast<std::size_t>(i)]) continue;
            read[static_cast<std::size_t>(i)] = 1;
            ++count;
        }
    return count;
}

double conv_reachable_input_elements(const ConvGeometry& g) {
    double n = static_cast<double>(g.batch) * static_cast<double>(g.in_channels);
    for (int a = 0; a < 3; ++a)
        n *= static_cast<double>(conv_reachable_positions(g.in[a], g.out[a], g.kernel[a], g.stride[a], g.dilation[a],
                                                          g.pad_before[a]));
    return n;
}

void check_conv_geometry(const ConvGeometry& g, const std::string& context) {
    if (g.batch < 1 || g.in_channels < 1 || g.out_channels < 1)
        throw Error(context + "batch, input channels and output channels must be at least 1 (got " +
                    std::to_string(g.batch) + ", " + std::to_string(g.in_channels) + ", " +
                    std::to_string(g.out_channels) + ")");
    if (g.groups < 1 || g.in_channels % g.groups || g.out_channels % g.groups)
        throw Error(context + "groups = " + std::to_string(g.groups) + " must be at least 1 and divide both the " +
                    std::to_string(g.in_channels) + " input and the " + std::to_string(g.out_channels) +
                    " output channels");
    static const char* const axis_names[] = {"first", "second", "third"};
    for (int a = 0; a < g.dims; ++a) {
        const std::string axis = std::string(axis_names[a]) + " spatial axis";
        if (g.in[a] < 1 || g.kernel[a] < 1)
            throw Error(context + "the " + axis + " has input size " + std::to_string(g.in[a]) + " and kernel size " +
                        std::to_string(g.kernel[a]) + "; both must be at least 1");
        if (g.stride[a] < 1 || g.dilation[a] < 1)
            throw Error(context + "the " + axis + " has stride " + std::to_string(g.stride[a]) + " and dilation " +
                        std::to_string(g.dilation[a]) + "; both must be at least 1");
        if (g.pad_before[a] < 0 || g.pad_after[a] < 0)
            throw Error(context + "the " + axis + " has pads " + std::to_string(g.pad_before[a]) + " and " +
                        std::to_string(g.pad_after[a]) + "; pads must be non-negative");
        if (g.out[a] < 1)
            throw Error(context + "the " + axis + " is empty after the convolution: input " + std::to_string(g.in[a]) +
                        " + pads " + std::to_string(g.pad_before[a]) + " + " + std::to_string(g.pad_after[a]) +
                        " is shorter than the dilated kernel " +
                        std::to_string(g.dilation[a] * (g.kernel[a] - 1) + 1));
    }
}

namespace {

template <typename T>
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda, const T* b,
          std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
    if constexpr (std::is_same_v<T, double>) dgemm(ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
    else sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

// Output positions per im2col chunk: the chunk's column buffer stays near 32 MiB in fp64.
std::int64_t chunk_positions(const ConvGeometry& g) {
    const std::int64_t rows = g.group_in_channels() * g.kernel_volume();
    return std::clamp<std::int64_t>((std::int64_t{1} << 22) / std::max<std::int64_t>(rows, 1), 1, g.out_volume());
}

// col[r, i] for r = c * kernel_volume + tap and output positions p0 + i (i < count): the
// input value that tap reads for that output, 0 where it falls into the padding.
template <typename T>
void im2col(const ConvGeometry& g, const T* x_group, std::int64_t p0, std::int64_t count, T* col) {
    const std::int64_t taps = g.kernel_volume();
    const std::int64_t rows = g.group_in_channels() * taps;
    const std::int64_t in_volume = g.in_volume();
#pragma omp parallel for schedule(static) if (rows * count >= (1 << 16))
    for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t c = r / taps, tap = r % taps;
        const std::int64_t t0 = tap / (g.kernel[1] * g.kernel[2]), t1 = (tap / g.kernel[2]) % g.kernel[1],
                           t2 = tap % g.kernel[2];
        const std::int64_t base0 = t0 * g.dilation[0] - g.pad_before[0];
        const std::int64_t base1 = t1 * g.dilation[1] - g.pad_before[1];
        const std::int64_t base2 = t2 * g.dilation[2] - g.pad_before[2];
        const T* xc = x_group + c * in_volume;
        T* dst = col + r * count;
        std::int64_t o2 = p0 % g.out[2], o1 = (p0 / g.out[2]) % g.out[1], o0 = p0 / (g.out[1] * g.out[2]);
        for (std::int64_t i = 0; i < count; ++i) {
            const std::int64_t i0 = o0 * g.stride[0] + base0, i1 = o1 * g.stride[1] + base1,
                               i2 = o2 * g.stride[2] + base2;
            const bool inside = i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1] && i2 >= 0 && i2 < g.in[2];
            dst[i] = inside ? xc[(i0 * g.in[1] + i1) * g.in[2] + i2] : T(0);
            if (++o2 == g.out[2]) {
                o2 = 0;
                if (++o1 == g.out[1]) o1 = 0, ++o0;
            }
        }
    }
}

}  // namespace

template <typename T>
void conv_forward(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y) {
    const std::int64_t cg = g.group_in_channels(), og = g.group_out_channels();
    const std::int64_t rows = cg * g.kernel_volume(), positions = g.out_volume();
    const std::int64_t chunk = chunk_positions(g);
    std::vector<T> col(static_cast<std::size_t>(rows * chunk));
    for (std::int64_t n = 0; n < g.batch; ++n)
        for (std::int64_t gr = 0; gr < g.groups; ++gr) {
            const T* x_group = x + (n * g.in_channels + gr * cg) * g.in_volume();
            T* y_group = y + (n * g.out_channels + gr * og) * positions;
            for (std::int64_t p0 = 0; p0 < positions; p0 += chunk) {
                const std::int64_t count = std::min(chunk, positions - p0);
                im2col(g, x_group, p0, count, col.data());
                gemm<T>(false, false, og, count, rows, w + gr * og * rows, rows, col.data(), count, T(0), y_group + p0,
                        positions);
            }
            if (bias)
                for (std::int64_t o = 0; o < og; ++o) {
                    const T b = bias[gr * og + o];
                    T* row = y_group + o * positions;
                    for (std::int64_t p = 0; p < positions; ++p) row[p] += b;
                }
        }
}

template <typename T>
void conv_backward_weights(const ConvGeometry& g, const T* x, const T* grad, T* dw) {
    const std::int64_t cg = g.group_in_channels(), og = g.group_out_channels();
    const std::int64_t rows = cg * g.kernel_volume(), positions = g.out_volume();
    const std::int64_t chunk = chunk_positions(g);
    std::vector<T> col(static_cast<std::size_t>(rows * chunk));
    for (std::int64_t gr = 0; gr < g.groups; ++gr) {
        T* dw_group = dw + gr * og * rows;
        bool first = true;
        for (std::int64_t n = 0; n < g.batch; ++n) {
            const T* x_group = x + (n * g.in_channels + gr * cg) * g.in_volume();
            const T* grad_group = grad + (n * g.out_channels + gr * og) * positions;
            for (std::int64_t p0 = 0; p0 < positions; p0 += chunk) {
                const std::int64_t count = std::min(chunk, positions - p0);
                im2col(g, x_group, p0, count, col.data());
                gemm<T>(false, true, og, rows, count, grad_group + p0, positions, col.data(), count, first ? T(0) : T(1),
                        dw_group, rows);
                first = false;
            }
        }
    }
}

template void conv_forward<double>(const ConvGeometry&, const double*, const double*, const double*, double*);
template void conv_forward<float>(const ConvGeometry&, const float*, const float*, const float*, float*);
template void conv_backward_weights<double>(const ConvGeometry&, const double*, const double*, double*);
template void conv_backward_weights<float>(const ConvGeometry&, const float*, const float*, float*);

Contraction conv_forward_contraction(const ConvGeometry& g, DType dtype) {
    Contraction c;
    c.dtype = dtype;
    c.out_dtype = dtype;
    c.batch = static_cast<double>(g.batch * g.groups);
    c.m = g.group_out_channels();
    c.n = g.out_volume();
    c.k = g.group_in_channels() * g.kernel_volume();
    c.vector_ok = true;
    return c;
}

Contraction conv_weight_grad_contraction(const ConvGeometry& g, DType dtype) {
    Contraction c;
    c.dtype = dtype;
    c.out_dtype = dtype;
    c.batch = static_cast<double>(g.groups);
    c.m = g.group_out_channels();
    c.n = g.group_in_channels() * g.kernel_volume();
    c.k = g.batch * g.out_volume();
    c.vector_ok = true;
    return c;
}

}  // namespace hb
