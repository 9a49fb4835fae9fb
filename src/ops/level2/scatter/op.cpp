// scatter(data, dim, indices, updates, reduce=None): y = a copy of data, then for every
// element k of indices (coordinates c), with t = c but t[dim] = indices[c]:
//   None / "update": y[t] = updates[c]            (torch.scatter)
//   "add":           y[t] += updates[c]           (torch.scatter_add)
//   "multiply":      y[t] *= updates[c]           (torch.scatter_reduce "prod", include_self)
//   "amin" / "amax": y[t] = min / max(y[t], updates[c])  (scatter_reduce, include_self; NaN
//                    propagates)
// indices has data's rank, at most data's size outside dim and at most updates' size
// everywhere; updates has data's dtype.
// Decisions (docs/methodology.md):
// - None/update: repeated targets make torch's result depend on thread order, so the
//   harness generates, per line along dim, distinct positions (a prefix of a random
//   permutation); a case whose index is longer than data along dim is refused.
// - add/multiply on floats: the golden sums and multiplies in fp64 and rounds once, so it
//   does not depend on the order of contributions; the same-precision reference accumulates
//   in fp32 in index order (row-major over indices) and rounds once, which is what a kernel
//   should match: fp16/bf16 must accumulate in fp32 or better, not round after each step.
// - add/multiply on integers wrap around (two's complement), as torch does; the wrapped
//   result does not depend on the order either.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "ops/axis_view.hpp"
#include "ops/formula_count.hpp"
#include "ops/index_inputs.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

enum class Reduce { update, add, multiply, amin, amax };

Reduce reduce_of(const Problem& p) {
    const AttrValue& a = p.attr("reduce");
    if (a.type == AttrType::none) return Reduce::update;
    if (a.type != AttrType::s) throw Error(p.context() + "attribute reduce must be None or a string");
    if (a.s == "update") return Reduce::update;
    if (a.s == "add") return Reduce::add;
    if (a.s == "multiply") return Reduce::multiply;
    if (a.s == "amin") return Reduce::amin;
    if (a.s == "amax") return Reduce::amax;
    throw Error(p.context() + "reduce \"" + a.s + "\" is not one of None, \"update\", \"add\", \"multiply\", \"amin\", \"amax\"");
}

// int64 values beyond +-2^53 are not exact in the fp64 values the golden receives.
constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53

// Calls visit(j, data_base, updates_offset) for every element j of indices in row-major
// order; data_base is the offset in data of j's coordinates with the one along `axis` at 0.
template <typename Visit>
void for_each_index_element(const Shape& index_shape, const Shape& data_shape, const Shape& updates_shape, int axis,
                            Visit visit) {
    const auto data_strides = row_major_strides(data_shape);
    const auto updates_strides = row_major_strides(updates_shape);
    const std::int64_t n = numel(index_shape);
    for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t rest = j, base = 0, updates_offset = 0;
        for (std::size_t d = index_shape.size(); d-- > 0;) {
            const std::int64_t coordinate = rest % index_shape[d];
            rest /= index_shape[d];
            if (static_cast<int>(d) != axis) base += coordinate * data_strides[d];
            updates_offset += coordinate * updates_strides[d];
        }
        visit(j, base, updates_offset);
    }
}

double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }
double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }

// Two's-complement wrap of an integer to the width of `t`.
double wrap_to(std::uint64_t bits, DType t) {
    if (t == DType::i32) return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(bits)));
    return static_cast<double>(static_cast<std::int64_t>(bits));
}

}  // namespace

