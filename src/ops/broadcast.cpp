#include "ops/broadcast.hpp"

#include "core/error.hpp"

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

}  // namespace hb
