// strided_slice(x, begin, end, strides, begin_mask, end_mask, ellipsis_mask, shrink_axis_mask,
// new_axis_mask): TensorFlow's StridedSlice (the spec walk is in slice_plan.cpp). Spec entry e
// is a new size-1 axis (new_axis_mask bit e), an ellipsis standing for every dim no other
// entry names (ellipsis_mask, one bit at most), a single index that removes its dim
// (shrink_axis_mask), or a slice begin:end:stride of the next dim of x. A negative begin/end
// counts from the end once; a masked begin/end takes the whole dim in the stride's
// direction; the range is then clamped to the dim (TensorFlow's rule). Dims after the spec
// are taken whole.
//
// Where the reference golden deviates on paths its cases do not use, hapbench implements the
// intended behaviour: negative strides walk backwards (the golden's PyTorch slicing raises),
// and a begin/end still negative after one wrap clamps to the start (Python slicing would
// wrap it a second time). A zero stride, a shrunk index outside its dim, two ellipses or an
// ellipsis that is also a new axis are errors. y copies x's elements bit for bit and is
// compared bit-exactly; the work model holds bytes only.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/case_budget.hpp"
#include "ops/level3/strided_slice/slice_plan.hpp"
#include "ops/register.hpp"

namespace hb {

using strided_slice::plan_slice;
using strided_slice::SlicePlan;

class StridedSliceOp final : public Operator {
  public:
    std::string name() const override { return "strided_slice"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "oneDNN reorder from x viewed with the slice's offset and strides to a plain y (the strided view a "
               "framework hands oneDNN; int64 moves as pairs of s32 lanes, the bytes unchanged); views a oneDNN memory "
               "descriptor cannot express (negative strides, strides nesting with overlap) take an OpenMP loop over the "
               "rows of y";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        if (x.shape.size() > 8)
            throw Error(p.context() + "x has rank " + std::to_string(x.shape.size()) + "; strided_slice supports up to 8");
        const SlicePlan plan = plan_slice(p, x.shape);
        if (plan.y_shape.size() > 8)
            throw Error(p.context() + "the slice of x " + shape_to_string(x.shape) + " has rank " +
                        std::to_string(plan.y_shape.size()) + " (new axes included); at most 8");
        return {ArgSpec{"y", false, true, {TensorSpec{x.dtype, plan.y_shape}}}};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const auto& x = in[0].one();
        const SlicePlan plan = plan_slice(p, x.spec.shape);
        const std::int64_t base = plan.base_offset(x.spec.shape);
        const auto steps = plan.y_steps(x.spec.shape);
        auto& y = out[0].one();
        const Shape& shape = y.spec.shape;
        const std::int64_t n = y.spec.numel();
#pragma omp parallel for schedule(static) if (n >= 65536)
        for (std::int64_t j = 0; j < n; ++j) {
            std::int64_t rest = j, source = base;
            for (std::size_t t = shape.size(); t-- > 0;) {
                source += (rest % shape[t]) * steps[t];
                rest /= shape[t];
            }
            y.v[static_cast<std::size_t>(j)] = x.v[static_cast<std::size_t>(source)];
        }
    }

    // A copy rounds nothing: the same-precision reference is the golden itself.
    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        golden(p, in, out);
    }

