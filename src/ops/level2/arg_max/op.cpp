// arg_max(input, dim, keepdim=false): int64 index of the maximum of each slice along dim, as
// torch.argmax on the CPU: among equal maxima the FIRST occurrence; a NaN counts as larger
// than every number, so a slice holding NaN gives the index of its first NaN. The output is
// the input's shape with dim removed (keepdim: kept with size 1); it is compared exactly.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "ops/axis_view.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// int64 values beyond +-2^53 collide in the fp64 golden and would create ties the kernel
// does not see; fix_inputs clamps generated int64 values to this limit.
constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53

// torch's rule: NaN beats everything (the first NaN wins among NaNs); otherwise strictly
// greater wins, so the first of equal maxima is kept.
bool replaces(double candidate, double best) {
    if (std::isnan(best)) return false;
    return std::isnan(candidate) || candidate > best;
}

// Index along the axis of the maximum of line (o, i), by the rule above.
template <typename Load>
std::int64_t arg_max_of_line(const AxisView& v, std::int64_t o, std::int64_t i, Load load) {
    std::int64_t best_k = 0;
    double best = load(v.at(o, 0, i));
    for (std::int64_t k = 1; k < v.size; ++k) {
        const double x = load(v.at(o, k, i));
        if (replaces(x, best)) {
            best = x;
            best_k = k;
        }
    }
    return best_k;
}

}  // namespace

class ArgMaxOp final : public Operator {
  public:
    std::string name() const override { return "arg_max"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "an OpenMP-threaded C++ scan, all dtypes: oneDNN has no arg-max primitive (its reduction "
               "returns values only), so the baseline is the loop a framework runs: lines along dim spread "
               "over threads, vectorized across the inner dimension, a long single line split into chunks "
               "whose (value, index) results merge in order";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("input").tensors.at(0);
        // A 0-d input is one slice of one element (torch accepts dim 0 and -1 for it).
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.shape.size()),
                                       p.context() + "input of shape " + shape_to_string(x.shape));
        if (!x.shape.empty() && x.shape[static_cast<std::size_t>(axis)] == 0)
            throw Error(p.context() + "arg_max of an empty dimension (input shape " + shape_to_string(x.shape) +
                        ", dim " + std::to_string(p.attr_int("dim")) + ") is undefined");
        Shape shape;
        for (std::size_t d = 0; d < x.shape.size(); ++d) {
            if (static_cast<int>(d) != axis) shape.push_back(x.shape[d]);
            else if (p.attr_bool("keepdim")) shape.push_back(1);
        }
        ArgSpec out;
        out.name = "indices";
        out.tensors.push_back(TensorSpec{DType::i64, shape});
        return {out};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const auto& x = in[0].one();
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.spec.shape.size()), name());
        const AxisView v = axis_view(x.spec.shape, axis);
        auto& y = out[0].one().v;
        const auto load = [&](std::int64_t at) { return x.v[static_cast<std::size_t>(at)]; };
