#include "ops/level3/strided_slice/slice_plan.hpp"

#include <algorithm>
#include <bit>

#include "core/error.hpp"

namespace hb::strided_slice {

namespace {

std::vector<std::int64_t> int_list(const Problem& p, const std::string& name) {
    const AttrValue& a = p.attr(name);
    if (a.type != AttrType::int_list) throw Error(p.context() + name + " must be a list of ints, got " + a.to_string());
    return a.ints;
}

// A mask attribute; absent (None in the reference's protos) means 0.
std::uint64_t mask(const Problem& p, const std::string& name, std::size_t entries) {
    const auto it = p.attrs.find(name);
    if (it == p.attrs.end() || it->second.type == AttrType::none) return 0;
    const std::int64_t m = it->second.as_int();
    if (m < 0) throw Error(p.context() + name + " is " + std::to_string(m) + "; a mask cannot be negative");
    if (entries < 64 && (static_cast<std::uint64_t>(m) >> entries) != 0)
        throw Error(p.context() + name + " " + std::to_string(m) + " sets a bit at or beyond position " +
                    std::to_string(entries) + ", but begin/end/strides have " + std::to_string(entries) + " entries");
    return static_cast<std::uint64_t>(m);
}

}  // namespace

SlicePlan plan_slice(const Problem& p, const Shape& x_shape) {
    const auto begin = int_list(p, "begin");
    const auto end = int_list(p, "end");
    const auto strides = int_list(p, "strides");
    if (begin.size() != end.size() || begin.size() != strides.size())
        throw Error(p.context() + "begin, end and strides must have the same length, got " + std::to_string(begin.size()) +
                    ", " + std::to_string(end.size()) + " and " + std::to_string(strides.size()));
    const std::size_t entries = begin.size();
    if (entries > 32) throw Error(p.context() + "begin/end/strides have " + std::to_string(entries) + " entries (at most 32)");
    const std::uint64_t begin_mask = mask(p, "begin_mask", entries);
    const std::uint64_t end_mask = mask(p, "end_mask", entries);
    const std::uint64_t ellipsis_mask = mask(p, "ellipsis_mask", entries);
    const std::uint64_t shrink_mask = mask(p, "shrink_axis_mask", entries);
    const std::uint64_t new_axis_mask = mask(p, "new_axis_mask", entries);
    if (std::popcount(ellipsis_mask) > 1)
        throw Error(p.context() + "ellipsis_mask " + std::to_string(ellipsis_mask) + " sets more than one bit (one ellipsis at most)");
    if (ellipsis_mask & new_axis_mask)
        throw Error(p.context() + "position " + std::to_string(std::countr_zero(ellipsis_mask)) +
                    " is both an ellipsis and a new axis");

    const auto rank = static_cast<std::int64_t>(x_shape.size());
    // The ellipsis stands for the dims no other (non-new-axis) entry names.
    const std::int64_t named = static_cast<std::int64_t>(entries) - std::popcount(new_axis_mask) - (ellipsis_mask ? 1 : 0);
    if (named > rank)
        throw Error(p.context() + "the spec names " + std::to_string(named) + " dimensions of x, which has " +
                    std::to_string(rank) + " (shape " + shape_to_string(x_shape) + ")");

    SlicePlan plan;
    std::size_t d = 0;  // dimension of x
    auto full = [&] {
        const std::int64_t n = x_shape[d++];
        plan.axes.push_back({0, 1, n, false});
        plan.y_shape.push_back(n);
        plan.y_source.push_back(static_cast<int>(d - 1));
    };
    for (std::size_t e = 0; e < entries; ++e) {
        const std::uint64_t bit = std::uint64_t{1} << e;
        const std::string where = "entry " + std::to_string(e) + " of the spec";
        if (new_axis_mask & bit) {
            plan.y_shape.push_back(1);
            plan.y_source.push_back(-1);
            continue;
        }
        if (ellipsis_mask & bit) {
            for (std::int64_t k = 0; k < rank - named; ++k) full();
            continue;
        }
        const std::int64_t n = x_shape[d];
        const std::int64_t s = strides[e];
        if (s == 0) throw Error(p.context() + where + ": stride 0 (a slice needs a non-zero stride)");
        if (shrink_mask & bit) {
            std::int64_t index = begin[e];
            if (begin_mask & bit) index = s > 0 ? 0 : n - 1;
            else if (index < 0) index += n;
            if (index < 0 || index >= n)
                throw Error(p.context() + where + ": shrink index " + std::to_string(begin[e]) + " is outside dimension " +
                            std::to_string(d) + " of size " + std::to_string(n));
            plan.axes.push_back({index, 1, 1, true});
            ++d;
            continue;
        }
        // TensorFlow's canonical range: one wrap of a negative index, then a clamp to the
        // positions a walk in this direction can start and stop at.
        const std::int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
        std::int64_t b = (begin_mask & bit) ? (s > 0 ? 0 : n - 1) : (begin[e] < 0 ? begin[e] + n : begin[e]);
        std::int64_t f = (end_mask & bit) ? (s > 0 ? n : -1) : (end[e] < 0 ? end[e] + n : end[e]);
        b = std::clamp(b, lo, hi);
        f = std::clamp(f, lo, hi);
        const std::int64_t span = s > 0 ? f - b : b - f;
        const std::int64_t step = s > 0 ? s : -s;
        const std::int64_t count = span > 0 ? (span + step - 1) / step : 0;
        plan.axes.push_back({count > 0 ? b : 0, s, count, false});
        plan.y_shape.push_back(count);
        plan.y_source.push_back(static_cast<int>(d));
        ++d;
    }
    while (d < x_shape.size()) full();
    return plan;
}

std::int64_t SlicePlan::base_offset(const Shape& x_shape) const {
    const Shape strides = contiguous_strides(x_shape);
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < axes.size(); ++d) offset += axes[d].start * strides[d];
    return offset;
}

std::vector<std::int64_t> SlicePlan::y_steps(const Shape& x_shape) const {
    const Shape strides = contiguous_strides(x_shape);
    std::vector<std::int64_t> steps;
    for (const int source : y_source)
        steps.push_back(source < 0 ? 0 : axes[static_cast<std::size_t>(source)].step * strides[static_cast<std::size_t>(source)]);
    return steps;
}

}  // namespace hb::strided_slice
