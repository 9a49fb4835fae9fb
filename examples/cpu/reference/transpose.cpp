// Reference transpose: y = torch.permute(x, perm).contiguous(). Pure data movement, every
// dtype copied as raw bytes of its size (so NaN payloads, -0 and int64 values survive).
// Plain on purpose: one OpenMP loop over the rows of y (every dim but the last); each row
// finds its start in x once and walks x with the stride of the dim that became y's last.
#include <omp.h>

#include <cstdint>

#include "hapbench/kernel.h"

namespace {

template <typename Element>
void transpose_rows(const Element* x, Element* y, int rank, const int64_t* y_shape, const int64_t* source_strides) {
    const int64_t width = rank > 0 ? y_shape[rank - 1] : 1;
    const int64_t inner_stride = rank > 0 ? source_strides[rank - 1] : 1;
    int64_t rows = 1;
    for (int t = 0; t + 1 < rank; ++t) rows *= y_shape[t];
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        int64_t rest = r, base = 0;
        for (int t = rank - 2; t >= 0; --t) {
            base += (rest % y_shape[t]) * source_strides[t];
            rest /= y_shape[t];
        }
        Element* out = y + r * width;
        const Element* in = x + base;
        for (int64_t j = 0; j < width; ++j) out[j] = in[j * inner_stride];
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    hb_arg* y_arg = hb_output(call, "y");
    const hb_attr* perm = hb_attr_find(call, "perm");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "transpose: expected input `x` and output `y`");
    if (!perm || perm->type != HB_ATTR_INT_LIST) return hb_fail(call, 1, "transpose: attribute `perm` (int list) is missing");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "transpose: only contiguous tensors are supported");
    if (x.dtype != y.dtype) return hb_fail(call, 2, "transpose: y must have x's dtype");
    const int rank = x.rank;
    if (perm->count != rank || y.rank != rank) return hb_fail(call, 2, "transpose: perm needs one entry per dimension of x");

    int64_t x_strides[HB_MAX_RANK], source_strides[HB_MAX_RANK];
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
        x_strides[d] = stride;
        stride *= x.shape[d];
    }
    bool seen[HB_MAX_RANK] = {};
    for (int t = 0; t < rank; ++t) {
        const int64_t axis = perm->ints[t] < 0 ? perm->ints[t] + rank : perm->ints[t];
        if (axis < 0 || axis >= rank || seen[axis]) return hb_fail(call, 2, "transpose: perm is not a permutation of the dims of x");
        seen[axis] = true;
        if (y.shape[t] != x.shape[axis]) return hb_fail(call, 2, "transpose: y's shape is not x's shape permuted");
        source_strides[t] = x_strides[axis];
    }
    if (hb_numel(&x) == 0) return 0;

    switch (x.dtype) {
        case HB_INT8: case HB_UINT8: case HB_BOOL:
            transpose_rows(static_cast<const uint8_t*>(x.data), static_cast<uint8_t*>(y.data), rank, y.shape, source_strides);
            return 0;
        case HB_FLOAT16: case HB_BFLOAT16: case HB_INT16:
            transpose_rows(static_cast<const uint16_t*>(x.data), static_cast<uint16_t*>(y.data), rank, y.shape, source_strides);
            return 0;
        case HB_FLOAT32: case HB_INT32:
            transpose_rows(static_cast<const uint32_t*>(x.data), static_cast<uint32_t*>(y.data), rank, y.shape, source_strides);
            return 0;
        case HB_FLOAT64: case HB_INT64:
            transpose_rows(static_cast<const uint64_t*>(x.data), static_cast<uint64_t*>(y.data), rank, y.shape, source_strides);
            return 0;
    }
    return hb_fail(call, 2, "transpose: unsupported dtype");
}
