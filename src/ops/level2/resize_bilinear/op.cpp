// resize_bilinear(x [N, C, H, W], output_size=None, align_corners=false, scale_factor=None):
// torch.nn.functional.interpolate(x, size=output_size, scale_factor=scale_factor,
// mode="bilinear", align_corners=align_corners) with recompute_scale_factor=None; y is
// [N, C, Ho, Wo] in x's dtype. Exactly one of output_size and scale_factor is given.
//   output size: output_size, or floor(in * scale_factor) per dim (the product in fp64).
//   scale (fp32), per dim: align_corners ? (out > 1 ? (in - 1) / (out - 1) : 0)
//                          : scale_factor given ? (float)(1.0 / scale_factor) : in / out.
//   source coordinate (fp32): align_corners ? scale * o : max(scale * (o + 0.5) - 0.5, 0).
//   i0 = min(floor(source), in - 1), i1 = i0 + (i0 < in - 1), l1 = clamp(source - i0, 0, 1),
//   l0 = 1 - l1; when out == in along a dim (a copy) i0 = i1 = o, l0 = 1, l1 = 0.
//   y = (x[i0h, i0w] * l0w + x[i0h, i1w] * l1w) * l0h + (x[i1h, i0w] * l0w + x[i1h, i1w] * l1w) * l1h.
// These are PyTorch's CPU formulas step by step (upsample_bilinear2d with its
// area_pixel_compute_scale / compute_source_index_and_lambda). The golden evaluates them in
// fp64 throughout, coordinates included; the same-precision reference computes the
// coordinates and lambdas in fp32 as PyTorch does, so its error counts include the fp32
// coordinate rounding (up to an ulp of the source coordinate, 1.2e-4 at 1000, times the
// step between neighbours) that every fp32 kernel has in some form (fused or not, 1 / s or
// in / out). A weight of exactly 0 still multiplies its element, so an infinite element
// there gives NaN, as in PyTorch; cases with infinite values therefore use scale ratios
// whose coordinates are exact in fp32 (see sample_case), where every kernel agrees on which
// weights are 0.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

struct ResizeGeometry {
    std::int64_t n = 1, c = 1, h = 1, w = 1;  // x
    std::int64_t oh = 1, ow = 1;              // y
    bool align_corners = false;
    bool by_scale = false;                    // scale_factor given (else output_size)
    double scale_h = 0, scale_w = 0;          // scale_factor, when given
};

// A list attribute's two values, or an empty vector for None. Integer lists come as ints;
// "[2.0, 2.0]" comes as floats whatever the declared type.
std::vector<double> pair_attr(const Problem& p, const std::string& name) {
    const AttrValue& a = p.attr(name);
    std::vector<double> v;
    if (a.type == AttrType::none) return v;
    if (a.type == AttrType::int_list)
        for (std::int64_t i : a.ints) v.push_back(static_cast<double>(i));
    else if (a.type == AttrType::float_list)
        v = a.floats;
    else
        throw Error(p.context() + name + " is " + a.to_string() + "; it must be a list of two numbers or None");
    if (v.size() != 2)
        throw Error(p.context() + name + " is " + a.to_string() + "; it must list two values, [height, width]");
    return v;
}

