// conv_3d_backprop_filter(x [N, Cin, D, H, W], grad [N, Cout, Do, Ho, Wo], strides [sd, sh, sw],
// pads [front, back, top, bottom, left, right], dilations [dd, dh, dw], groups = 1,
// filter_size [Cout, Cin / groups, Kd, Kh, Kw]): the weight gradient of a grouped 3-D
// cross-correlation with zero padding; y has shape filter_size and x's dtype (x and grad share
// one, float16 or bfloat16).
//   y[o, c, a, b, e] = sum over n, t, u, v of grad[n, o, t, u, v] *
//                      x_pad[n, g(o) Cg + c, t sd + a dd, u sh + b dh, v sw + e dw]
// with Cg = Cin / groups and g(o) = floor(o / (Cout / groups)). Out-of-range x is a zero that
// is multiplied (0 * inf or 0 * NaN in grad gives NaN, as in PyTorch). grad's spatial size must
// be the forward convolution's output size, Do = floor((D + front + back - dd (Kd - 1) - 1) / sd)
// + 1 and likewise; the formula reads only the front/top/left pads. (The reference benchmark's
// golden ignores back/bottom/right and computes Do as if the pads were symmetric; hapbench
// checks grad against both pads.) The golden is im2col over hb::dgemm, one GEMM per group
// accumulated over images and output chunks (ops/convolution.hpp).
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/convolution.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

ConvGeometry backprop_geometry(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    const TensorSpec& grad = p.input("grad").tensors.at(0);
    if (x.shape.size() != 5)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; it must be 5-D [N, Cin, D, H, W]");
    if (grad.shape.size() != 5 || grad.shape[0] != x.shape[0])
        throw Error(p.context() + "grad has shape " + shape_to_string(grad.shape) +
                    "; it must be 5-D [N, Cout, Do, Ho, Wo] with N = " + std::to_string(x.shape[0]) + " as in x");
    if (grad.dtype != x.dtype)
        throw Error(p.context() + "x has dtype " + std::string(dtype_name(x.dtype)) + " and grad " +
                    std::string(dtype_name(grad.dtype)) + "; they must be equal");
    const auto strides = int_list_attr(p, "strides", 3, "[stride_d, stride_h, stride_w]");
    const auto pads = int_list_attr(p, "pads", 6, "[front, back, top, bottom, left, right]");
    const auto dilations = int_list_attr(p, "dilations", 3, "[dilation_d, dilation_h, dilation_w]");
    const auto filter_size = int_list_attr(p, "filter_size", 5, "[Cout, Cin / groups, Kd, Kh, Kw]");
    const std::int64_t groups = p.attr_int("groups");
    ConvGeometry g;
    g.dims = 3;
    g.batch = x.shape[0];
    g.in_channels = x.shape[1];
    g.out_channels = grad.shape[1];
    g.groups = groups;
    if (groups < 1 || g.in_channels % groups || g.out_channels % groups)
        throw Error(p.context() + "groups = " + std::to_string(groups) + " must be at least 1 and divide Cin = " +
                    std::to_string(g.in_channels) + " and Cout = " + std::to_string(g.out_channels));
    if (filter_size[0] != g.out_channels || filter_size[1] != g.in_channels / groups)
        throw Error(p.context() + "filter_size is " + p.attr("filter_size").to_string() + "; it must start with Cout = " +
                    std::to_string(g.out_channels) + " (grad's channels) and Cin / groups = " +
                    std::to_string(g.in_channels / groups));
    for (std::size_t a = 0; a < 3; ++a) {
        g.in[a] = x.shape[2 + a];
        g.kernel[a] = filter_size[2 + a];
        g.stride[a] = strides[a];
        g.dilation[a] = dilations[a];
        g.pad_before[a] = pads[2 * a];
        g.pad_after[a] = pads[2 * a + 1];
        g.out[a] = conv_output_size(g.in[a], g.kernel[a], g.stride[a], g.dilation[a], g.pad_before[a], g.pad_after[a]);
    }
    check_conv_geometry(g, p.context());
    for (std::size_t a = 0; a < 3; ++a)
        if (grad.shape[2 + a] != g.out[a])
            throw Error(p.context() + "grad has shape " + shape_to_string(grad.shape) +
                        ", but the forward convolution of x " + shape_to_string(x.shape) + " with these filter_size, " +
                        "strides, pads and dilations has output size [" + std::to_string(g.out[0]) + ", " +
                        std::to_string(g.out[1]) + ", " + std::to_string(g.out[2]) + "]");
    return g;
}