    // Bytes only (formula-literal count: 0 operations per output element). y is written
    // whole. Reads: memory moves whole sectors (32 bytes, the smallest granule of the three
    // targets: Ascend GM blocks, GPU sectors; CPU lines are 64), so each run of x's innermost
    // dim costs the sectors its selected elements span, at least the selected bytes and at
    // most x. An innermost stride of 32 bytes or more costs a sector per element.
    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const auto& y = p.outputs.at(0).tensors.at(0);
        const SlicePlan plan = plan_slice(p, x.shape);
        WorkModel w;
        w.bytes_written = static_cast<double>(y.bytes());
        const double element = static_cast<double>(dtype_size(x.dtype));
        const double selected = static_cast<double>(y.numel());
        double read = selected * element;
        if (!plan.axes.empty() && selected > 0) {
            const auto& last = plan.axes.back();
            const double count = static_cast<double>(last.count);
            const double span_bytes = ((count - 1) * std::fabs(static_cast<double>(last.step)) + 1) * element;
            const double sectors_per_run = std::min(count, std::ceil(span_bytes / 32.0));
            read = std::clamp(selected / count * sectors_per_run * 32.0, selected * element, static_cast<double>(x.bytes()));
        }
        w.bytes_read = read;
        w.parallel_items = std::max(1.0, selected);
        w.innermost = y.shape.empty() ? 1 : y.shape.back();
        // cann-bench (docs/hap.md): one element moved per output, as gather counts it.
        add_formula(w, x.dtype, FormulaMath::compare, selected, {{OpClass::select, 1}});
        return w;
    }

    // Spec kinds, cycled: explicit positive slices (strides 1-4), negative begin/end (end -1),
    // negative strides, begin/end masks, a shrunk axis, new axes, an ellipsis, and a spec
    // shorter than x's rank (the trailing dims whole).
    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        enum Kind { positive, negative_index, negative_stride, masks, shrink, new_axis, ellipsis, partial };
        const Kind kind = sampler.cycle(std::vector<Kind>{positive, negative_index, negative_stride, masks, shrink, new_axis,
                                                          ellipsis, partial});
        Rng& rng = sampler.rng();
        const int rank = kind == ellipsis ? sampler.pick_rank(3, 4)
                         : kind == shrink || kind == partial || kind == masks ? sampler.pick_rank(2, 4)
                                                                               : sampler.pick_rank(1, 4);
        const Shape shape = sampler.shape(budgeted_elements(sampler, 2.0), rank, d.dtype, d.aligned);

        std::vector<std::int64_t> begin, end, strides;
        std::int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, shrink_mask = 0, new_axis_mask = 0;
        // A slice of dim n keeping about half of it or more, `step` apart, written per kind.
        auto slice = [&](std::int64_t n, bool reverse, bool negative_indices) {
            const std::int64_t step = sampler.pick(std::vector<std::int64_t>{1, 1, 2, 3, 4});
            const std::int64_t lo = rng.uniform_int(0, n / 4), hi = rng.uniform_int(std::max(lo + 1, n - n / 4), n);
            std::int64_t b = reverse ? hi - 1 : lo, e = reverse ? lo - 1 : hi;
            if (negative_indices) {
                b -= n;
                e = reverse ? (e < 0 ? -n - 1 - rng.uniform_int(0, 3) : e - n) : (e == n ? -1 : e - n);
            } else if (reverse && e < 0) {
                e = -n - 1;  // before index 0: one wrap leaves it at -1, the clamp's "before the start"
            }
            begin.push_back(b);
            end.push_back(e);
            strides.push_back(reverse ? -step : step);
        };
        const auto entry_bit = [&] { return std::int64_t{1} << begin.size(); };
        switch (kind) {
            case positive:
            case negative_index:
            case negative_stride:
                for (int k = 0; k < rank; ++k)
                    slice(shape[static_cast<std::size_t>(k)], kind == negative_stride && (k == rank - 1 || rng.uniform01() < 0.5),
                          kind == negative_index);
                break;
            case masks:
                for (int k = 0; k < rank; ++k) {
                    const bool reverse = rng.uniform01() < 0.25;
                    if (k == 0 || rng.uniform01() < 0.4) begin_mask |= entry_bit();
                    if (k == 1 || rng.uniform01() < 0.4) end_mask |= entry_bit();
                    slice(shape[static_cast<std::size_t>(k)], reverse, false);
                }
                break;
            case shrink: {
                const int shrunk = static_cast<int>(rng.uniform_int(0, rank - 2));  // never the innermost: rows stay long
                for (int k = 0; k < rank; ++k) {
                    if (k == shrunk) {
                        shrink_mask |= entry_bit();
                        const std::int64_t n = shape[static_cast<std::size_t>(k)];
                        const std::int64_t index = rng.uniform_int(0, n - 1);
                        begin.push_back(rng.uniform01() < 0.5 ? index : index - n);
                        end.push_back(index + 1);
                        strides.push_back(1);
                    } else {
                        slice(shape[static_cast<std::size_t>(k)], false, false);
                    }
                }
                break;
            }
            case new_axis: {
                const int inserted = static_cast<int>(rng.uniform_int(1, 2));
                int placed = 0;
                for (int k = 0; k <= rank; ++k) {
                    while (placed < inserted && (k == rank || rng.uniform01() < 0.4)) {
                        new_axis_mask |= entry_bit();
                        begin.push_back(0);
                        end.push_back(1);
                        strides.push_back(1);
                        ++placed;
                    }
                    if (k < rank) slice(shape[static_cast<std::size_t>(k)], false, false);
                }
                break;
            }
            case ellipsis:
                // [..., a:b:s] or [..., a:b:s, c:d:t]: the leading dims stand behind the ellipsis.
                ellipsis_mask |= entry_bit();
                begin.push_back(0);
                end.push_back(0);
                strides.push_back(1);
                for (int k = rank - static_cast<int>(rng.uniform_int(1, 2)); k < rank; ++k)
                    slice(shape[static_cast<std::size_t>(k)], false, rng.uniform01() < 0.5);
                break;
            case partial: {
                const int named = static_cast<int>(rng.uniform_int(1, rank - 1));
                for (int k = 0; k < named; ++k) slice(shape[static_cast<std::size_t>(k)], rng.uniform01() < 0.3, false);
                break;
            }
        }
        auto list = [](std::vector<std::int64_t> v) {
            AttrValue a;
            a.type = AttrType::int_list;
            a.ints = std::move(v);
            return a;
        };
        out.inputs.at(0).shapes = {shape};
        out.attrs = {{"begin", list(begin)}, {"end", list(end)}, {"strides", list(strides)}};
        if (begin_mask) out.attrs["begin_mask"] = AttrValue::of_int(begin_mask);
        if (end_mask) out.attrs["end_mask"] = AttrValue::of_int(end_mask);
        if (ellipsis_mask) out.attrs["ellipsis_mask"] = AttrValue::of_int(ellipsis_mask);
        if (shrink_mask) out.attrs["shrink_axis_mask"] = AttrValue::of_int(shrink_mask);
        if (new_axis_mask) out.attrs["new_axis_mask"] = AttrValue::of_int(new_axis_mask);
    }
};

HB_REGISTER_OPERATOR(StridedSliceOp)

}  // namespace hb