ResizeGeometry resize_geometry(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    if (x.shape.size() != 4)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; it must be 4-D [N, C, H, W]");
    ResizeGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3]};
    if (g.h < 1 || g.w < 1)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; H and W must be at least 1");
    g.align_corners = p.attr_bool("align_corners");
    const std::vector<double> size = pair_attr(p, "output_size");
    const std::vector<double> scale = pair_attr(p, "scale_factor");
    if (size.empty() == scale.empty())
        throw Error(p.context() + "exactly one of output_size and scale_factor must be given (got " +
                    (size.empty() ? "neither" : "both") + ")");
    if (!size.empty()) {
        for (double s : size)
            if (!(s >= 1) || std::nearbyint(s) != s)
                throw Error(p.context() + "output_size is " + p.attr("output_size").to_string() +
                            "; its sizes must be positive integers");
        g.oh = static_cast<std::int64_t>(size[0]);
        g.ow = static_cast<std::int64_t>(size[1]);
        return g;
    }
    for (double s : scale)
        if (!(s > 0) || !std::isfinite(s))
            throw Error(p.context() + "scale_factor is " + p.attr("scale_factor").to_string() +
                        "; its factors must be positive and finite");
    g.by_scale = true;
    g.scale_h = scale[0];
    g.scale_w = scale[1];
    // PyTorch: floor(float(in) * scale) in double precision.
    const double oh = std::floor(static_cast<double>(g.h) * g.scale_h);
    const double ow = std::floor(static_cast<double>(g.w) * g.scale_w);
    if (oh < 1 || ow < 1)
        throw Error(p.context() + "scale_factor " + p.attr("scale_factor").to_string() + " on x of shape " +
                    shape_to_string(x.shape) + " gives an empty output (" + std::to_string(static_cast<long long>(oh)) +
                    " x " + std::to_string(static_cast<long long>(ow)) + ")");
    g.oh = static_cast<std::int64_t>(oh);
    g.ow = static_cast<std::int64_t>(ow);
    return g;
}

// The two source indices and their weights of each output index along one dim.
template <typename C>
struct AxisTaps {
    std::vector<std::int64_t> i0, i1;
    std::vector<C> l0, l1;
};

// PyTorch's area_pixel_compute_scale, compute_source_index_and_lambda and
// guard_index_and_lambda, in C: float for the same-precision reference (what PyTorch
// computes for float, half and bfloat16 inputs, each operation rounded on its own; volatile
// keeps the compiler from fusing the multiply and the subtraction), double for the golden.
template <typename C>
AxisTaps<C> axis_taps(std::int64_t in, std::int64_t out, bool align_corners, bool by_scale, double scale_factor) {
    AxisTaps<C> t;
    t.i0.resize(static_cast<std::size_t>(out));
    t.i1.resize(static_cast<std::size_t>(out));
    t.l0.resize(static_cast<std::size_t>(out));
    t.l1.resize(static_cast<std::size_t>(out));
    C scale;
    if (align_corners) scale = out > 1 ? static_cast<C>(in - 1) / static_cast<C>(out - 1) : C(0);
    else if (by_scale) scale = static_cast<C>(1.0 / scale_factor);
    else scale = static_cast<C>(in) / static_cast<C>(out);
    for (std::int64_t o = 0; o < out; ++o) {
        const auto k = static_cast<std::size_t>(o);
        if (in == out) {  // a copy along this dim
            t.i0[k] = t.i1[k] = o;
            t.l0[k] = 1;
            t.l1[k] = 0;
            continue;
        }
        C source;
        if (align_corners) {
            source = scale * static_cast<C>(o);
        } else {
            volatile C product = scale * (static_cast<C>(o) + C(0.5));
            source = product - C(0.5);
            if (source < 0) source = 0;
        }
        const std::int64_t i0 = std::min(static_cast<std::int64_t>(std::floor(source)), in - 1);
        const C l1 = std::min(std::max(source - static_cast<C>(i0), C(0)), C(1));
        t.i0[k] = i0;
        t.i1[k] = i0 + (i0 < in - 1 ? 1 : 0);
        t.l1[k] = l1;
        t.l0[k] = 1 - l1;
    }
    return t;
}

}  // namespace

