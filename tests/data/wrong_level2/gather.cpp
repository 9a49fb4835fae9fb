// WRONG gather (a test fixture): computes the x offset with the index's strides, as if index
// had x's shape in every dimension but dim. Right when it does; wrong in the cases whose
// index is smaller than x in another dimension (torch allows that), which must fail.
// Otherwise the reference kernel.
#include <omp.h>

#include <cstdint>
#include <cstring>

#include "hapbench/kernel.h"

namespace {

int64_t load_index(const hb_tensor& index, int64_t j) {
    switch (index.dtype) {
        case HB_INT8: return static_cast<const int8_t*>(index.data)[j];
        case HB_INT16: return static_cast<const int16_t*>(index.data)[j];
        case HB_INT32: return static_cast<const int32_t*>(index.data)[j];
        default: return static_cast<const int64_t*>(index.data)[j];
    }
}

size_t element_size(hb_dtype t) {
    switch (t) {
        case HB_INT8: case HB_UINT8: case HB_BOOL: return 1;
        case HB_FLOAT16: case HB_BFLOAT16: case HB_INT16: return 2;
        case HB_FLOAT32: case HB_INT32: return 4;
        default: return 8;
    }
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
        return hb_fail(call, 3, "gather: only contiguous tensors are supported");
    if (y.dtype != x.dtype || index.rank != x.rank || hb_numel(&y) != hb_numel(&index))
        return hb_fail(call, 2, "gather: y must have x's dtype and index's shape; index must have x's rank");
    if (index.dtype != HB_INT8 && index.dtype != HB_INT16 && index.dtype != HB_INT32 && index.dtype != HB_INT64)
        return hb_fail(call, 2, "gather: index must be int8, int16, int32 or int64");

    const int64_t rank = x.rank > 0 ? x.rank : 1;
    int64_t dim = hb_attr_int(call, "dim", 0);
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return hb_fail(call, 4, "gather: dim is out of range for x's rank");

    int64_t x_strides[HB_MAX_RANK];
    int64_t stride = 1;
    for (int32_t d = x.rank - 1; d >= 0; --d) {
        x_strides[d] = stride;
        stride *= d == dim ? x.shape[d] : index.shape[d];  // the bug: index's sizes outside dim
    }
    const size_t size = element_size(x.dtype);
    const auto* src = static_cast<const unsigned char*>(x.data);
    auto* dst = static_cast<unsigned char*>(y.data);
    const int64_t n = hb_numel(&index);
#pragma omp parallel for schedule(static) if (n >= 32768)
    for (int64_t j = 0; j < n; ++j) {
        int64_t rest = j, offset = 0;
        for (int32_t d = index.rank - 1; d >= 0; --d) {
            const int64_t coordinate = rest % index.shape[d];
            rest /= index.shape[d];
            offset += (d == dim ? load_index(index, j) : coordinate) * x_strides[d];
        }
        std::memcpy(dst + j * size, src + offset * size, size);
    }
    return 0;
}
