// The spec walk of strided_slice (TensorFlow's StridedSlice), shared by its shape inference,
// golden and work model: which element of x each output coordinate reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/problem.hpp"

namespace hb::strided_slice {

// One dimension of x as the slice reads it: `count` elements from `start`, `step` apart.
// A shrunk dimension reads one element and does not appear in y.
struct AxisRead {
    std::int64_t start = 0;
    std::int64_t step = 1;
    std::int64_t count = 0;
    bool shrunk = false;
};

struct SlicePlan {
    std::vector<AxisRead> axes;  // one per dimension of x, in order
    Shape y_shape;               // sliced dims and size-1 new axes, in spec order
    std::vector<int> y_source;   // per dim of y: the dim of x it walks, -1 for a new axis

    // Element offset in a contiguous x of y's first element, and per dim of y the step in
    // x's elements (0 for a new axis).
    std::int64_t base_offset(const Shape& x_shape) const;
    std::vector<std::int64_t> y_steps(const Shape& x_shape) const;
};

// Walks the spec (begin, end, strides and the five masks of `p`) over `x_shape`. Throws
// hb::Error naming the entry for every spec the operator cannot take (a zero stride, a shrunk
// index out of range, lists of different lengths, two ellipses, more entries than dims).
SlicePlan plan_slice(const Problem& p, const Shape& x_shape);

}  // namespace hb::strided_slice