class ResizeBilinearOp final : public OperatorWithCompute<ResizeBilinearOp> {
  public:
    std::string name() const override { return "resize_bilinear"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "oneDNN resampling_forward (resampling_linear, jit:avx2) where its coordinates are PyTorch's: "
               "align_corners=false with output_size, or with a scale_factor whose output size is exact "
               "(in * scale an integer, so 1 / scale = in / out); float16/bfloat16 widened to fp32 in the "
               "workspace and narrowed back (oneDNN 2.6 has no f16/bf16 resampling without AVX-512). Otherwise "
               "plain C++ with OpenMP over output rows, taps and weights computed once per row and column, "
               "fp16/bf16 in fp32: oneDNN has no align_corners mode and always maps by in / out, which differs "
               "from PyTorch's 1 / scale_factor when in * scale is not an integer";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const ResizeGeometry g = resize_geometry(p);
        const TensorSpec& x = p.input("x").tensors.at(0);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{x.dtype, Shape{g.n, g.c, g.oh, g.ow}});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const ResizeGeometry g = resize_geometry(p);
        const AxisTaps<T> th = axis_taps<T>(g.h, g.oh, g.align_corners, g.by_scale, g.scale_h);
        const AxisTaps<T> tw = axis_taps<T>(g.w, g.ow, g.align_corners, g.by_scale, g.scale_w);
        const auto& x = in[0].one().v;
        auto& y = out[0].one().v;
        const std::int64_t planes = g.n * g.c;
#pragma omp parallel for schedule(static) if (planes * g.oh >= 64)
        for (std::int64_t row = 0; row < planes * g.oh; ++row) {
            const std::int64_t plane = row / g.oh;
            const auto oy = static_cast<std::size_t>(row % g.oh);
            const T* r0 = x.data() + (plane * g.h + th.i0[oy]) * g.w;
            const T* r1 = x.data() + (plane * g.h + th.i1[oy]) * g.w;
            const T h0 = th.l0[oy], h1 = th.l1[oy];
            T* yr = y.data() + row * g.ow;
            for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                const auto k = static_cast<std::size_t>(ox);
                const std::int64_t a = tw.i0[k], b = tw.i1[k];
                const T w0 = tw.l0[k], w1 = tw.l1[k];
                const T top = r0[a] * w0 + r0[b] * w1;
                const T bottom = r1[a] * w0 + r1[b] * w1;
                yr[ox] = top * h0 + bottom * h1;
            }
        }
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& x = p.input("x").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        WorkModel w;
        // x read once and y written once: a kernel walking the output rows in order keeps the
        // two input rows it interpolates (and the next ones) in cache, so every input byte
        // comes from memory once, even when downsampling skips rows (a skipped row is not read
        // at all; the model counts all of x, the bound for factors down to 1/2 per dim).
        w.bytes_read = static_cast<double>(x.bytes());
        w.bytes_written = static_cast<double>(y.bytes());
        const double outputs = static_cast<double>(y.numel());
        // Per output value 4 taps: one multiply and three FMAs in fp32 (the weights of a row
        // and a column are computed once per row/column and amortized over N * C planes and
        // the other axis, so they are left out). fp16/bf16 are widened once per input element
        // (a kernel converts the cached rows, not every tap) and narrowed once per output.
        w.add_vector(OpClass::mul, DType::f32, outputs);
        w.add_vector(OpClass::fma, DType::f32, 3 * outputs);
        if (x.dtype != DType::f32) {
            w.add_vector(OpClass::cast, x.dtype, static_cast<double>(x.numel()));
            w.add_vector(OpClass::cast, x.dtype, outputs);
        }
        // cann-bench (docs/hap.md), bilinear interpolation as written, in fp32 for half inputs (the
        // reference's ResizeBilinear computes in float32 and casts its result). Per output value
        // 4 taps (moves), 4 weighted terms (mul) summed (3 add); per output location the 4
        // weights (2 complements, 4 mul); per output row and column the source coordinate
        // (mul, add), its floor (cast) and fraction (add).
        const double rows = static_cast<double>(y.shape[2]), cols = static_cast<double>(y.shape[3]);
        add_formula(w, x.dtype, FormulaMath::in_fp32, outputs, {{OpClass::select, 4}, {OpClass::mul, 4}, {OpClass::add, 3}});
        add_formula_terms(w, x.dtype, FormulaMath::in_fp32, rows * cols, {{OpClass::add, 2}, {OpClass::mul, 4}});
        add_formula_terms(w, x.dtype, FormulaMath::in_fp32, rows + cols,
                          {{OpClass::mul, 1}, {OpClass::add, 2}, {OpClass::cast, 1}});
        w.parallel_items = static_cast<double>(y.shape[0] * y.shape[1] * y.shape[2]);  // output rows
        w.innermost = y.shape.back();
        return w;
    }

    // The 20 cases cycle through every (path, align_corners, direction) triple: output_size
    // or scale_factor, align_corners false or true, and upsampling, downsampling or one of
    // each (H up and W down, or the reverse): 12 triples, each met at least once. Factors are
    // mostly non-integer (1.5, 0.75, 0.6, 2.5, ...); output_size cases use in * factor
    // rounded, so that in / out is rarely a round number either. Output sizes never equal
    // input sizes (PyTorch copies along such a dim, a special case left to the unit tests).
    // Cases with infinite values take exact ratios instead (see exact_axis).
    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        struct Variant {
            bool by_scale;
            bool align;
            int direction;  // 0 up, 1 down, 2 mixed
        };
        std::vector<Variant> variants;
        for (int direction : {0, 1, 2})
            for (bool by_scale : {false, true})
                for (bool align : {false, true}) variants.push_back({by_scale, align, direction});
        const Variant v = sampler.cycle(variants);
        bool up_h = v.direction == 0, up_w = v.direction == 0;
        if (v.direction == 2) {
            up_h = sampler.rng().uniform01() < 0.5;
            up_w = !up_h;
        }
        const std::vector<double> ups = {2.0, 1.5, 2.5, 3.0, 1.25, 1.75, 4.0 / 3.0};
        const std::vector<double> downs = {0.5, 0.75, 0.6, 0.4, 0.25, 0.3, 0.8};
        const bool infinite = d.range_group == RangeGroup::special_inf;
        const double fh = infinite ? (up_h ? 2.0 : 0.5) : sampler.pick(up_h ? ups : downs);
        const double fw = infinite ? (up_w ? 2.0 : 0.5) : sampler.pick(up_w ? ups : downs);

        // The output (fh * fw times the input) is capped at 3.2e7 values, so that the timed
        // runs of an upsampling case fit the time budget; factors of at most 3 per dim keep a
        // large case's input above 3.5e6 values, in the large regime.
        const double budget = std::min(static_cast<double>(d.target_elements), 3.2e7 / (fh * fw));
        // Planes of at least 8 rows of 8 values, or of one aligned row length.
        const std::int64_t align_elements = 512 / static_cast<std::int64_t>(dtype_size(d.dtype));
        const double min_plane = 8.0 * static_cast<double>(d.aligned ? align_elements : 8);
        std::int64_t n = sampler.pick(std::vector<std::int64_t>{1, 1, 2, 3, 4});
        std::int64_t c = sampler.pick(std::vector<std::int64_t>{1, 3, 4, 8, 16, 32, 64});
        while (n * c > 1 && budget / static_cast<double>(n * c) < min_plane) {
            if (c > 1) c /= 2;
            else n = 1;
        }
        const double plane = std::max(min_plane, budget / static_cast<double>(n * c));
        const double aspect = sampler.rng().uniform(0.5, 2.0);  // H / W
        std::int64_t wdim = std::max<std::int64_t>(8, std::llround(std::sqrt(plane / aspect)));
        if (d.aligned) wdim = std::max<std::int64_t>(1, std::llround(static_cast<double>(wdim) / static_cast<double>(align_elements))) * align_elements;
        else if (wdim % 2 == 0) wdim += 1;  // odd: never a multiple of 512 bytes
        std::int64_t hdim = std::max<std::int64_t>(8, std::llround(plane / static_cast<double>(wdim)));

        Axis ah, aw;
        if (infinite) {
            ah = exact_axis(sampler, hdim, up_h, v.align, v.by_scale, 1);
            aw = exact_axis(sampler, wdim, up_w, v.align, v.by_scale, d.aligned ? align_elements : 1);
        } else {
            ah = fitted_axis(hdim, fh, v.by_scale);
            aw = fitted_axis(wdim, fw, v.by_scale);
        }
        out.inputs.at(0).shapes = {Shape{n, c, ah.in, aw.in}};
        AttrMap attrs = {{"align_corners", AttrValue::of_bool(v.align)}};
        AttrValue list;
        if (v.by_scale) {
            list.type = AttrType::float_list;
            list.floats = {ah.scale, aw.scale};
            attrs["scale_factor"] = list;
        } else {
            list.type = AttrType::int_list;
            list.ints = {ah.out, aw.out};
            attrs["output_size"] = list;
        }
        out.attrs = attrs;
    }

  private:
    struct Axis {
        std::int64_t in = 1, out = 1;
        double scale = 1;  // scale_factor, for the scale_factor path
    };

    // A finite-valued case: the input size as drawn, the output size in * factor (floor for
    // scale_factor, as PyTorch; rounded and moved off the input size for output_size).
    static Axis fitted_axis(std::int64_t in, double factor, bool by_scale) {
        Axis a{in, 0, factor};
        if (by_scale) {
            a.out = static_cast<std::int64_t>(std::floor(static_cast<double>(in) * factor));
        } else {
            a.out = std::max<std::int64_t>(1, std::llround(static_cast<double>(in) * factor));
            if (a.out == in) a.out += factor > 1 ? 1 : -1;
        }
        return a;
    }

    // A case with infinite values: which weights are exactly 0 must not depend on how a kernel
    // rounds its fp32 coordinates (an infinite element times weight 0 is NaN, and NaN
    // positions must match exactly). The ratio that maps output to input coordinates is made
    // exact in fp32 and fp64 alike: in / out (or 1 / scale_factor) of 2, 4 or 1/2 with
    // align_corners false; (in - 1) / (out - 1) of 1/2 (up) or 3 or 5 (down) with
    // align_corners true, whose scale_factor is then (out + 0.5) / in (floor gives out; the
    // coordinates ignore it). Every coordinate is then a short binary fraction, computed
    // exactly however the kernel orders or fuses its operations. `multiple`: the input size
    // must stay a multiple of it (an aligned W).
    static Axis exact_axis(CaseSampler& sampler, std::int64_t target, bool up, bool align, bool by_scale,
                           std::int64_t multiple) {
        Axis a;
        if (!align) {
            const std::int64_t step = up ? 1 : sampler.pick(std::vector<std::int64_t>{2, 4});  // in / out, down
            const std::int64_t grow = up ? 2 : 1;                                                // out / in, up
            const std::int64_t unit = std::lcm(step, multiple);
            a.in = std::max<std::int64_t>(1, std::llround(static_cast<double>(target) / static_cast<double>(unit))) * unit;
            a.out = a.in * grow / step;
            a.scale = static_cast<double>(grow) / static_cast<double>(step);
            return a;
        }
        if (up) {
            const std::int64_t grow = 2;
            a.in = std::max<std::int64_t>(multiple, target / multiple * multiple);
            if (a.in < 2) a.in = 2;
            a.out = (a.in - 1) * grow + 1;
        } else {
            const std::int64_t step = sampler.pick(std::vector<std::int64_t>{3, 5});
            // in - 1 a multiple of step, in a multiple of `multiple`.
            a.in = std::max<std::int64_t>(multiple, target / multiple * multiple);
            while ((a.in - 1) % step != 0 || a.in - 1 < 2 * step) a.in += multiple;
            a.out = (a.in - 1) / step + 1;
        }
        a.scale = (static_cast<double>(a.out) + 0.5) / static_cast<double>(a.in);
        return a;
    }
};

HB_REGISTER_OPERATOR(ResizeBilinearOp)

}  // namespace hb
