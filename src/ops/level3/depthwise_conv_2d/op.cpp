// depthwise_conv_2d(x [N, C, H, W], weight [C, Kh, Kw], bias [C], kernelSize [Kh, Kw],
// stride [sh, sw], padding [ph, pw], dilation [dh, dw], groups = C): each channel convolved
// with its own filter (a grouped convolution with one channel per group), zero padding ph
// on the top and bottom, pw on the left and right; y [N, C, Ho, Wo] in x's dtype.
//   Ho = floor((H + 2 ph - dh (Kh - 1) - 1) / sh) + 1 (Wo likewise)
//   y[n, c, i, j] = bias[c] + sum over a, b of x_pad[n, c, i sh + a dh, j sw + b dw] * weight[c, a, b]
// Padded taps take part in the products (0 * weight): a non-finite weight tap that meets the
// padding gives NaN there, as PyTorch's convolution does. kernelSize must equal weight's
// [Kh, Kw] and groups must equal C (the reference benchmark's golden ignores kernelSize and
// passes groups to PyTorch as given; hapbench rejects inconsistent values instead). The golden
// is im2col over hb::dgemm per channel (ops/convolution.hpp).
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/convolution.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

ConvGeometry depthwise_geometry(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    const TensorSpec& weight = p.input("weight").tensors.at(0);
    const TensorSpec& bias = p.input("bias").tensors.at(0);
    if (x.shape.size() != 4)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; it must be 4-D [N, C, H, W]");
    const std::int64_t c = x.shape[1];
    if (weight.shape.size() != 3 || weight.shape[0] != c)
        throw Error(p.context() + "weight has shape " + shape_to_string(weight.shape) +
                    "; it must be [C, Kh, Kw] with C = " + std::to_string(c) + " as in x");
    if (bias.shape != Shape{c})
        throw Error(p.context() + "bias has shape " + shape_to_string(bias.shape) + "; it must be [C] = [" +
                    std::to_string(c) + "]");
    if (weight.dtype != x.dtype || bias.dtype != x.dtype)
        throw Error(p.context() + "x, weight and bias have dtypes " + std::string(dtype_name(x.dtype)) + ", " +
                    std::string(dtype_name(weight.dtype)) + ", " + std::string(dtype_name(bias.dtype)) +
                    "; they must be equal");
    const auto kernel = int_list_attr(p, "kernelSize", 2, "[Kh, Kw]");
    if (kernel[0] != weight.shape[1] || kernel[1] != weight.shape[2])
        throw Error(p.context() + "kernelSize is " + p.attr("kernelSize").to_string() + " but weight has shape " +
                    shape_to_string(weight.shape) + "; kernelSize must be weight's [Kh, Kw]");
    const std::int64_t groups = p.attr_int("groups");
    if (groups != c)
        throw Error(p.context() + "groups is " + std::to_string(groups) + "; a depthwise convolution needs groups = C = " +
                    std::to_string(c));
    const auto stride = int_list_attr(p, "stride", 2, "[stride_h, stride_w]");
    const auto padding = int_list_attr(p, "padding", 2, "[pad_h, pad_w] (each applied on both sides)");
    const auto dilation = int_list_attr(p, "dilation", 2, "[dilation_h, dilation_w]");
    ConvGeometry g;
    g.dims = 2;
    g.batch = x.shape[0];
    g.in_channels = g.out_channels = g.groups = c;
    for (std::size_t a = 0; a < 2; ++a) {
        g.in[a] = x.shape[2 + a];
        g.kernel[a] = weight.shape[1 + a];
        g.stride[a] = stride[a];
        g.dilation[a] = dilation[a];
        g.pad_before[a] = g.pad_after[a] = padding[a];
        g.out[a] = conv_output_size(g.in[a], g.kernel[a], g.stride[a], g.dilation[a], padding[a], padding[a]);
    }
    check_conv_geometry(g, p.context());
    return g;
}

AttrValue int_list(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

struct Window {
    std::int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};

// Twenty windows, cycled over the cases: kernels 1, 3, 5 and non-square, strides 1 and 2 (per
// axis), padding 0 to 3 (none, "same", more than "same"), dilations 1 to 3 (per axis).
const std::vector<Window>& windows() {
    static const std::vector<Window> w = {
        {3, 3, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 0, 0, 1, 1}, {5, 5, 1, 1, 2, 2, 1, 1}, {3, 3, 2, 2, 1, 1, 1, 1},
        {3, 3, 1, 1, 2, 2, 2, 2}, {5, 5, 2, 2, 2, 2, 1, 1}, {3, 3, 1, 1, 3, 3, 3, 3}, {3, 3, 1, 1, 0, 0, 1, 1},
        {1, 1, 2, 2, 0, 0, 1, 1}, {5, 5, 1, 1, 1, 1, 2, 2}, {1, 3, 1, 1, 0, 1, 1, 1}, {3, 1, 2, 1, 1, 0, 1, 1},
        {3, 3, 1, 2, 1, 1, 1, 2}, {5, 3, 1, 1, 2, 1, 1, 1}, {3, 5, 2, 2, 1, 2, 2, 1}, {1, 1, 1, 1, 1, 1, 1, 1},
        {3, 3, 2, 2, 0, 0, 2, 2}, {5, 5, 1, 1, 3, 3, 1, 1}, {3, 3, 2, 1, 2, 1, 3, 1}, {5, 5, 2, 2, 0, 0, 1, 1},
    };
    return w;
}

}  // namespace