AttrValue int_list(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

// One public case's window and grouping.
struct Window {
    std::array<std::int64_t, 3> kernel, stride, dilation;
    std::array<std::int64_t, 6> pads;
    int grouping;  // 0: groups = 1; 2, 4: that many groups; -1: groups = Cin (depthwise-like)
};

// Twenty windows, cycled over the cases: kernels 1, 3, 5 (cubic and not), strides 1 and 2
// (per axis), dilations 1 and 2, pads 0 to 2 (valid, "same", asymmetric), groups 1, 2, 4
// and one per input channel.
const std::vector<Window>& windows() {
    static const std::vector<Window> w = {
        {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, 0},  {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 0},
        {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, 0},  {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 0},
        {{3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {2, 2, 2, 2, 2, 2}, 2},  {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, -1},
        {{5, 5, 5}, {1, 1, 1}, {1, 1, 1}, {2, 2, 2, 2, 2, 2}, 0},  {{1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 4},
        {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {0, 1, 0, 1, 0, 1}, 0},  {{3, 5, 5}, {1, 2, 2}, {1, 1, 1}, {1, 1, 2, 2, 2, 2}, 2},
        {{1, 1, 1}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, -1}, {{3, 3, 3}, {1, 1, 1}, {2, 1, 2}, {2, 2, 1, 1, 2, 2}, 0},
        {{3, 1, 3}, {1, 1, 2}, {1, 1, 1}, {1, 1, 0, 0, 1, 1}, 4},  {{5, 3, 3}, {2, 1, 1}, {1, 1, 1}, {2, 2, 1, 1, 1, 1}, 0},
        {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 0, 1, 0, 1, 2}, 2},  {{3, 3, 3}, {1, 2, 2}, {2, 2, 2}, {2, 2, 2, 2, 2, 2}, -1},
        {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 2, 2, 2, 2, 2}, 0},  {{1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 0, 1, 1, 1, 1}, 0},
        {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 4},  {{5, 5, 5}, {2, 2, 2}, {1, 1, 1}, {2, 2, 2, 2, 2, 2}, 2},
    };
    return w;
}

}  // namespace

class Conv3dBackpropFilterOp final : public OperatorWithCompute<Conv3dBackpropFilterOp> {
  public:
    std::string name() const override { return "conv_3d_backprop_filter"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "oneDNN convolution_backward_weights (direct algorithm, formats chosen by oneDNN with reorders from "
               "NCDHW and to the filter layout, as PyTorch's oneDNN path calls it); float16 or bfloat16 that oneDNN "
               "runs only in its reference kernel on this CPU go through fp32. Where a non-finite gradient meets the "
               "zero padding, the filter taps it reaches are set to NaN afterwards (oneDNN skips padded taps; the "
               "operator multiplies them)";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const ConvGeometry g = backprop_geometry(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{p.input("x").tensors.at(0).dtype,
                                       Shape{g.out_channels, g.group_in_channels(), g.kernel[0], g.kernel[1], g.kernel[2]}});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const ConvGeometry g = backprop_geometry(p);
        conv_backward_weights<T>(g, in[0].one().v.data(), in[1].one().v.data(), out[0].one().v.data());
    }

