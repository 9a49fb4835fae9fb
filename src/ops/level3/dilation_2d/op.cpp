// dilation_2d(x, filter, strides, rates, padding_mode = "SAME", pads = [0, 0, 0, 0],
// ceil_mode = false, data_format = "NHWC"): grey-scale morphological dilation (TensorFlow's
// dilation2d), float16.
//   NHWC: x [B, H, W, C], filter [fh, fw, C], y [B, Ho, Wo, C], strides [1, sh, sw, 1],
//         rates [1, rh, rw, 1];
//   NCHW: x [B, C, H, W], filter [C, fh, fw], y [B, C, Ho, Wo], strides [1, 1, sh, sw],
//         rates [1, 1, rh, rw] (strides and rates follow the data format's axis order; their
//         batch and channel entries must be 1).
//   eff_h = (fh - 1) rh + 1 (eff_w likewise).
//   SAME: Ho = ceil(H / sh), pad_h = max((Ho - 1) sh + eff_h - H, 0), top = floor(pad_h / 2),
//         bottom = pad_h - top (TensorFlow); VALID: no padding, Ho = floor((H - eff_h) / sh) + 1;
//   EXPLICIT: pads = [top, bottom, left, right], Ho = floor((H + top + bottom - eff_h) / sh) + 1,
//         or with ceil_mode the ceiling, less one if the last window would start in the bottom
//         padding (PyTorch's pooling rule); taps past the padded input read the padding.
//   y[b, i, j, c] = max over a < fh, e < fw of (x_pad[b, i sh + a rh, j sw + e rw, c] + filter[a, e, c])
// The padding value is -inf, added to the filter like any x (so a +inf filter tap on the
// border gives -inf + inf = NaN); the maximum propagates NaN. ceil_mode applies only to
// EXPLICIT (the reference benchmark's golden ignores it under SAME, as here); pads must be 0
// unless padding_mode is EXPLICIT (its golden fails with a shape error otherwise). fp64
// golden; the same-precision reference sums in fp32.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/convolution.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

struct DilationGeometry {
    bool nchw = false;
    std::int64_t batch = 1, channels = 1, h = 1, w = 1, fh = 1, fw = 1;
    std::int64_t sh = 1, sw = 1, rh = 1, rw = 1;
    std::int64_t top = 0, left = 0;  // padding before; bottom/right only shape the output
    std::int64_t oh = 1, ow = 1;
};

// Output size and leading pad along one axis.
void axis_geometry(const Problem& p, const std::string& mode, bool ceil_mode, std::int64_t in, std::int64_t eff,
                   std::int64_t stride, std::int64_t pad_before, std::int64_t pad_after, std::int64_t& out,
                   std::int64_t& lead) {
    if (mode == "SAME") {
        out = (in + stride - 1) / stride;
        const std::int64_t pad = std::max<std::int64_t>((out - 1) * stride + eff - in, 0);
        lead = pad / 2;
        return;
    }
    const std::int64_t padded = in + (mode == "EXPLICIT" ? pad_before + pad_after : 0);
    lead = mode == "EXPLICIT" ? pad_before : 0;
    if (padded < eff)
        throw Error(p.context() + "an input axis of " + std::to_string(in) + " (" + std::to_string(padded) +
                    " with pads) is shorter than the dilated filter (" + std::to_string(eff) + ")");
    out = (padded - eff) / stride + 1;
    if (mode == "EXPLICIT" && ceil_mode) {
        out = (padded - eff + stride - 1) / stride + 1;
        if ((out - 1) * stride >= in + pad_before) --out;
    }
}