class DepthwiseConv2dOp final : public OperatorWithCompute<DepthwiseConv2dOp> {
  public:
    std::string name() const override { return "depthwise_conv_2d"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "oneDNN convolution_forward with groups = C (its depthwise kernels; direct algorithm, formats chosen "
               "by oneDNN with reorders from and to NCHW, as PyTorch's oneDNN path calls it); float16 or bfloat16 "
               "that oneDNN runs only in its reference kernel (or not at all) on this CPU, or a half-precision x "
               "holding inf or NaN, go through fp32. Where a non-finite weight tap meets the zero padding, the "
               "outputs are set to NaN afterwards (oneDNN skips padded taps; the operator multiplies them)";
    }
    // The weight's innermost dim is its width (1 to 5 taps), never 512 bytes.
    bool can_align() const override { return false; }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const ConvGeometry g = depthwise_geometry(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{p.input("x").tensors.at(0).dtype, Shape{g.batch, g.out_channels, g.out[0], g.out[1]}});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const ConvGeometry g = depthwise_geometry(p);
        conv_forward<T>(g, in[0].one().v.data(), in[1].one().v.data(), in[2].one().v.data(), out[0].one().v.data());
    }

    // Formula-literal count (cann-bench convention, issue 15) per output element: Kh * Kw
    // multiplies and as many additions (the taps' sum plus the bias), 2 * Kh * Kw.
    WorkModel work(const Problem& p) const override {
        const ConvGeometry g = depthwise_geometry(p);
        const DType dtype = p.input("x").tensors.at(0).dtype;
        const TensorSpec& weight = p.input("weight").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        WorkModel w;
        // One [1, Kh Kw] x [Kh Kw, Ho Wo] product per (image, channel): the cube pads m = 1 to
        // its fractal, so the solver also weighs the vector path (one FMA per tap).
        w.contractions.push_back(conv_forward_contraction(g, dtype));
        const double size = static_cast<double>(dtype_size(dtype));
        w.bytes_read = conv_reachable_input_elements(g) * size + static_cast<double>(weight.bytes()) +
                       static_cast<double>(g.out_channels) * size;
        w.bytes_written = static_cast<double>(y.bytes());
        w.parallel_items = static_cast<double>(y.numel());
        w.innermost = g.out[1];
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const Window win = sampler.cycle(windows());
        Rng& rng = sampler.rng();
        // As conv_2d: large cases near the regime's lower end, the work capped.
        double total = static_cast<double>(d.target_elements);
        if (total > 3.2e6) total = 3.1e6 * std::pow(total / 3.1e6, 0.2);
        const double macs_cap = 8e7;
        std::int64_t n = sampler.pick(std::vector<std::int64_t>{1, 1, 2, 2, 3, 4});
        std::int64_t c = sampler.pick(std::vector<std::int64_t>{7, 16, 32, 64, 96, 127, 256, 383, 512, 1024, 2048});
        const std::int64_t kk = win.kh * win.kw;
        // About kk / (sh sw) multiply-adds per input element; the cap never pushes a case
        // out of its regime (large keeps at least 3.2e6 elements: at most 8e7 MACs).
        const double macs_per_x = static_cast<double>(kk) / static_cast<double>(win.sh * win.sw);
        total = std::min(total, macs_cap / macs_per_x);
        if (d.regime == Regime::large) total = std::max(total, 3.2e6);
        if (d.regime == Regime::medium) total = std::max(total, 2.2e5);
        total = std::max(total, 1.1e4);
        // Each plane holds the dilated kernel (less the pads) and at least 64 pixels.
        const std::int64_t min_h = std::max<std::int64_t>(1, win.dh * (win.kh - 1) + 1 - 2 * win.ph);
        const std::int64_t min_w = std::max<std::int64_t>(1, win.dw * (win.kw - 1) + 1 - 2 * win.pw);
        const double min_plane = std::max<double>(64, static_cast<double>(min_h * min_w));
        while (static_cast<double>(n * c) * min_plane > total && (n > 1 || c > 1)) {
            if (n > 1) --n;
            else c = std::max<std::int64_t>(1, c / 2);
        }
        const double plane =
            std::max(min_plane, (total - static_cast<double>(c * (kk + 1))) / static_cast<double>(n * c));
        const double aspect = std::exp(rng.uniform(std::log(0.5), std::log(2.0)));
        const std::int64_t h = std::max<std::int64_t>(min_h, std::llround(std::sqrt(plane * aspect)));
        std::int64_t w = std::max<std::int64_t>(min_w, std::llround(plane / static_cast<double>(h)));
        if (w % 2 == 0) w += 1;
        out.inputs.at(0).shapes = {Shape{n, c, h, w}};
        out.inputs.at(1).shapes = {Shape{c, win.kh, win.kw}};
        out.inputs.at(2).shapes = {Shape{c}};
        out.attrs = {{"kernelSize", int_list({win.kh, win.kw})},
                     {"stride", int_list({win.sh, win.sw})},
                     {"padding", int_list({win.ph, win.pw})},
                     {"dilation", int_list({win.dh, win.dw})},
                     {"groups", AttrValue::of_int(c)}};
    }

    // As conv_2d: float16 +-256 (sums of a few products straddle fp16's largest value);
    // float32/bfloat16 +-1e16 (products stay finite in fp32).
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-256, 256} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(DepthwiseConv2dOp)

}  // namespace hb
