// Baseline for gather (torch.gather): y[..., j, ...] = x[..., index[..., j, ...], ...] along
// dim; y has index's shape. Plain OpenMP C++ for every dtype: oneDNN has no gather
// primitive. Index rows (every coordinate but the last) spread over threads; each row's
// x base offset is computed once and the row is one contiguous loop.
#include <cstdint>
#include <cstring>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

template <typename Index>
inline std::int64_t index_at(const void* data, std::int64_t j) {
    return static_cast<std::int64_t>(static_cast<const Index*>(data)[j]);
}

// Element is an unsigned integer of the element's size: gather copies bits.
template <typename Element, typename Index>
void gather_rows(const hb_tensor& x, const hb_tensor& index, const hb_tensor& y, int axis) {
    const int rank = index.rank;
    const auto* src = static_cast<const Element*>(x.data);
    auto* dst = static_cast<Element*>(y.data);
    const auto* idx = static_cast<const Index*>(index.data);
    std::int64_t x_strides[HB_MAX_RANK];
    std::int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
        x_strides[d] = stride;
        stride *= x.shape[d];
    }
    const std::int64_t width = rank > 0 ? index.shape[rank - 1] : 1;
    const std::int64_t rows = width > 0 ? hb_numel(&index) / width : 0;
    const std::int64_t axis_stride = rank > 0 ? x_strides[axis] : 1;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
        std::int64_t rest = r, base = 0;
        for (int d = rank - 2; d >= 0; --d) {
            const std::int64_t coordinate = rest % index.shape[d];
            rest /= index.shape[d];
            if (d != axis) base += coordinate * x_strides[d];
        }
        const Index* row_index = idx + r * width;
        Element* row_out = dst + r * width;
        if (axis == rank - 1 || rank == 0) {
            const Element* row_x = src + base;
            for (std::int64_t i = 0; i < width; ++i) row_out[i] = row_x[row_index[i]];
        } else {
            const Element* row_x = src + base;
            for (std::int64_t i = 0; i < width; ++i)
                row_out[i] = row_x[static_cast<std::int64_t>(row_index[i]) * axis_stride + i];
        }
    }
}

template <typename Element>
bool gather_for_index(const hb_tensor& x, const hb_tensor& index, const hb_tensor& y, int axis) {
    switch (index.dtype) {
        case HB_INT8: gather_rows<Element, std::int8_t>(x, index, y, axis); return true;
        case HB_INT16: gather_rows<Element, std::int16_t>(x, index, y, axis); return true;
        case HB_INT32: gather_rows<Element, std::int32_t>(x, index, y, axis); return true;
        case HB_INT64: gather_rows<Element, std::int64_t>(x, index, y, axis); return true;
        default: return false;
    }
}

std::size_t element_size(hb_dtype t) {
    switch (t) {
        case HB_INT8: case HB_UINT8: case HB_BOOL: return 1;
        case HB_FLOAT16: case HB_BFLOAT16: case HB_INT16: return 2;
        case HB_FLOAT32: case HB_INT32: return 4;
        case HB_FLOAT64: case HB_INT64: return 8;
    }
    return 0;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* index_arg = hb_input(call, "index");
    hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !index_arg || !y_arg || x_arg->count != 1 || index_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "gather: expected inputs `x`, `index` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& index = index_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&index) || !hb_is_contiguous(&y))
        return hb_fail(call, 1, "gather: the baseline needs contiguous tensors");
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&index) || index.rank != x.rank)
        return hb_fail(call, 2, "gather: y must have x's dtype and index's shape; index must have x's rank");
    std::int64_t dim = hb_attr_int(call, "dim", 0);
    const std::int64_t rank = x.rank > 0 ? x.rank : 1;
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return hb_fail(call, 2, "gather: dim is out of range");
    const int axis = static_cast<int>(dim);
    return guarded(call, [&] {
        bool known = false;
        switch (element_size(x.dtype)) {
            case 1: known = gather_for_index<std::uint8_t>(x, index, y, axis); break;
            case 2: known = gather_for_index<std::uint16_t>(x, index, y, axis); break;
            case 4: known = gather_for_index<std::uint32_t>(x, index, y, axis); break;
            case 8: known = gather_for_index<std::uint64_t>(x, index, y, axis); break;
        }
        return known ? 0 : hb_fail(call, 2, "gather: unsupported dtype of x or index");
    });
}
