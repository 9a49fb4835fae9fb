// Block conversions between a dtype's storage and fp64, the harness's inner loops: narrowing
// (correctly rounded: to nearest, ties to even, straight from fp64 by rounding to odd into
// fp32 and then to nearest even), widening (exact), and rounding fp64 values to a dtype's
// precision. Each gives the same bits as core/dtype's per-element conversions, on every CPU
// (built for AVX-512, AVX2 and the x86-64 base; fp16 with the CPU's F16C conversions where it
// has them), fast enough to draw every timed call's inputs afresh and to verify its outputs.
#pragma once

#include <cstddef>

#include "core/dtype.hpp"

namespace hb {

// `out` points at element 0 of the destination block; every dtype (integers saturate and
// round to nearest, as store_element does).
void narrow_block(const double* in, std::size_t count, DType t, void* out);

// `in` points at element 0 of `count` elements stored as `t`: load_element of each.
void widen_block(const void* in, std::size_t count, DType t, double* out);

// round_to_dtype of each value; `in` and `out` may be the same.
void round_block(const double* in, std::size_t count, DType t, double* out);

}  // namespace hb