DilationGeometry dilation_geometry(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    const TensorSpec& filter = p.input("filter").tensors.at(0);
    DilationGeometry g;
    const std::string format = p.attr_string("data_format");
    if (format != "NHWC" && format != "NCHW")
        throw Error(p.context() + "data_format is \"" + format + "\"; it must be \"NHWC\" or \"NCHW\"");
    g.nchw = format == "NCHW";
    const std::string layout = g.nchw ? "[B, C, H, W]" : "[B, H, W, C]";
    if (x.shape.size() != 4)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; it must be 4-D " + layout);
    g.batch = x.shape[0];
    g.channels = g.nchw ? x.shape[1] : x.shape[3];
    g.h = g.nchw ? x.shape[2] : x.shape[1];
    g.w = g.nchw ? x.shape[3] : x.shape[2];
    const bool filter_ok = filter.shape.size() == 3 && (g.nchw ? filter.shape[0] : filter.shape[2]) == g.channels;
    if (!filter_ok)
        throw Error(p.context() + "filter has shape " + shape_to_string(filter.shape) + "; with data_format " + format +
                    " it must be " + (g.nchw ? "[C, fh, fw]" : "[fh, fw, C]") + " with C = " + std::to_string(g.channels));
    if (filter.dtype != x.dtype)
        throw Error(p.context() + "x has dtype " + std::string(dtype_name(x.dtype)) + " and filter " +
                    std::string(dtype_name(filter.dtype)) + "; they must be equal");
    g.fh = g.nchw ? filter.shape[1] : filter.shape[0];
    g.fw = g.nchw ? filter.shape[2] : filter.shape[1];
    if (g.batch < 1 || g.channels < 1 || g.h < 1 || g.w < 1 || g.fh < 1 || g.fw < 1)
        throw Error(p.context() + "x " + shape_to_string(x.shape) + " and filter " + shape_to_string(filter.shape) +
                    " must have no empty dimension");
    const std::string order = g.nchw ? "[1, 1, h, w]" : "[1, h, w, 1]";
    const auto strides = int_list_attr(p, "strides", 4, order);
    const auto rates = int_list_attr(p, "rates", 4, order);
    const std::size_t ah = g.nchw ? 2 : 1, aw = ah + 1;
    for (std::size_t k = 0; k < 4; ++k)
        if (k != ah && k != aw && (strides[k] != 1 || rates[k] != 1))
            throw Error(p.context() + "strides " + p.attr("strides").to_string() + " and rates " +
                        p.attr("rates").to_string() + " must be " + order + " for data_format " + format +
                        ": the batch and channel entries must be 1");
    g.sh = strides[ah], g.sw = strides[aw], g.rh = rates[ah], g.rw = rates[aw];
    if (g.sh < 1 || g.sw < 1 || g.rh < 1 || g.rw < 1)
        throw Error(p.context() + "strides " + p.attr("strides").to_string() + " and rates " + p.attr("rates").to_string() +
                    " must be at least 1");
    const std::string mode = p.attr_string("padding_mode");
    if (mode != "SAME" && mode != "VALID" && mode != "EXPLICIT")
        throw Error(p.context() + "padding_mode is \"" + mode + "\"; it must be \"SAME\", \"VALID\" or \"EXPLICIT\"");
    const auto pads = int_list_attr(p, "pads", 4, "[top, bottom, left, right]");
    for (std::int64_t v : pads)
        if (v < 0) throw Error(p.context() + "pads " + p.attr("pads").to_string() + " must be non-negative");
    if (mode != "EXPLICIT" && std::any_of(pads.begin(), pads.end(), [](std::int64_t v) { return v != 0; }))
        throw Error(p.context() + "pads is " + p.attr("pads").to_string() + " with padding_mode " + mode +
                    "; explicit pads need padding_mode \"EXPLICIT\"");
    const bool ceil_mode = p.attr_bool("ceil_mode");
    axis_geometry(p, mode, ceil_mode, g.h, (g.fh - 1) * g.rh + 1, g.sh, pads[0], pads[1], g.oh, g.top);
    axis_geometry(p, mode, ceil_mode, g.w, (g.fw - 1) * g.rw + 1, g.sw, pads[2], pads[3], g.ow, g.left);
    return g;
}

AttrValue int_list(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

struct Variant {
    std::int64_t fh, fw, sh, sw, rh, rw;
    const char* mode;
    std::array<std::int64_t, 4> pads;
    bool ceil_mode;
    bool nchw;
};

// Twenty variants, cycled over the cases: 1x1 to 5x5 filters (even and non-square ones give
// asymmetric SAME pads), strides 1 and 2, rates 1 to 4 (per axis), SAME, VALID and EXPLICIT
// (symmetric, asymmetric, ceil_mode), both data formats.
const std::vector<Variant>& variants() {
    static const std::vector<Variant> v = {
        {3, 3, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, false, false},  {3, 3, 2, 2, 1, 1, "SAME", {0, 0, 0, 0}, true, false},
        {3, 3, 1, 1, 2, 2, "SAME", {0, 0, 0, 0}, false, true},   {5, 5, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, false, false},
        {3, 3, 1, 1, 1, 1, "VALID", {0, 0, 0, 0}, false, false}, {3, 3, 2, 2, 2, 2, "VALID", {0, 0, 0, 0}, false, true},
        {2, 2, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, false, false},  {3, 3, 1, 1, 4, 4, "SAME", {0, 0, 0, 0}, false, false},
        {3, 3, 1, 1, 1, 1, "EXPLICIT", {1, 1, 1, 1}, false, false}, {3, 3, 2, 2, 1, 1, "EXPLICIT", {0, 1, 1, 0}, true, true},
        {1, 1, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, false, false},  {3, 2, 1, 2, 1, 3, "SAME", {0, 0, 0, 0}, false, true},
        {3, 3, 2, 1, 3, 1, "SAME", {0, 0, 0, 0}, false, false},  {5, 3, 1, 1, 1, 2, "VALID", {0, 0, 0, 0}, false, false},
        {3, 3, 1, 1, 2, 1, "EXPLICIT", {2, 2, 1, 1}, false, false}, {3, 3, 2, 2, 1, 1, "EXPLICIT", {1, 1, 1, 1}, true, false},
        {3, 3, 1, 1, 3, 3, "SAME", {0, 0, 0, 0}, true, true},    {3, 3, 2, 2, 1, 1, "SAME", {0, 0, 0, 0}, false, false},
        {5, 5, 2, 2, 1, 1, "VALID", {0, 0, 0, 0}, false, false}, {3, 3, 1, 1, 2, 2, "EXPLICIT", {2, 2, 2, 2}, false, true},
    };
    return v;
}

}  // namespace

