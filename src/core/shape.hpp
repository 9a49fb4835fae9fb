// Shapes: dimension lists, element counts, row-major strides and printing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hb {

using Shape = std::vector<std::int64_t>;

std::int64_t numel(const Shape& shape);
Shape contiguous_strides(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[3, 5]"
// Normalizes a possibly negative dimension index; throws hb::Error when out of range.
int normalize_dim(std::int64_t dim, std::size_t rank, const std::string& what);

}  // namespace hb
