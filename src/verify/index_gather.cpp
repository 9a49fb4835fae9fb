#include "verify/index_gather.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "verify/thresholds.hpp"

namespace hb {

GatherReduce parse_gather_reduce(std::string_view name) {
    if (name == "amax") return GatherReduce::amax;
    if (name == "amin") return GatherReduce::amin;
    throw Error("index_gather.value_reduce: unknown reduction '" + std::string(name) +
                "' (known: amax, amin)");
}

std::string_view gather_reduce_name(GatherReduce reduce) {
    return reduce == GatherReduce::amax ? "amax" : "amin";
}

namespace {

// The index and input tensors viewed as [outer, extent, inner] around the gathered dim.
struct GatherGeometry {
    int dim = 0;
    std::int64_t outer = 1;
    std::int64_t input_extent = 1;
    std::int64_t index_extent = 1;
    std::int64_t inner = 1;
};

// A mismatch between these shapes is a bug in the operator's shape inference or in the
// caller, not a property of the candidate's data, so it throws instead of failing the case.
GatherGeometry gather_geometry(const IndexGatherOperands& ops, bool reduce_form) {
    const bool scalar_input = ops.input_shape.empty();
    // torch treats a 0-d tensor as one element along dim 0 (or -1).
    Shape input_shape = scalar_input ? Shape{1} : ops.input_shape;
    Shape index_shape = ops.index_shape;
    if (static_cast<std::int64_t>(ops.input.size()) != numel(input_shape))
        throw Error(fmt::format("index_gather: input has {} values but shape {}", ops.input.size(),
                                shape_to_string(ops.input_shape)),
                    ExitCode::internal);
    if (static_cast<std::int64_t>(ops.indices.size()) != numel(index_shape))
        throw Error(fmt::format("index_gather: index output has {} values but shape {}",
                                ops.indices.size(), shape_to_string(ops.index_shape)),
                    ExitCode::internal);

    GatherGeometry g;
    g.dim = normalize_dim(ops.dim, input_shape.size(), "index_gather");
    if (index_shape.empty() && scalar_input) {
        index_shape = Shape{1};
    } else if (reduce_form && !ops.keepdim) {
        if (index_shape.size() + 1 != input_shape.size())
            throw Error(fmt::format("index_gather: with keepdim false the index output of input "
                                    "shape {} must have rank {}, got shape {}",
                                    shape_to_string(ops.input_shape), input_shape.size() - 1,
                                    shape_to_string(ops.index_shape)),
                        ExitCode::internal);
        index_shape.insert(index_shape.begin() + g.dim, 1);
    }

    bool fits = index_shape.size() == input_shape.size();
    for (std::size_t d = 0; fits && d < input_shape.size(); ++d)
        if (static_cast<int>(d) != g.dim && index_shape[d] != input_shape[d]) fits = false;
    if (fits && reduce_form && index_shape[g.dim] != 1) fits = false;
    if (!fits)
        throw Error(fmt::format("index_gather: index output shape {} does not fit input shape {} "
                                "along dim {}{}",
                                shape_to_string(ops.index_shape), shape_to_string(ops.input_shape),
                                g.dim, reduce_form ? " (a reduction keeps at most 1 there)" : ""),
                    ExitCode::internal);

    for (int d = 0; d < g.dim; ++d) g.outer *= input_shape[d];
    for (std::size_t d = g.dim + 1; d < input_shape.size(); ++d) g.inner *= input_shape[d];
    g.input_extent = input_shape[g.dim];
    g.index_extent = index_shape[g.dim];
    return g;
}

bool index_in_range(double index, std::int64_t extent) {
    return std::isfinite(index) && index == std::floor(index) && index >= 0 &&
           index < static_cast<double>(extent);
}

// Walks every index, checks its range and asks `matches(position, o, i, gathered)` whether
// the value it selects is the right one; fills the counts and the reason.
template <typename Matches, typename Expected>
IndexGatherVerdict gather_and_check(const IndexGatherOperands& ops, const GatherGeometry& g,
                                    std::string form, const std::string& expected_what,
                                    Matches matches, Expected expected) {
    IndexGatherVerdict v;
    v.form = std::move(form);
    v.dim = g.dim;
    for (std::int64_t o = 0; o < g.outer; ++o) {
        for (std::int64_t k = 0; k < g.index_extent; ++k) {
            for (std::int64_t i = 0; i < g.inner; ++i) {
                const std::int64_t position = (o * g.index_extent + k) * g.inner + i;
                const double index = ops.indices[position];
                ++v.checked;
                if (!index_in_range(index, g.input_extent)) {
                    if (v.out_of_range++ == 0) {
                        v.first_out_of_range_position = position;
                        v.first_out_of_range_index = index;
                    }
                    continue;
                }
                const auto j = static_cast<std::int64_t>(index);
                const double gathered = ops.input[(o * g.input_extent + j) * g.inner + i];
                if (matches(position, o, i, gathered)) continue;
                if (v.mismatches++ == 0) {
                    v.first_mismatch_position = position;
                    v.first_mismatch_index = index;
                    v.first_mismatch_got = gathered;
                    v.first_mismatch_expected = expected(position, o, i);
                }
            }
        }
    }

    v.passed = v.out_of_range == 0 && v.mismatches == 0;
    if (v.out_of_range > 0)
        v.reason = fmt::format(
            "{} of {} indices out of range [0, {}) along dim {}, first at position {} (index {:g})",
            v.out_of_range, v.checked, g.input_extent, g.dim, v.first_out_of_range_position,
            v.first_out_of_range_index);
    if (v.mismatches > 0) {
        if (!v.reason.empty()) v.reason += "; ";
        v.reason += fmt::format(
            "{} of {} indices select a value other than {}, first at position {} (index {:g} "
            "selects {:.6g}, expected {:.6g})",
            v.mismatches, v.checked, expected_what, v.first_mismatch_position,
            v.first_mismatch_index, v.first_mismatch_got, v.first_mismatch_expected);
    }
    return v;
}

}  // namespace

IndexGatherVerdict check_index_gather(const IndexGatherOperands& ops,
                                      std::span<const double> value_output, DType value_dtype) {
    const GatherGeometry g = gather_geometry(ops, false);
    if (value_output.size() != ops.indices.size())
        throw Error(fmt::format("index_gather: the value output has {} values, the index output {}",
                                value_output.size(), ops.indices.size()),
                    ExitCode::internal);
    // Bit for bit: the value output claims to be the selected input elements themselves.
    auto matches = [&](std::int64_t position, std::int64_t, std::int64_t, double gathered) {
        return dtype_bit_pattern(gathered, value_dtype) ==
               dtype_bit_pattern(value_output[position], value_dtype);
    };
    auto expected = [&](std::int64_t position, std::int64_t, std::int64_t) {
        return value_output[position];
    };
    return gather_and_check(ops, g, "value_output", "the value output", matches, expected);
}

IndexGatherVerdict check_index_gather(const IndexGatherOperands& ops, GatherReduce reduce) {
    const GatherGeometry g = gather_geometry(ops, true);
    // The reduction of every slice, NaN when the slice holds one (torch's amax/amin).
    std::vector<double> extremum(static_cast<std::size_t>(g.outer * g.inner));
    for (std::int64_t o = 0; o < g.outer; ++o) {
        for (std::int64_t i = 0; i < g.inner; ++i) {
            double best = reduce == GatherReduce::amax ? -INFINITY : INFINITY;
            for (std::int64_t j = 0; j < g.input_extent; ++j) {
                const double x = ops.input[(o * g.input_extent + j) * g.inner + i];
                if (std::isnan(x)) {
                    best = x;
                    break;
                }
                if (reduce == GatherReduce::amax ? x > best : x < best) best = x;
            }
            extremum[o * g.inner + i] = best;
        }
    }
    // Numeric equality, not bits: +0 and -0 are both a maximum of {-0, +0}, and which of
    // two tied elements an index selects is free.
    auto matches = [&](std::int64_t, std::int64_t o, std::int64_t i, double gathered) {
        const double want = extremum[o * g.inner + i];
        return std::isnan(want) ? std::isnan(gathered) : gathered == want;
    };
    auto expected = [&](std::int64_t, std::int64_t o, std::int64_t i) {
        return extremum[o * g.inner + i];
    };
    const std::string name(gather_reduce_name(reduce));
    return gather_and_check(ops, g, name, "the " + name + " of its slice", matches, expected);
}

DistinctIndicesVerdict check_distinct_indices(std::span<const double> indices, const Shape& index_shape, std::int64_t dim) {
    const Shape shape = index_shape.empty() ? Shape{1} : index_shape;
    if (static_cast<std::int64_t>(indices.size()) != numel(shape))
        throw Error(fmt::format("distinct indices: the index output has {} values but shape {}", indices.size(),
                                shape_to_string(index_shape)),
                    ExitCode::internal);
    const int axis = normalize_dim(dim, shape.size(), "distinct indices");
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= shape[static_cast<std::size_t>(d)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    const std::int64_t extent = shape[static_cast<std::size_t>(axis)];
    DistinctIndicesVerdict v;
    std::vector<std::pair<double, std::int64_t>> slice(static_cast<std::size_t>(extent));  // (index, position)
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            ++v.slices;
            for (std::int64_t k = 0; k < extent; ++k) {
                const std::int64_t position = (o * extent + k) * inner + i;
                slice[static_cast<std::size_t>(k)] = {indices[static_cast<std::size_t>(position)], position};
            }
            std::sort(slice.begin(), slice.end());
            for (std::size_t k = 1; k < slice.size(); ++k) {
                if (slice[k].first != slice[k - 1].first) continue;  // NaN indices are out of range, judged by gathering
                const std::int64_t position = std::max(slice[k].second, slice[k - 1].second);
                if (v.repeats++ == 0 || position < v.first_repeat_position) {
                    v.first_repeat_position = position;
                    v.first_repeat_index = slice[k].first;
                }
            }
        }
    v.passed = v.repeats == 0;
    if (!v.passed)
        v.reason = fmt::format("{} indices repeat an index of their slice along dim {} (a selection takes each element once), "
                               "first at position {} (index {:g})",
                               v.repeats, axis, v.first_repeat_position, v.first_repeat_index);
    return v;
}

}  // namespace hb