    // Formula-literal count (cann-bench convention, issue 15) per output element: N * Do * Ho
    // * Wo multiplies and as many additions, 2 * N * Do * Ho * Wo.
    WorkModel work(const Problem& p) const override {
        const ConvGeometry g = backprop_geometry(p);
        const DType dtype = p.input("x").tensors.at(0).dtype;
        const TensorSpec& grad = p.input("grad").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        WorkModel w;
        w.contractions.push_back(conv_weight_grad_contraction(g, dtype));
        w.bytes_read = conv_reachable_input_elements(g) * static_cast<double>(dtype_size(dtype)) +
                       static_cast<double>(grad.bytes());
        w.bytes_written = static_cast<double>(y.bytes());
        // The reduction over images and positions splits too (partial filters summed at the end).
        w.parallel_items = static_cast<double>(y.numel()) * static_cast<double>(g.batch);
        w.innermost = g.kernel[2];
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        Window win = sampler.cycle(windows());
        Rng& rng = sampler.rng();
        if (d.aligned) {
            // Aligned: W and Wo both a multiple of 256 elements (512 bytes), so the W axis
            // keeps its size: stride 1 and "same" padding.
            win.kernel[2] = win.kernel[2] % 2 ? win.kernel[2] : win.kernel[2] + 1;
            win.stride[2] = 1;
            win.pads[4] = win.pads[5] = win.dilation[2] * (win.kernel[2] - 1) / 2;
        }
        double total = static_cast<double>(d.target_elements);
        if (total > 3.2e6) total = 3.1e6 * std::pow(total / 3.1e6, 0.2);
        const double macs_cap = 8e7;
        std::int64_t n = sampler.pick(std::vector<std::int64_t>{1, 2, 2, 3, 4});
        std::int64_t cin = sampler.pick(std::vector<std::int64_t>{4, 7, 8, 16, 24, 32, 64, 128});
        std::int64_t groups = 1, group_out = 1;
        if (win.grouping < 0) {
            groups = cin;
            group_out = sampler.pick(std::vector<std::int64_t>{1, 2});
        } else {
            groups = std::max(1, win.grouping);
            cin = std::max(cin / groups, std::int64_t{1}) * groups;
            group_out = sampler.pick(std::vector<std::int64_t>{2, 4, 8, 14, 16, 32, 64}) / groups;
            group_out = std::max<std::int64_t>(group_out, 1);
        }
        std::int64_t cout = group_out * groups;
        const double taps = static_cast<double>(win.kernel[0] * win.kernel[1] * win.kernel[2]);
        const double shrink = static_cast<double>(win.stride[0] * win.stride[1] * win.stride[2]);
        // total = N (Cin V + Cout V / shrink); MACs = N Cout (V / shrink) (Cin / groups) taps.
        auto volume_for = [&](double budget) {
            return budget / (static_cast<double>(n) * (static_cast<double>(cin) + static_cast<double>(cout) / shrink));
        };
        // Spatial sizes: the minimum each axis needs (aligned: W = 256), D from 4 to 17.
        std::array<std::int64_t, 3> min_size{};
        for (std::size_t a = 0; a < 3; ++a)
            min_size[a] = std::max<std::int64_t>(
                1, win.dilation[a] * (win.kernel[a] - 1) + 1 - win.pads[2 * a] - win.pads[2 * a + 1]);
        const double min_volume = static_cast<double>(std::max<std::int64_t>(min_size[0], 2) * min_size[1]) *
                                  static_cast<double>(d.aligned ? 256 : std::max<std::int64_t>(min_size[2], 4));
        // Fewer images, then fewer channels, until one image's volume fits the budget.
        while (volume_for(total) < min_volume && (n > 1 || cin > groups || group_out > 1 || (win.grouping < 0 && cin > 1))) {
            if (n > 1) --n;
            else if (cin > groups) cin = std::max(cin / 2 / groups, std::int64_t{1}) * groups;
            else if (group_out > 1) group_out /= 2;
            else groups = cin = std::max<std::int64_t>(1, cin / 2);
            cout = group_out * groups;
        }
        // Within the work cap: the input volume shrinks to fit it, but not below the regime's
        // lower end; where that floor binds, fewer output channels, then fewer input
        // channels per group, then fewer images.
        const double floor_total = d.regime == Regime::large ? 3.2e6 : d.regime == Regime::medium ? 2.2e5 : 1.1e4;
        auto macs_at = [&](double v) {
            return static_cast<double>(n * cout) / shrink * v * static_cast<double>(cin / groups) * taps;
        };
        double volume = std::max(min_volume, volume_for(total));
        for (int round = 0; round < 40 && macs_at(volume) > macs_cap; ++round) {
            const double fitted = std::max({volume * macs_cap / macs_at(volume), volume_for(floor_total), min_volume});
            if (macs_at(fitted) <= macs_cap * 1.05) {
                volume = fitted;
                break;
            }
            if (group_out > 1) group_out /= 2;
            else if (win.grouping >= 0 && cin > groups) cin = std::max(cin / 2 / groups, std::int64_t{1}) * groups;
            else if (n > 1) --n;
            else break;
            cout = group_out * groups;
            volume = std::max(min_volume, volume_for(total));
        }
        std::int64_t depth = std::max<std::int64_t>(min_size[0], rng.uniform_int(4, 17));
        depth = std::min<std::int64_t>(depth, std::max<std::int64_t>(min_size[0], std::llround(std::cbrt(volume))));
        if (d.aligned)  // a plane of at least 256 x min_h
            depth = std::min<std::int64_t>(
                depth, std::max<std::int64_t>(min_size[0], static_cast<std::int64_t>(volume / (256.0 * static_cast<double>(min_size[1])))));
        const double plane = std::max(1.0, volume / static_cast<double>(depth));
        std::int64_t h, w;
        if (d.aligned) {
            w = plane >= 512 * 8 ? 512 : 256;
            h = std::max<std::int64_t>(min_size[1], std::llround(plane / static_cast<double>(w)));
        } else {
            const double aspect = std::exp(rng.uniform(std::log(0.6), std::log(1.6)));
            h = std::max<std::int64_t>(min_size[1], std::llround(std::sqrt(plane * aspect)));
            w = std::max<std::int64_t>(min_size[2], std::llround(plane / static_cast<double>(h)));
            if (w % 2 == 0) w += 1;
        }
        const std::array<std::int64_t, 3> in{depth, h, w};
        std::array<std::int64_t, 3> o{};
        for (std::size_t a = 0; a < 3; ++a)
            o[a] = conv_output_size(in[a], win.kernel[a], win.stride[a], win.dilation[a], win.pads[2 * a],
                                    win.pads[2 * a + 1]);
        out.inputs.at(0).shapes = {Shape{n, cin, depth, h, w}};
        out.inputs.at(1).shapes = {Shape{n, cout, o[0], o[1], o[2]}};
        const auto& k = win.kernel;
        out.attrs = {{"strides", int_list({win.stride[0], win.stride[1], win.stride[2]})},
                     {"pads", int_list({win.pads[0], win.pads[1], win.pads[2], win.pads[3], win.pads[4], win.pads[5]})},
                     {"dilations", int_list({win.dilation[0], win.dilation[1], win.dilation[2]})},
                     {"groups", AttrValue::of_int(groups)},
                     {"filter_size", int_list({cout, cin / groups, k[0], k[1], k[2]})}};
    }

    // float16: +-64, whose products (up to 4096) summed over hundreds to tens of thousands of
    // positions straddle fp16's largest value, so some taps overflow to inf and others stay
    // finite (+-65504 would overflow every product); bfloat16: +-1e16, whose products and sums
    // stay finite in fp32, the precision kernels accumulate in.
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-64, 64} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(Conv3dBackpropFilterOp)

}  // namespace hb
