// Reference strided_slice: TensorFlow's StridedSlice (begin, end, strides and the five masks;
// see `hapbench info strided_slice`). The spec walk below finds, for every dim of y, where it
// starts in x and how far apart its elements are; then every dtype is copied as raw bytes of
// its size. Plain on purpose: one OpenMP loop over the rows of y (every dim but the last),
// each row walking x with the innermost step.
#include <omp.h>

#include <cstdint>

#include "hapbench/kernel.h"

namespace {

struct Walk {
    int y_rank = 0;
    int64_t y_shape[HB_MAX_RANK] = {};
    int64_t y_step[HB_MAX_RANK] = {};  // in elements of x; 0 for a new axis
    int64_t base = 0;                  // offset in x of y's first element
};

const hb_attr* int_list(const hb_call* call, const char* name) {
    const hb_attr* a = hb_attr_find(call, name);
    return a && a->type == HB_ATTR_INT_LIST ? a : nullptr;
}

int64_t mask(const hb_call* call, const char* name) {
    const hb_attr* a = hb_attr_find(call, name);
    return a && (a->type == HB_ATTR_INT || a->type == HB_ATTR_BOOL) ? a->i : 0;
}

int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

// Empty string on success, else what is wrong with the spec.
const char* walk_spec(const hb_call* call, const hb_tensor& x, Walk& w) {
    const hb_attr* begin = int_list(call, "begin");
    const hb_attr* end = int_list(call, "end");
    const hb_attr* strides = int_list(call, "strides");
    if (!begin || !end || !strides) return "strided_slice: begin, end and strides must be int lists";
    const int entries = begin->count;
    if (end->count != entries || strides->count != entries || entries > 32)
        return "strided_slice: begin, end and strides must have the same length (at most 32)";
    const int64_t begin_mask = mask(call, "begin_mask"), end_mask = mask(call, "end_mask");
    const int64_t ellipsis_mask = mask(call, "ellipsis_mask"), shrink_mask = mask(call, "shrink_axis_mask");
    const int64_t new_axis_mask = mask(call, "new_axis_mask");
    if (__builtin_popcountll(static_cast<uint64_t>(ellipsis_mask)) > 1) return "strided_slice: more than one ellipsis";
    int64_t x_stride[HB_MAX_RANK];
    int64_t s = 1;
    for (int d = x.rank - 1; d >= 0; --d) {
        x_stride[d] = s;
        s *= x.shape[d];
    }
    const int named = entries - __builtin_popcountll(static_cast<uint64_t>(new_axis_mask)) - (ellipsis_mask ? 1 : 0);
    if (named > x.rank) return "strided_slice: the spec names more dims than x has";
    int d = 0;
    auto emit = [&](int64_t size, int64_t step) {
        if (w.y_rank == HB_MAX_RANK) return false;
        w.y_shape[w.y_rank] = size;
        w.y_step[w.y_rank++] = step;
        return true;
    };
    for (int e = 0; e < entries; ++e) {
        const int64_t bit = int64_t{1} << e;
        if (new_axis_mask & bit) {
            if (!emit(1, 0)) return "strided_slice: y has more than 8 dims";
            continue;
        }
        if (ellipsis_mask & bit) {
            for (int k = 0; k < x.rank - named; ++k, ++d)
                if (!emit(x.shape[d], x_stride[d])) return "strided_slice: y has more than 8 dims";
            continue;
        }
        const int64_t n = x.shape[d], step = strides->ints[e];
        if (step == 0) return "strided_slice: a stride is 0";
        if (shrink_mask & bit) {
            int64_t index = begin->ints[e];
            if (begin_mask & bit) index = step > 0 ? 0 : n - 1;
            else if (index < 0) index += n;
            if (index < 0 || index >= n) return "strided_slice: a shrunk index is outside its dim";
            w.base += index * x_stride[d++];
            continue;
        }
        const int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
        int64_t b = (begin_mask & bit) ? (step > 0 ? 0 : n - 1) : (begin->ints[e] < 0 ? begin->ints[e] + n : begin->ints[e]);
        int64_t f = (end_mask & bit) ? (step > 0 ? n : -1) : (end->ints[e] < 0 ? end->ints[e] + n : end->ints[e]);
        b = clamp(b, lo, hi);
        f = clamp(f, lo, hi);
        const int64_t span = step > 0 ? f - b : b - f, magnitude = step > 0 ? step : -step;
        const int64_t count = span > 0 ? (span + magnitude - 1) / magnitude : 0;
        if (count > 0) w.base += b * x_stride[d];
        if (!emit(count, step * x_stride[d])) return "strided_slice: y has more than 8 dims";
        ++d;
    }
    for (; d < x.rank; ++d)
        if (!emit(x.shape[d], x_stride[d])) return "strided_slice: y has more than 8 dims";
    return "";
}

template <typename Element>
void copy_rows(const Element* x, Element* y, const Walk& w) {
    const int64_t width = w.y_rank > 0 ? w.y_shape[w.y_rank - 1] : 1;
    const int64_t inner_step = w.y_rank > 0 ? w.y_step[w.y_rank - 1] : 0;
    int64_t rows = 1;
    for (int t = 0; t + 1 < w.y_rank; ++t) rows *= w.y_shape[t];
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        int64_t rest = r, source = w.base;
        for (int t = w.y_rank - 2; t >= 0; --t) {
            source += (rest % w.y_shape[t]) * w.y_step[t];
            rest /= w.y_shape[t];
        }
        Element* out = y + r * width;
        for (int64_t j = 0; j < width; ++j) out[j] = x[source + j * inner_step];
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "strided_slice: expected input `x` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "strided_slice: only contiguous tensors are supported");
    if (x.dtype != y.dtype) return hb_fail(call, 2, "strided_slice: y must have x's dtype");
    Walk w;
    if (const char* error = walk_spec(call, x, w); *error) return hb_fail(call, 2, error);
    if (w.y_rank != y.rank) return hb_fail(call, 2, "strided_slice: y's rank does not match the spec");
    for (int t = 0; t < w.y_rank; ++t)
        if (w.y_shape[t] != y.shape[t]) return hb_fail(call, 2, "strided_slice: y's shape does not match the spec");
    if (hb_numel(&y) == 0) return 0;
    switch (x.dtype) {
        case HB_INT8: case HB_UINT8: case HB_BOOL:
            copy_rows(static_cast<const uint8_t*>(x.data), static_cast<uint8_t*>(y.data), w);
            return 0;
        case HB_FLOAT16: case HB_BFLOAT16: case HB_INT16:
            copy_rows(static_cast<const uint16_t*>(x.data), static_cast<uint16_t*>(y.data), w);
            return 0;
        case HB_FLOAT32: case HB_INT32:
            copy_rows(static_cast<const uint32_t*>(x.data), static_cast<uint32_t*>(y.data), w);
            return 0;
        case HB_FLOAT64: case HB_INT64:
            copy_rows(static_cast<const uint64_t*>(x.data), static_cast<uint64_t*>(y.data), w);
            return 0;
    }
    return hb_fail(call, 2, "strided_slice: unsupported dtype");
}
