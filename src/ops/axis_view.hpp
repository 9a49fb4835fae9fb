// A contiguous tensor seen around one axis as [outer, size, inner]: element (o, k, i) sits at
// (o * size + k) * inner + i, and row-major strides for tensors of different shapes. The
// reductions, normalizations, scans and index operators along a dim (softmax, arg_max, cummin,
// gather, scatter) walk their tensors this way.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace hb {

struct AxisView {
    std::int64_t outer = 1, size = 1, inner = 1;
    std::int64_t at(std::int64_t o, std::int64_t k, std::int64_t i) const { return (o * size + k) * inner + i; }
    std::int64_t lines() const { return outer * inner; }  // 1-D slices along the axis
};

inline AxisView axis_view(const Shape& shape, int axis) {
    AxisView v;
    for (int d = 0; d < axis; ++d) v.outer *= shape[static_cast<std::size_t>(d)];
    v.size = shape.empty() ? 1 : shape[static_cast<std::size_t>(axis)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) v.inner *= shape[d];
    return v;
}

// Row-major strides in elements (gather and scatter walk tensors of different shapes).
inline std::vector<std::int64_t> row_major_strides(const Shape& shape) {
    std::vector<std::int64_t> strides(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    return strides;
}

// Copies element `from` over element `to` of a raw buffer of dtype `t`, bit for bit (an
// fp64 round trip would lose int64 values beyond 2^53).
inline void copy_element(void* data, DType t, std::int64_t from, std::int64_t to) {
    const std::size_t size = dtype_size(t);
    auto* bytes = static_cast<unsigned char*>(data);
    std::memmove(bytes + static_cast<std::size_t>(to) * size, bytes + static_cast<std::size_t>(from) * size, size);
}

}  // namespace hb
