// Shared pieces of the foreach_* operators, whose inputs are tensor lists: drawing a list
// of shapes from an element budget, checking that parallel lists match, and the traffic
// and innermost length of a list for the work model.
#pragma once

#include "ops/operator.hpp"

namespace hb {

// A list of 1..8 shapes of one rank that together hold about `elements` elements, each
// aligned as the draw says. Lists are kept short enough that members hold several hundred
// elements or more, so that rounding each shape cannot push the total out of the profile.
std::vector<Shape> sample_list_shapes(CaseSampler& sampler, std::int64_t elements, int min_rank = 1,
                                      int max_rank = 4);
// Throws unless `list` has as many tensors as `first`, with the same shapes and dtype.
void check_matching_list(const std::string& op, const ArgSpec& first, const ArgSpec& list);
// Bytes of every tensor in the list.
double list_bytes(const ArgSpec& list);
// Elements of every tensor in the list.
double list_elements(const ArgSpec& list);
// The shortest innermost dimension among the members (the one alignment and tiling suffer on).
std::int64_t min_innermost(const ArgSpec& list);

}  // namespace hb