class Dilation2dOp final : public OperatorWithCompute<Dilation2dOp> {
  public:
    std::string name() const override { return "dilation_2d"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "plain C++ with OpenMP over output rows, fp16 computed in fp32 (exact for one addition of two fp16 "
               "values up to rounding) and vectorized over channels (NHWC) or output columns (NCHW): oneDNN has no "
               "morphological (max-plus) dilation";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const DilationGeometry g = dilation_geometry(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{p.input("x").tensors.at(0).dtype,
                                       g.nchw ? Shape{g.batch, g.channels, g.oh, g.ow} : Shape{g.batch, g.oh, g.ow, g.channels}});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const DilationGeometry g = dilation_geometry(p);
        const auto& x = in[0].one().v;
        const auto& f = in[1].one().v;
        auto& y = out[0].one().v;
        const T pad = -std::numeric_limits<T>::infinity();
        const std::int64_t rows = g.batch * g.oh;
#pragma omp parallel for schedule(static) if (rows * g.ow * g.channels >= 4096)
        for (std::int64_t row = 0; row < rows; ++row) {
            const std::int64_t b = row / g.oh, i = row % g.oh;
            for (std::int64_t j = 0; j < g.ow; ++j)
                for (std::int64_t c = 0; c < g.channels; ++c) {
                    T best = -std::numeric_limits<T>::infinity();
                    bool nan = false;
                    for (std::int64_t a = 0; a < g.fh; ++a) {
                        const std::int64_t hi = i * g.sh + a * g.rh - g.top;
                        for (std::int64_t e = 0; e < g.fw; ++e) {
                            const std::int64_t wi = j * g.sw + e * g.rw - g.left;
                            const bool inside = hi >= 0 && hi < g.h && wi >= 0 && wi < g.w;
                            const T xv = !inside ? pad
                                         : g.nchw ? x[static_cast<std::size_t>(((b * g.channels + c) * g.h + hi) * g.w + wi)]
                                                  : x[static_cast<std::size_t>(((b * g.h + hi) * g.w + wi) * g.channels + c)];
                            const T fv = g.nchw ? f[static_cast<std::size_t>((c * g.fh + a) * g.fw + e)]
                                                : f[static_cast<std::size_t>((a * g.fw + e) * g.channels + c)];
                            const T v = xv + fv;
                            if (std::isnan(v)) nan = true;
                            else if (v > best) best = v;
                        }
                    }
                    const T result = nan ? std::numeric_limits<T>::quiet_NaN() : best;
                    const std::int64_t at = g.nchw ? ((b * g.channels + c) * g.oh + i) * g.ow + j
                                                   : ((b * g.oh + i) * g.ow + j) * g.channels + c;
                    y[static_cast<std::size_t>(at)] = result;
                }
        }
    }

