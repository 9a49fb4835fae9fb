// Rotated input copies for timed calls (methodology section 4): each timed call reads its
// inputs at an address it has not seen and with content that differs from every other call.
#pragma once

#include <cstdint>

#include "core/tensor.hpp"

namespace hb {

// Copy for timed call `variant` (>= 1): the base values circularly shifted by an offset
// derived from the variant (out[i] = base[(i + shift) mod n]). The content differs from
// every other call while the value distribution stays; every tensor of the same shape
// gets the same shift, so elementwise pairings between inputs (x with its mask) survive.
// A tensor of records (rank >= 2, innermost dim of 2 to max_record_elements: ROI boxes
// [K, 5], grids [..., 3], small filters) shifts by whole records, so that a row such as
// (batch index, x0, y0, x1, y1) stays one row; its variants are the records in rotated order,
// and a single record stays where it is. Variant 0 is the base itself. The harness rebuilds the same copy to
// verify an output.
void fill_variant(const Arg& base, int variant, Arg& dst);
std::int64_t variant_shift(std::int64_t n, int variant);
// The element shift of `spec` in `variant` (a multiple of the record length for records).
std::int64_t variant_element_shift(const TensorSpec& spec, int variant);
constexpr std::int64_t max_record_elements = 8;

}  // namespace hb