class ScatterOp final : public Operator {
  public:
    std::string name() const override { return "scatter"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "an OpenMP-threaded C++ scatter, all dtypes: oneDNN has no scatter primitive; y is copied from "
               "data, then the lines of indices along dim spread over threads (each line writes only its own "
               "line of y, so there are no races), contributions applied in index order; float16/bfloat16 "
               "add/multiply accumulate in an fp32 copy of y";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& data = p.input("data").tensors.at(0);
        const auto& indices = p.input("indices").tensors.at(0);
        const auto& updates = p.input("updates").tensors.at(0);
        const Reduce reduce = reduce_of(p);
        if (indices.dtype != DType::i32 && indices.dtype != DType::i64)
            throw Error(p.context() + "indices has dtype " + std::string(dtype_name(indices.dtype)) + "; it must be int32 or int64");
        if (updates.dtype != data.dtype)
            throw Error(p.context() + "updates has dtype " + std::string(dtype_name(updates.dtype)) + " but data has " +
                        std::string(dtype_name(data.dtype)) + "; they must be equal");
        if (indices.shape.size() != data.shape.size() || updates.shape.size() != data.shape.size())
            throw Error(p.context() + "data " + shape_to_string(data.shape) + ", indices " + shape_to_string(indices.shape) +
                        " and updates " + shape_to_string(updates.shape) + " must have the same rank");
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, data.shape.size()),
                                       p.context() + "data of shape " + shape_to_string(data.shape));
        for (std::size_t d = 0; d < data.shape.size(); ++d) {
            if (static_cast<int>(d) != axis && indices.shape[d] > data.shape[d])
                throw Error(p.context() + "indices shape " + shape_to_string(indices.shape) + " exceeds data shape " +
                            shape_to_string(data.shape) + " in dimension " + std::to_string(d) + " (not dim)");
            if (indices.shape[d] > updates.shape[d])
                throw Error(p.context() + "indices shape " + shape_to_string(indices.shape) + " exceeds updates shape " +
                            shape_to_string(updates.shape) + " in dimension " + std::to_string(d));
        }
        if (!data.shape.empty() && indices.numel() > 0) {
            const auto along = data.shape[static_cast<std::size_t>(axis)];
            if (along == 0) throw Error(p.context() + "data has size 0 along dim; there is nowhere to scatter");
            if (reduce == Reduce::update && indices.shape[static_cast<std::size_t>(axis)] > along)
                throw Error(p.context() + "reduce None/update needs distinct positions along dim, but indices has " +
                            std::to_string(indices.shape[static_cast<std::size_t>(axis)]) + " per line and data only " +
                            std::to_string(along) + " positions");
        }
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{data.dtype, data.shape});
        return {y};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        if (is_floating(in[0].one().spec.dtype)) apply_floating<double>(p, in, out);
        else apply_integer(p, in, out);
    }

    // fp32 accumulation in index order, rounded once to the output dtype. Integers and the
    // selections (update, amin, amax) round nothing: those equal the golden.
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
        const Reduce reduce = reduce_of(p);
        if (!is_floating(in[0].one().spec.dtype) || (reduce != Reduce::add && reduce != Reduce::multiply)) return;
        apply_floating<float>(p, in, out);
        round_values_to_dtype(out[0].one().v, out[0].one().spec.dtype);
    }

    WorkModel work(const Problem& p) const override {
        const auto& data = p.input("data").tensors.at(0);
        const auto& indices = p.input("indices").tensors.at(0);
        const auto& y = p.outputs.at(0).tensors.at(0);
        const double n = static_cast<double>(indices.numel());
        WorkModel w;
        // data is copied to y (read and written once); every index and its update are read
        // once (updates may be larger than indices: only the used part counts).
        w.bytes_read = static_cast<double>(data.bytes() + indices.bytes()) + n * static_cast<double>(dtype_size(data.dtype));
        w.bytes_written = static_cast<double>(y.bytes());
        w.add_vector(OpClass::fma, DType::i64, n);  // target address: index * stride + base
        switch (reduce_of(p)) {
            case Reduce::update: break;
            case Reduce::add: w.add_vector(OpClass::add, data.dtype, n); break;
            case Reduce::multiply: w.add_vector(OpClass::mul, data.dtype, n); break;
            case Reduce::amin:
            case Reduce::amax:
                w.add_vector(OpClass::cmp, data.dtype, n);
                w.add_vector(OpClass::select, data.dtype, n);
                break;
        }
        // cann-bench (docs/hap.md): y = copy of data (a move per element), then per index one
        // update moved to its place and, for a reduce, the reduction's operation.
        const double copied = static_cast<double>(data.numel());
        add_formula(w, data.dtype, FormulaMath::compare, copied + n, {{OpClass::select, 1}});
        switch (reduce_of(p)) {
            case Reduce::update: break;
            case Reduce::add: add_formula(w, data.dtype, FormulaMath::elementwise, n, {{OpClass::add, 1}}); break;
            case Reduce::multiply: add_formula(w, data.dtype, FormulaMath::elementwise, n, {{OpClass::mul, 1}}); break;
            case Reduce::amin:
            case Reduce::amax: add_formula(w, data.dtype, FormulaMath::compare, n, {{OpClass::cmp, 1}}); break;
        }
        // Every contribution is an item: update targets are distinct, and reductions can split
        // the targets among threads (a bound on the parallelism a kernel can find).
        w.parallel_items = std::max(1.0, n);
        w.innermost = indices.shape.empty() ? 1 : indices.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // Every reduce value by cycling; the dim kind cycles more slowly so that it meets
        // each reduce value over several batches.
        static const std::vector<AttrValue> reduces = {AttrValue{}, AttrValue::of_string("update"),
                                                        AttrValue::of_string("add"), AttrValue::of_string("multiply"),
                                                        AttrValue::of_string("amin"), AttrValue::of_string("amax")};
        const AttrValue& reduce = sampler.cycle(reduces);
        const bool assigns = reduce.type == AttrType::none || reduce.s == "update";
        enum DimKind { first, last, negative_outer, middle };
        const auto kind = static_cast<DimKind>((d.index / 6 + d.index) % 4);
        const int rank = kind == last || kind == first ? sampler.pick_rank(1, 4) : sampler.pick_rank(2, 4);
        Rng& rng = sampler.rng();
        std::int64_t dim = 0;
        switch (kind) {
            case first: dim = 0; break;
            case last: dim = -1; break;
            case negative_outer: dim = -static_cast<std::int64_t>(rng.uniform_int(2, rank)); break;
            case middle: dim = rng.uniform_int(1, rank - 1); break;
        }
        const int axis = dim < 0 ? rank + static_cast<int>(dim) : static_cast<int>(dim);
        const DType index_dtype = sampler.pick(std::vector<DType>{DType::i32, DType::i64});
        const DType narrower = dtype_size(index_dtype) < dtype_size(d.dtype) ? index_dtype : d.dtype;
        // Contributions per target along dim: at most one for assignments, up to two for
        // reductions (repeated targets).
        const double ratio = assigns ? sampler.pick(std::vector<double>{0.25, 0.5, 1.0})
                                     : sampler.pick(std::vector<double>{0.5, 1.0, 2.0});
        const auto data_budget = static_cast<std::int64_t>(static_cast<double>(d.target_elements) / (1 + 2 * ratio));
        const Shape data_shape = sampler.shape(std::max<std::int64_t>(1, data_budget), rank, narrower, d.aligned);
        Shape index_shape = data_shape;
        auto& along = index_shape[static_cast<std::size_t>(axis)];
        const std::int64_t size_along = along;
        along = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(along) * ratio)));
        if (assigns) along = std::min(along, size_along);
        const std::int64_t align_unit = 512 / static_cast<std::int64_t>(dtype_size(narrower));
        if (axis == rank - 1 && d.aligned) along = std::max(align_unit, along / align_unit * align_unit);
        // Half the cases shrink one other dimension (torch allows indices smaller than data
        // there); an aligned case keeps the innermost one.
        if (rank >= 2 && rng.uniform01() < 0.5) {
            std::vector<int> others;
            for (int k = 0; k < rank; ++k)
                if (k != axis && data_shape[static_cast<std::size_t>(k)] > 1 && !(d.aligned && k == rank - 1))
                    others.push_back(k);
            if (!others.empty()) {
                auto& s = index_shape[static_cast<std::size_t>(sampler.pick(others))];
                s = rng.uniform_int(1, s - 1);
            }
        }
        out.inputs.at(0).shapes = {data_shape};
        out.inputs.at(1).shapes = {index_shape};
        out.inputs.at(1).dtype = index_dtype;
        out.inputs.at(1).range = ValueRange{0, static_cast<double>(size_along - 1)};
        out.inputs.at(2).shapes = {index_shape};
        out.attrs = {{"dim", AttrValue::of_int(dim)}, {"reduce", reduce}};
    }

    // float32/bfloat16: +-3e38 / 64 instead of +-3e38. add must not depend on the order of
    // contributions, but with values near the fp32 limit an fp32 accumulator overflows on a
    // partial sum (3e38 + 3e38 - 3e38) that the exact sum does not reach, and the sign of
    // the resulting infinity depends on the order. A target receives far fewer than 63
    // contributions (about 2 on average here), so fp32 partial sums stay finite, while
    // products still overflow. float16 keeps its limit (an fp32 accumulator holds its sums).
    // int64: +-2^53, where the golden's fp64 is exact.
    ValueRange boundary_range(DType dtype) const override {
        if (dtype == DType::i64) return {-kExactIntegerLimit, kExactIntegerLimit};
        if (dtype == DType::f32 || dtype == DType::bf16) return {-3.0e38 / 64, 3.0e38 / 64};
        return Operator::boundary_range(dtype);
    }

    // 1. int64 data and updates are clamped to +-2^53, where the golden's fp64 is exact.
    // 2. None/update: each line of indices along dim becomes a prefix of a random permutation
    //    of [0, data.shape[dim]) (distinct targets, so the result is deterministic).
    // 3. Reductions: indices outside [0, data.shape[dim]) are redrawn inside it.
    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        for (std::size_t a : {std::size_t{0}, std::size_t{2}}) {
            Tensor& t = inputs.at(a).tensors.at(0);
            if (t.spec.dtype != DType::i64) continue;
            auto* values = static_cast<std::int64_t*>(t.data());
            constexpr auto limit = static_cast<std::int64_t>(kExactIntegerLimit);
            for (std::int64_t k = 0; k < t.numel(); ++k) values[k] = std::clamp(values[k], -limit, limit);
        }
        const Tensor& data = inputs.at(0).tensors.at(0);
        Tensor& indices = inputs.at(1).tensors.at(0);
        if (indices.numel() == 0) return;
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, data.spec.shape.size()), name());
        const std::int64_t size = data.spec.shape.empty() ? 1 : data.spec.shape[static_cast<std::size_t>(axis)];
        if (reduce_of(p) != Reduce::update) {
            redraw_out_of_range_indices(indices, size, rng);
            return;
        }
        std::int64_t outer = 1, inner = 1;
        const Shape& shape = indices.spec.shape;
        for (int d = 0; d < axis; ++d) outer *= shape[static_cast<std::size_t>(d)];
        for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        const std::int64_t per_line = shape.empty() ? 1 : shape[static_cast<std::size_t>(axis)];
        // A partial Fisher-Yates shuffle per line on one running permutation: each shuffle
        // of a permutation's prefix is again a uniform random prefix, in O(per_line).
        std::vector<std::int64_t> permutation(static_cast<std::size_t>(size));
        std::iota(permutation.begin(), permutation.end(), 0);
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t i = 0; i < inner; ++i)
                for (std::int64_t k = 0; k < per_line; ++k) {
                    const auto pick = static_cast<std::size_t>(rng.uniform_int(k, size - 1));
                    std::swap(permutation[static_cast<std::size_t>(k)], permutation[pick]);
                    indices.set(static_cast<std::size_t>((o * per_line + k) * inner + i),
                                static_cast<double>(permutation[static_cast<std::size_t>(k)]));
                }
    }

  private:
    // Floats in Acc (fp64 golden, fp32 same-precision); y starts as data.
    template <typename Acc>
    void apply_floating(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const {
        const auto& data = in[0].one();
        const auto& indices = in[1].one();
        const auto& updates = in[2].one();
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, data.spec.shape.size()), name());
        const std::int64_t axis_stride =
            data.spec.shape.empty() ? 1 : row_major_strides(data.spec.shape)[static_cast<std::size_t>(axis)];
        const Reduce reduce = reduce_of(p);
        std::vector<Acc> y(data.v.begin(), data.v.end());
        for_each_index_element(indices.spec.shape, data.spec.shape, updates.spec.shape, axis,
                               [&](std::int64_t j, std::int64_t base, std::int64_t u) {
                                   const auto k = static_cast<std::int64_t>(indices.v[static_cast<std::size_t>(j)]);
                                   Acc& target = y[static_cast<std::size_t>(base + k * axis_stride)];
                                   const auto value = static_cast<Acc>(updates.v[static_cast<std::size_t>(u)]);
                                   switch (reduce) {
                                       case Reduce::update: target = value; break;
                                       case Reduce::add: target += value; break;
                                       case Reduce::multiply: target *= value; break;
                                       case Reduce::amin: target = static_cast<Acc>(nan_min(target, value)); break;
                                       case Reduce::amax: target = static_cast<Acc>(nan_max(target, value)); break;
                                   }
                               });
        out[0].one().v.assign(y.begin(), y.end());
    }

    // Integers: exact, with add and multiply wrapping at the dtype's width.
    void apply_integer(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const {
        const auto& data = in[0].one();
        const auto& indices = in[1].one();
        const auto& updates = in[2].one();
        const DType dtype = data.spec.dtype;
        const int axis = normalize_dim(p.attr_int("dim"), std::max<std::size_t>(1, data.spec.shape.size()), name());
        const std::int64_t axis_stride =
            data.spec.shape.empty() ? 1 : row_major_strides(data.spec.shape)[static_cast<std::size_t>(axis)];
        const Reduce reduce = reduce_of(p);
        std::vector<std::int64_t> y(data.v.size());
        for (std::size_t k = 0; k < y.size(); ++k) y[k] = static_cast<std::int64_t>(data.v[k]);
        for_each_index_element(indices.spec.shape, data.spec.shape, updates.spec.shape, axis,
                               [&](std::int64_t j, std::int64_t base, std::int64_t u) {
                                   const auto k = static_cast<std::int64_t>(indices.v[static_cast<std::size_t>(j)]);
                                   std::int64_t& target = y[static_cast<std::size_t>(base + k * axis_stride)];
                                   const auto value = static_cast<std::int64_t>(updates.v[static_cast<std::size_t>(u)]);
                                   const auto t = static_cast<std::uint64_t>(target), v = static_cast<std::uint64_t>(value);
                                   switch (reduce) {
                                       case Reduce::update: target = value; break;
                                       case Reduce::add: target = static_cast<std::int64_t>(t + v); break;
                                       case Reduce::multiply: target = static_cast<std::int64_t>(t * v); break;
                                       case Reduce::amin: target = std::min(target, value); break;
                                       case Reduce::amax: target = std::max(target, value); break;
                                   }
                               });
        auto& result = out[0].one().v;
        for (std::size_t k = 0; k < y.size(); ++k) result[k] = wrap_to(static_cast<std::uint64_t>(y[k]), dtype);
    }
};

HB_REGISTER_OPERATOR(ScatterOp)

}  // namespace hb