    // Formula-literal count (cann-bench convention, issue 15) per output element: fh * fw
    // additions and fh * fw - 1 maximums (an elementary operation each), 2 fh fw - 1.
    WorkModel work(const Problem& p) const override {
        const DilationGeometry g = dilation_geometry(p);
        const DType dtype = p.input("x").tensors.at(0).dtype;
        const TensorSpec& filter = p.input("filter").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        WorkModel w;
        const double size = static_cast<double>(dtype_size(dtype));
        const double rows_read = static_cast<double>(conv_reachable_positions(g.h, g.oh, g.fh, g.sh, g.rh, g.top));
        const double cols_read = static_cast<double>(conv_reachable_positions(g.w, g.ow, g.fw, g.sw, g.rw, g.left));
        w.bytes_read = static_cast<double>(g.batch * g.channels) * rows_read * cols_read * size +
                       static_cast<double>(filter.bytes());
        w.bytes_written = static_cast<double>(y.bytes());
        const double taps = static_cast<double>(y.numel()) * static_cast<double>(g.fh * g.fw);
        // One addition per tap and a running maximum (one max instruction, charged as a
        // compare; a kernel that lets NaN through needs no more than that per lane).
        w.add_vector(OpClass::add, dtype, taps);
        w.add_vector(OpClass::cmp, dtype, taps);
        w.add_vector_io(dtype, static_cast<double>(y.numel()) + w.bytes_read / size);
        // cann-bench (docs/hap.md): per output, fh fw additions and fh fw - 1 maximums.
        const double taps_per_output = static_cast<double>(g.fh * g.fw);
        add_formula(w, dtype, FormulaMath::in_fp32, static_cast<double>(y.numel()),
                    {{OpClass::add, taps_per_output}, {OpClass::cmp, taps_per_output - 1}});
        w.parallel_items = static_cast<double>(y.numel());
        w.innermost = y.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        Variant v = sampler.cycle(variants());
        Rng& rng = sampler.rng();
        if (d.aligned) v.nchw = false;  // aligned: NHWC with 256 or 512 channels (512 or 1024 bytes)
        // Large cases near the regime's lower end, and at most about 4e7 taps (outputs times
        // filter size) in every case, but never out of the drawn regime.
        double total = static_cast<double>(d.target_elements);
        if (total > 3.2e6) total = 3.1e6 * std::pow(total / 3.1e6, 0.2);
        const double taps_per_input = static_cast<double>(v.fh * v.fw) / static_cast<double>(v.sh * v.sw);
        const double floor_total = d.regime == Regime::large ? 3.2e6 : d.regime == Regime::medium ? 2.2e5 : 1.1e4;
        total = std::max(std::min(total, 4e7 / taps_per_input), floor_total);
        std::int64_t c;
        if (d.aligned) c = sampler.pick(std::vector<std::int64_t>{256, 256, 512});
        else c = sampler.pick(std::vector<std::int64_t>{3, 17, 31, 63, 64, 127, 129, 255, 509});
        std::int64_t b = sampler.pick(std::vector<std::int64_t>{1, 2, 3, 4, 7});
        const std::int64_t eff_h = (v.fh - 1) * v.rh + 1, eff_w = (v.fw - 1) * v.rw + 1;
        const double min_plane = static_cast<double>(std::max<std::int64_t>(eff_h, 4) * std::max<std::int64_t>(eff_w, 4));
        while (static_cast<double>(b * c) * min_plane > total && b > 1) --b;
        while (!d.aligned && static_cast<double>(b * c) * min_plane > total && c > 3) c = c / 2 | 1;
        const double plane = std::max(min_plane, (total - static_cast<double>(v.fh * v.fw * c)) / static_cast<double>(b * c));
        const double aspect = std::exp(rng.uniform(std::log(0.5), std::log(2.0)));
        const std::int64_t h = std::max<std::int64_t>(std::max<std::int64_t>(eff_h, 4), std::llround(std::sqrt(plane * aspect)));
        std::int64_t w = std::max<std::int64_t>(std::max<std::int64_t>(eff_w, 4), std::llround(plane / static_cast<double>(h)));
        if (v.nchw && w % 2 == 0) w += 1;  // NCHW's innermost dim is W: odd, never aligned
        out.inputs.at(0).shapes = {v.nchw ? Shape{b, c, h, w} : Shape{b, h, w, c}};
        out.inputs.at(1).shapes = {v.nchw ? Shape{c, v.fh, v.fw} : Shape{v.fh, v.fw, c}};
        const std::vector<std::int64_t> strides = v.nchw ? std::vector<std::int64_t>{1, 1, v.sh, v.sw}
                                                         : std::vector<std::int64_t>{1, v.sh, v.sw, 1};
        const std::vector<std::int64_t> rates = v.nchw ? std::vector<std::int64_t>{1, 1, v.rh, v.rw}
                                                       : std::vector<std::int64_t>{1, v.rh, v.rw, 1};
        out.attrs = {{"strides", int_list(strides)},
                     {"rates", int_list(rates)},
                     {"padding_mode", AttrValue::of_string(v.mode)},
                     {"pads", int_list({v.pads[0], v.pads[1], v.pads[2], v.pads[3]})},
                     {"ceil_mode", AttrValue::of_bool(v.ceil_mode)},
                     {"data_format", AttrValue::of_string(v.nchw ? "NCHW" : "NHWC")}};
    }
};

HB_REGISTER_OPERATOR(Dilation2dOp)

}  // namespace hb
