// Case shapes for the binary broadcast operators (maximum, gcd): the broadcast patterns a
// batch of cases cycles through, and shapes for each within an element budget.
#pragma once

#include <vector>

#include "spec/case_sampler.hpp"

namespace hb {

// The broadcast patterns the cases cycle through; every one appears in a batch of 20.
enum class BroadcastPattern {
    same,             // equal shapes
    x2_row,           // x2 = [1, ..., 1, inner]: size-1 leading dims
    x2_trailing,      // x2 has only x1's trailing dims (missing leading dims)
    x1_broadcast,     // the other direction: x1 has size-1 and missing dims, x2 is full
    both,             // x1 = [A, 1, C], x2 = [B, C]: each input broadcasts along a dim of the other
    x2_column,        // x2 = [..., 1]: broadcast along the innermost dim (never aligned)
};

extern const std::vector<BroadcastPattern> all_broadcast_patterns;

// The shapes of x1 and x2 for `pattern` with about `elements` input elements in total; an
// aligned draw keeps both innermost dims 512-byte multiples (x2_column then becomes x2_row).
void sample_broadcast_shapes(CaseSampler& sampler, BroadcastPattern pattern, std::int64_t elements, DType dtype,
                             bool aligned, Shape& x1, Shape& x2);

}  // namespace hb
