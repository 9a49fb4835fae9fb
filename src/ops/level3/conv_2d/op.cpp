// conv_2d(x [N, Cin, H, W], filter [Cout, Cin, Kh, Kw], bias [Cout], strides [sh, sw],
// pads [top, bottom, left, right], dilations [dh, dw] = [1, 1]): 2-D cross-correlation with
// zero padding, NCHW, no groups; y [N, Cout, Ho, Wo] in x's dtype (all three inputs share it).
//   Ho = floor((H + top + bottom - dh (Kh - 1) - 1) / sh) + 1 (Wo likewise)
//   y[n, o, i, j] = bias[o] + sum over c, a, b of x_pad[n, c, i sh + a dh, j sw + b dw] * filter[o, c, a, b]
// Padded taps take part in the products (0 * filter): a non-finite filter tap that meets
// the padding gives NaN there, as PyTorch's convolution does. The golden is im2col over
// hb::dgemm (ops/convolution.hpp); the same-precision reference the same over sgemm (fp32
// accumulation). Asymmetric pads, which the reference benchmark's golden rejects (it passes
// them to PyTorch as a 4-tuple), are computed as the formula says.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/convolution.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

ConvGeometry conv2d_geometry(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    const TensorSpec& filter = p.input("filter").tensors.at(0);
    const TensorSpec& bias = p.input("bias").tensors.at(0);
    if (x.shape.size() != 4)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; it must be 4-D [N, Cin, H, W]");
    if (filter.shape.size() != 4 || filter.shape[1] != x.shape[1])
        throw Error(p.context() + "filter has shape " + shape_to_string(filter.shape) +
                    "; it must be [Cout, Cin, Kh, Kw] with Cin = " + std::to_string(x.shape[1]) + " as in x");
    if (bias.shape != Shape{filter.shape[0]})
        throw Error(p.context() + "bias has shape " + shape_to_string(bias.shape) + "; it must be [Cout] = [" +
                    std::to_string(filter.shape[0]) + "]");
    if (filter.dtype != x.dtype || bias.dtype != x.dtype)
        throw Error(p.context() + "x, filter and bias have dtypes " + std::string(dtype_name(x.dtype)) + ", " +
                    std::string(dtype_name(filter.dtype)) + ", " + std::string(dtype_name(bias.dtype)) +
                    "; they must be equal");
    const auto strides = int_list_attr(p, "strides", 2, "[stride_h, stride_w]");
    const auto pads = int_list_attr(p, "pads", 4, "[top, bottom, left, right]");
    const auto dilations = int_list_attr(p, "dilations", 2, "[dilation_h, dilation_w]");
    ConvGeometry g;
    g.dims = 2;
    g.batch = x.shape[0];
    g.in_channels = x.shape[1];
    g.out_channels = filter.shape[0];
    for (int a = 0; a < 2; ++a) {
        const auto k = static_cast<std::size_t>(a);
        g.in[k] = x.shape[2 + k];
        g.kernel[k] = filter.shape[2 + k];
        g.stride[k] = strides[k];
        g.dilation[k] = dilations[k];
        g.pad_before[k] = pads[2 * k];
        g.pad_after[k] = pads[2 * k + 1];
        g.out[k] = conv_output_size(g.in[k], g.kernel[k], g.stride[k], g.dilation[k], g.pad_before[k], g.pad_after[k]);
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

// One public case's window: kernel, strides, dilations, pads [top, bottom, left, right].
struct Window {
    std::int64_t kh, kw, sh, sw, dh, dw;
    std::int64_t top, bottom, left, right;
};

// Twenty windows, cycled over the cases: every kernel size (1, 3, 5 and non-square), stride
// (1, 2, per axis), dilation (1 to 3, per axis), symmetric pads 0 to 3 and asymmetric pads
// (TF-style SAME for stride 2), and a padded 1x1 (border outputs are bias only, or NaN where
// an infinite filter tap meets the padding).
const std::vector<Window>& windows() {
    static const std::vector<Window> w = {
        {1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, {3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
        {5, 5, 1, 1, 1, 1, 2, 2, 2, 2}, {3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, {3, 3, 1, 1, 3, 3, 3, 3, 3, 3},
        {1, 1, 2, 2, 1, 1, 0, 0, 0, 0}, {5, 5, 2, 2, 1, 1, 2, 2, 2, 2}, {3, 3, 1, 1, 1, 1, 0, 0, 0, 0},
        {5, 5, 1, 1, 2, 2, 1, 1, 1, 1}, {1, 3, 1, 1, 1, 1, 0, 0, 1, 1}, {3, 1, 2, 1, 1, 1, 1, 1, 0, 0},
        {3, 3, 1, 1, 1, 2, 1, 1, 2, 2}, {3, 3, 1, 1, 1, 1, 0, 1, 0, 1}, {3, 3, 2, 2, 1, 1, 0, 1, 0, 1},
        {5, 5, 1, 1, 3, 3, 2, 2, 3, 3}, {3, 5, 1, 2, 1, 1, 1, 1, 2, 2}, {5, 3, 1, 1, 2, 1, 0, 2, 1, 0},
        {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 3, 2, 2, 2, 2, 2, 2, 1, 1},
    };
    return w;
}

}  // namespace

class Conv2dOp final : public OperatorWithCompute<Conv2dOp> {
  public:
    std::string name() const override { return "conv_2d"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "oneDNN convolution_forward (direct algorithm, formats chosen by oneDNN with reorders from and to "
               "NCHW/OIHW, as PyTorch's oneDNN path calls it); float16 or bfloat16 that oneDNN runs only in its "
               "reference kernel (or not at all) on this CPU go through fp32 with one conversion each way, and so "
               "does a float16/bfloat16 x holding inf or NaN (oneDNN's half-precision first-layer kernels pair taps "
               "with zero weights, 0 * inf = NaN). Where a non-finite filter tap meets the zero padding, the outputs "
               "are set to NaN afterwards (oneDNN skips padded taps; the operator multiplies them)";
    }
    // The filter's innermost dim is its width (1 to 5 taps), never 512 bytes.
    bool can_align() const override { return false; }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const ConvGeometry g = conv2d_geometry(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{p.input("x").tensors.at(0).dtype, Shape{g.batch, g.out_channels, g.out[0], g.out[1]}});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const ConvGeometry g = conv2d_geometry(p);
        conv_forward<T>(g, in[0].one().v.data(), in[1].one().v.data(), in[2].one().v.data(), out[0].one().v.data());
    }

    // Formula-literal count (cann-bench convention, issue 15) per output element:
    // Cin * Kh * Kw multiplies and as many additions (the products' sum plus the bias),
    // 2 * Cin * Kh * Kw operations.
    WorkModel work(const Problem& p) const override {
        const ConvGeometry g = conv2d_geometry(p);
        const DType dtype = p.input("x").tensors.at(0).dtype;
        const TensorSpec& filter = p.input("filter").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        WorkModel w;
        // Implicit GEMM: the bias initializes the accumulators, so no vector work is required.
        w.contractions.push_back(conv_forward_contraction(g, dtype));
        const double size = static_cast<double>(dtype_size(dtype));
        w.bytes_read = conv_reachable_input_elements(g) * size + static_cast<double>(filter.bytes()) +
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
        // Large cases are held near the regime's lower end: the convolution's work grows with
        // the input times Cout * Kh * Kw, and every kernel and the golden must stay fast.
        double total = static_cast<double>(d.target_elements);
        if (total > 3.2e6) total = 3.1e6 * std::pow(total / 3.1e6, 0.2);
        const double macs_cap = 1e8;
        std::int64_t n = sampler.pick(std::vector<std::int64_t>{1, 1, 2, 2, 3, 4});
        const std::int64_t kk = win.kh * win.kw;
        std::int64_t cin = sampler.pick(std::vector<std::int64_t>{3, 4, 7, 8, 16, 16, 31, 32, 64, 96, 127, 128, 256, 509});
        std::int64_t cout = sampler.pick(std::vector<std::int64_t>{1, 2, 5, 8, 16, 24, 32, 63, 64, 128, 255, 256, 512});
        // Each image plane must hold the dilated kernel (less the pads) and at least 16 pixels.
        const std::int64_t min_h = std::max<std::int64_t>(1, win.dh * (win.kh - 1) + 1 - win.top - win.bottom);
        const std::int64_t min_w = std::max<std::int64_t>(1, win.dw * (win.kw - 1) + 1 - win.left - win.right);
        const double min_plane = std::max<double>(16, static_cast<double>(min_h * min_w));
        double plane = 1;  // H * W
        // A third or so of the cases are deep layers: the filter holds most of the budget,
        // Cin and Cout of one order, a small plane within the work cap. The others spend
        // the budget on x, which the work cap then leaves few output channels.
        bool deep = rng.uniform01() < 0.4;
        if (deep) {
            const Profile& prof = sampler.profile();
            const double regime_lo = d.regime == Regime::small    ? static_cast<double>(prof.min_elements)
                                     : d.regime == Regime::medium ? static_cast<double>(prof.small_below)
                                                                  : static_cast<double>(prof.medium_below);
            const double budget = std::max(total, regime_lo * 1.12);
            const double ratio = std::exp(rng.uniform(std::log(0.5), std::log(2.0)));  // Cout / Cin
            const double filter = budget * rng.uniform(0.9, 0.98);
            const std::int64_t dcin = std::max<std::int64_t>(1, std::llround(std::sqrt(filter / (ratio * static_cast<double>(kk)))));
            const std::int64_t dcout = std::max<std::int64_t>(1, std::llround(ratio * static_cast<double>(dcin)));
            const std::int64_t dn = std::min<std::int64_t>(n, 2);
            const double positions = macs_cap / static_cast<double>(dcin * dcout * kk);  // N Ho Wo
            const double x_room = budget - static_cast<double>(dcin * dcout * kk + dcout);
            const double dplane = std::min(x_room / static_cast<double>(dn * dcin),
                                           positions / static_cast<double>(dn) * static_cast<double>(win.sh * win.sw));
            if (dplane >= min_plane) cin = dcin, cout = dcout, n = dn, plane = dplane;
            else deep = false;
        }
        for (int round = 0; round < 40 && !deep; ++round) {
            // The filter takes at most 60% of the budget; x the rest.
            if (static_cast<double>(cin * cout * kk) > 0.6 * total && (cin > 1 || cout > 1)) {
                if (cin >= cout) cin = std::max<std::int64_t>(1, cin / 2);
                else cout = std::max<std::int64_t>(1, cout / 2);
                continue;
            }
            const double x_elements = std::max(1.0, total - static_cast<double>(cin * cout * kk + cout));
            plane = x_elements / static_cast<double>(n * cin);
            if (plane < min_plane && (n > 1 || cin > 1)) {
                if (n > 1) --n;
                else cin = std::max<std::int64_t>(1, cin / 2);
                continue;
            }
            const double macs = static_cast<double>(n * cout * kk * cin) * plane / static_cast<double>(win.sh * win.sw);
            if (macs <= macs_cap || cout == 1) break;
            cout = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(cout) * macs_cap / macs));
        }
        plane = std::max(plane, min_plane);
        // H and W near the plane's square root (aspect 1:2 to 2:1), at least the dilated kernel.
        const double aspect = std::exp(rng.uniform(std::log(0.5), std::log(2.0)));
        std::int64_t h = std::max<std::int64_t>(min_h, std::llround(std::sqrt(plane * aspect)));
        std::int64_t w = std::max<std::int64_t>(min_w, std::llround(plane / static_cast<double>(h)));
        if (w % 2 == 0) w += 1;  // odd widths, like the suite's other non-aligned cases
        const DType dtype = d.dtype;
        out.inputs.at(0).shapes = {Shape{n, cin, h, w}};
        out.inputs.at(1).shapes = {Shape{cout, cin, win.kh, win.kw}};
        out.inputs.at(2).shapes = {Shape{cout}};
        for (auto& input : out.inputs) input.dtype = dtype;
        out.attrs = {{"strides", int_list({win.sh, win.sw})},
                     {"pads", int_list({win.top, win.bottom, win.left, win.right})},
                     {"dilations", int_list({win.dh, win.dw})}};
    }

    // float16: +-256, where products (up to 65536) and their sums straddle fp16's largest
    // value, so some outputs overflow to inf and others stay finite (+-65504 would make every
    // product overflow and every output infinite, leaving only cancellations finite).
    // float32/bfloat16: +-1e16, whose products (1e32) and sums stay finite in fp32, the
    // precision every practical kernel accumulates in.
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-256, 256} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(Conv2dOp)

}  // namespace hb
