#include "ops/broadcast.hpp"

#include "core/error.hpp"
#include "ops/problem.hpp"

namespace hb {

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& context) {
    const std::size_t rank = std::max(a.size(), b.size());
    Shape out(rank);
    for (std::size_t k = 0; k < rank; ++k) {  // k counts from the innermost dimension
        const std::int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
        const std::int64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
        if (da != db && da != 1 && db != 1)
            throw Error(context + "shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                        " do not broadcast: dimension " + std::to_string(static_cast<std::int64_t>(rank - 1 - k)) +
                        " of the result has sizes " + std::to_string(da) + " and " + std::to_string(db) +
                        " (each pair must be equal or contain a 1)");
        out[rank - 1 - k] = da == 1 ? db : da;
    }
    return out;
}

ArgSpec broadcast_binary_output(const Problem& p, const std::string& op) {
    const TensorSpec& x1 = p.input("x1").tensors.at(0);
    const TensorSpec& x2 = p.input("x2").tensors.at(0);
    if (x1.dtype != x2.dtype)
        throw Error(p.context() + "x1 is " + std::string(dtype_name(x1.dtype)) + " but x2 is " +
                    std::string(dtype_name(x2.dtype)) + "; " + op + " takes two inputs of one dtype");
    return ArgSpec{"y", false, true, {TensorSpec{x1.dtype, broadcast_shapes(x1.shape, x2.shape, p.context())}}};
}

}  // namespace hb
