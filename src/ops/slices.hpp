// A contiguous tensor seen as [outer, size, inner] around one dimension: the layout of every
// operator that reduces or normalizes along a dim (softmax, and slices of a reduction).
#pragma once

#include <cstdint>

#include "core/shape.hpp"

namespace hb {

struct SliceView {
    std::int64_t outer = 1;  // product of the dims before the axis
    std::int64_t size = 1;   // the axis itself
    std::int64_t inner = 1;  // product of the dims after it (the stride of the axis)
};

inline SliceView slice_view(const Shape& shape, int axis) {
    SliceView v;
    for (int d = 0; d < axis; ++d) v.outer *= shape[static_cast<std::size_t>(d)];
    v.size = shape[static_cast<std::size_t>(axis)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) v.inner *= shape[d];
    return v;
}

}  // namespace hb
