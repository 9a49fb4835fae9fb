// Validation of index outputs by gathering (methodology section 3, proto `index_gather`):
// where the order among ties is free (arg_max, cummin, top_k), the indices are checked by
// the values they select, not compared with the golden's indices.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace hb {

// The reduction an index output must point at (proto `value_reduce`).
enum class GatherReduce { amax, amin };
GatherReduce parse_gather_reduce(std::string_view name);  // "amax" / "amin"; throws hb::Error
std::string_view gather_reduce_name(GatherReduce reduce);

// The input, the candidate's indices and the dim they index, all as torch.gather sees them.
// The index tensor has the input's shape except along `dim`; in the reduce form with
// keepdim == false it lacks `dim` altogether (arg_max(keepdim=False)).
struct IndexGatherOperands {
    std::span<const double> input;
    Shape input_shape;
    DType input_dtype = DType::f32;
    std::span<const double> indices;
    Shape index_shape;
    std::int64_t dim = 0;  // may be negative
    bool keepdim = true;
};

struct IndexGatherVerdict {
    bool passed = true;
    std::string reason;  // one line, set on failure
    std::string form;    // "value_output" or "amax" / "amin"
    int dim = 0;         // normalized
    std::int64_t checked = 0;       // index elements checked
    std::int64_t out_of_range = 0;  // indices outside [0, input.size(dim))
    std::int64_t first_out_of_range_position = -1;  // flat position in the index output
    double first_out_of_range_index = 0;
    std::int64_t mismatches = 0;  // in-range indices that select the wrong value
    std::int64_t first_mismatch_position = -1;
    double first_mismatch_index = 0;
    double first_mismatch_got = 0;       // the selected input value
    double first_mismatch_expected = 0;  // the value output, or the slice's amax/amin
};

// Form 1 (cummin, top_k): input.gather(dim, indices) must equal `value_output` (the
// candidate's value output, shaped like the indices) bit for bit in `value_dtype`.
IndexGatherVerdict check_index_gather(const IndexGatherOperands& operands,
                                      std::span<const double> value_output, DType value_dtype);
// Form 2 (arg_max, arg_min): each index must select the amax/amin of its slice along dim.
// Like torch's amax, a slice holding a NaN reduces to NaN, so its index must select a NaN.
IndexGatherVerdict check_index_gather(const IndexGatherOperands& operands, GatherReduce reduce);

// A selection (top_k; proto index_gather `distinct: true`) takes each element once: within
// every slice along dim, no two indices may be equal. Gathering alone cannot see a repeated
// index when the slice holds tied values (x = [5, 5, 3], k = 2: idx [0, 0] gathers [5, 5]).
struct DistinctIndicesVerdict {
    bool passed = true;
    std::string reason;                           // one line, set on failure
    std::int64_t slices = 0;                      // slices checked
    std::int64_t repeats = 0;                     // indices equal to an earlier one of their slice
    std::int64_t first_repeat_position = -1;      // flat position in the index output
    double first_repeat_index = 0;
};
DistinctIndicesVerdict check_distinct_indices(std::span<const double> indices, const Shape& index_shape, std::int64_t dim);

}  // namespace hb
