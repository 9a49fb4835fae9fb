#include "core/shape.hpp"

#include "core/error.hpp"

namespace hb {

std::int64_t numel(const Shape& shape) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

Shape contiguous_strides(const Shape& shape) {
    Shape strides(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * shape[d + 1];
    return strides;
}

std::string shape_to_string(const Shape& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

int normalize_dim(std::int64_t dim, std::size_t rank, const std::string& what) {
    const auto r = static_cast<std::int64_t>(rank);
    if (dim < -r || dim >= r)
        throw Error(what + ": dim " + std::to_string(dim) + " is out of range for rank " +
                    std::to_string(rank));
    return static_cast<int>(dim < 0 ? dim + r : dim);
}

}  // namespace hb