#pragma omp parallel for schedule(static) if (v.lines() >= 64)
        for (std::int64_t line = 0; line < v.lines(); ++line)
            y[static_cast<std::size_t>(line)] = static_cast<double>(arg_max_of_line(v, line / v.inner, line % v.inner, load));
    }

    // A selection rounds nothing: the same-precision reference is the golden itself (an fp32
    // copy of int32/int64 values would even merge distinct values into ties).
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
    }

    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("input").tensors.at(0);
        const auto& y = p.outputs.at(0).tensors.at(0);
        double n = static_cast<double>(x.numel());
        WorkModel w;
        w.bytes_read = static_cast<double>(x.bytes());
        // An all-NaN input: the first NaN of a line is its answer (NaN beats everything, the
        // first one wins), so a kernel may stop at the first element of every line and read
        // only the first slice along dim. The compulsory work is that slice (measured: the
        // reference kernel beat the full-read bound on such cases by 2x).
        const auto& range = p.spec.inputs.at(0).range;
        if (range && std::isnan(range->lo) && std::isnan(range->hi) && !x.shape.empty()) {
            const int axis = normalize_dim(p.attr_int("dim"), x.shape.size(), name());
            n /= static_cast<double>(std::max<std::int64_t>(1, x.shape[static_cast<std::size_t>(axis)]));
            w.bytes_read = n * static_cast<double>(dtype_size(x.dtype));
        }
        w.bytes_written = static_cast<double>(y.bytes());
        // Per element: one compare (an unordered greater-than also catches NaN), a blend of
        // the running value and a blend of its index; int32 index lanes suffice below 2^31.
        w.add_vector(OpClass::cmp, x.dtype, n);
        w.add_vector(OpClass::select, x.dtype, n);
        w.add_vector(OpClass::select, DType::i32, n);
        // cann-bench (docs/hap.md): argmax over every element: a compare and a select of the
        // running index each, no arithmetic.
        add_formula(w, x.dtype, FormulaMath::compare, static_cast<double>(x.numel()), {{OpClass::cmp, 1}, {OpClass::select, 1}});
        // Any blocking of a line merges by (value, index) pairs, so every element is an item.
        w.parallel_items = n;
        w.innermost = x.shape.empty() ? 1 : x.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // (dim kind, keepdim): the last dim, the first, an inner dim by a negative number, a
        // middle dim by a positive one, each with keepdim both ways; cycled over the batch.
        enum DimKind { last, first, negative_outer, middle };
        static const std::vector<std::pair<DimKind, bool>> plans = {
            {last, false}, {first, true}, {negative_outer, false}, {middle, true},
            {last, true},  {first, false}, {negative_outer, true}, {middle, false}};
        const auto [kind, keepdim] = sampler.cycle(plans);
        const int rank = kind == last || kind == first ? sampler.pick_rank(1, 5) : sampler.pick_rank(2, 5);
        std::int64_t dim = -1;
        switch (kind) {
            case last: dim = -1; break;
            case first: dim = 0; break;
            case negative_outer: dim = -static_cast<std::int64_t>(sampler.rng().uniform_int(2, rank)); break;
            case middle: dim = sampler.rng().uniform_int(1, rank - 1); break;
        }
        out.inputs.at(0).shapes = {sampler.shape(d.target_elements, rank, d.dtype, d.aligned)};
        out.attrs = {{"dim", AttrValue::of_int(dim)}, {"keepdim", AttrValue::of_bool(keepdim)}};
    }

    ValueRange boundary_range(DType dtype) const override {
        if (dtype == DType::i64) return {-kExactIntegerLimit, kExactIntegerLimit};
        return Operator::boundary_range(dtype);
    }

    // 1. int64 values are clamped to +-2^53, where fp64 (the golden's type) still tells every
    //    value apart (an infinite range fills int64 from its whole range; clamped, those
    //    cases are mostly ties at +-2^53).
    // 2. Ties decide between a correct kernel and one that keeps the last maximum, but wide
    //    fp32/int ranges almost never repeat a slice's maximum: every third line gets its
    //    maximum copied to another random position of the line (before or after it).
    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        Tensor& x = inputs.at(0).tensors.at(0);
        if (x.spec.dtype == DType::i64) {
            auto* values = static_cast<std::int64_t*>(x.data());
            constexpr auto limit = static_cast<std::int64_t>(kExactIntegerLimit);
            for (std::int64_t k = 0; k < x.numel(); ++k) values[k] = std::clamp(values[k], -limit, limit);
        }
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, x.spec.shape.size()), name());
        const AxisView v = axis_view(x.spec.shape, axis);
        if (v.size < 2) return;
        // The maxima first, then the draws and copies in line order: lines are disjoint, so
        // this is the line-by-line rule's result, bit for bit (scan_every_third_line says why).
        struct Maximum {
            double value;
            std::int64_t k;
        };
        const std::vector<Maximum> best = scan_every_third_line<Maximum>(
            x.data(), x.spec.dtype, v, [](double value) { return Maximum{value, 0}; },
            [](Maximum& m, double value, std::int64_t k) {
                if (replaces(value, m.value)) m = Maximum{value, k};
            });
        for (std::size_t j = 0; j < best.size(); ++j) {
            const std::int64_t line = 3 * static_cast<std::int64_t>(j);
            const std::int64_t o = line / v.inner, i = line % v.inner;
            const std::int64_t other = rng.uniform_int(0, v.size - 2);
            const std::int64_t target = other >= best[j].k ? other + 1 : other;
            copy_element(x.data(), x.spec.dtype, v.at(o, best[j].k, i), v.at(o, target, i));
        }
    }
};

HB_REGISTER_OPERATOR(ArgMaxOp)

}  // namespace hb
