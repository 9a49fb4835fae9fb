// Narrowing blocks of fp64 values to a floating dtype's storage, correctly rounded (to
// nearest, ties to even, straight from fp64: round to odd into fp32, then to nearest even),
// fast enough to draw every timed call's inputs afresh (fp16 with the CPU's F16C
// conversions where it has them).
#pragma once

#include <cstddef>

#include "core/dtype.hpp"

namespace hb {

// `out` points at element 0 of the destination block; `t` is f16, bf16, f32 or f64.
void narrow_block(const double* in, std::size_t count, DType t, void* out);

}  // namespace hb
