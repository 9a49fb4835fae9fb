// Index inputs made valid, for the input hooks of the operators that read them (gather,
// scatter): every index outside [0, size) is drawn again, uniformly in it, in element order.
// Typed loops for the integer dtypes indices come in: through load_element and store_element,
// one call each per element, this was most of those operators' input preparation on timed
// calls. The values are those of the element-by-element rule, bit for bit.
#pragma once

#include <cstdint>
#include <limits>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace hb {

namespace index_inputs_detail {
// False (nothing done) when a drawn index might not fit I: the generic path saturates those.
template <typename I>
bool redraw(I* values, std::int64_t n, std::int64_t size, Rng& rng) {
    if (size - 1 > static_cast<std::int64_t>(std::numeric_limits<I>::max())) return false;
    for (std::int64_t j = 0; j < n; ++j)
        if (!(values[j] >= 0 && static_cast<std::int64_t>(values[j]) < size)) values[j] = static_cast<I>(rng.uniform_int(0, size - 1));
    return true;
}
}  // namespace index_inputs_detail

inline void redraw_out_of_range_indices(Tensor& index, std::int64_t size, Rng& rng) {
    const std::int64_t n = index.numel();
    using namespace index_inputs_detail;
    void* data = index.data();
    switch (index.spec.dtype) {
        case DType::i8: if (redraw(static_cast<std::int8_t*>(data), n, size, rng)) return; break;
        case DType::i16: if (redraw(static_cast<std::int16_t*>(data), n, size, rng)) return; break;
        case DType::i32: if (redraw(static_cast<std::int32_t*>(data), n, size, rng)) return; break;
        case DType::i64: if (redraw(static_cast<std::int64_t*>(data), n, size, rng)) return; break;
        default: break;
    }
    for (std::int64_t j = 0; j < n; ++j) {
        const double k = index.get(static_cast<std::size_t>(j));
        if (!(k >= 0 && k < static_cast<double>(size)))
            index.set(static_cast<std::size_t>(j), static_cast<double>(rng.uniform_int(0, size - 1)));
    }
}

}  // namespace hb
