// Baseline for strided_slice: oneDNN's reorder (ops/reorder_baseline.hpp) from x viewed with
// the slice's offset and strides to a plain y, the strided view a framework hands oneDNN, when
// a oneDNN memory descriptor can hold that view; one cannot hold a negative stride, nor
// strides that nest with overlap (a step along an inner dim with a short outer step), so
// those slices take an OpenMP loop over the rows of y. The spec walk (TensorFlow's
// StridedSlice, as the operator defines it) is the kernel's own, like any submission's.
#include <cstdint>
#include <string>

#include "ops/reorder_baseline.hpp"

namespace {

using namespace hb::baseline;

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


std::size_t element_bytes(hb_dtype t) {
    switch (t) {
        case HB_INT8: case HB_UINT8: case HB_BOOL: return 1;
        case HB_FLOAT16: case HB_BFLOAT16: case HB_INT16: return 2;
        case HB_FLOAT32: case HB_INT32: return 4;
        case HB_FLOAT64: case HB_INT64: return 8;
    }
    return 0;
}

// The walk as a reorder: false when a step is negative, the view nests in a way a oneDNN
// descriptor cannot hold, or the dtype has no oneDNN form.
bool as_reorder(const Walk& w, hb_dtype dtype, StridedCopy& copy) {
    dnnl::memory::data_type type;
    int lanes = 1;
    if (!reorder_type(dtype, type, lanes)) return false;
    for (int t = 0; t < w.y_rank; ++t) {
        if (w.y_step[t] < 0) return false;
        copy.dims.push_back(w.y_shape[t]);
        copy.source_strides.push_back(w.y_step[t]);
    }
    copy.dtype = dtype;
    return reorder_can_describe(copy);
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    if (!x_arg || x_arg->count != 1) return 0;
    Walk w;
    if (*walk_spec(call, x_arg->tensors[0], w)) return 0;  // the kernel reports errors
    StridedCopy copy;
    if (!as_reorder(w, x_arg->tensors[0].dtype, copy)) return 0;
    try {
        reorder_plan(copy);
    } catch (const std::exception&) {
    }
    return 0;
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "strided_slice: expected input `x` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "strided_slice: the baseline needs contiguous tensors");
    if (x.dtype != y.dtype) return hb_fail(call, 2, "strided_slice: y must have x's dtype");
    Walk w;
    if (const char* error = walk_spec(call, x, w); *error) return hb_fail(call, 2, error);
    if (w.y_rank != y.rank) return hb_fail(call, 2, "strided_slice: y's rank does not match the spec");
    for (int t = 0; t < w.y_rank; ++t)
        if (w.y_shape[t] != y.shape[t]) return hb_fail(call, 2, "strided_slice: y's shape does not match the spec");
    if (hb_numel(&y) == 0) return 0;
    StridedCopy copy;
    if (as_reorder(w, x.dtype, copy))
        return guarded(call, [&] {
            const auto* source = static_cast<const char*>(x.data) + w.base * static_cast<std::int64_t>(element_bytes(x.dtype));
            run_reorder(copy, source, y.data);
            return 0;
        });
    switch (element_bytes(x.dtype)) {
        case 1: copy_rows(static_cast<const uint8_t*>(x.data), static_cast<uint8_t*>(y.data), w); return 0;
        case 2: copy_rows(static_cast<const uint16_t*>(x.data), static_cast<uint16_t*>(y.data), w); return 0;
        case 4: copy_rows(static_cast<const uint32_t*>(x.data), static_cast<uint32_t*>(y.data), w); return 0;
        case 8: copy_rows(static_cast<const uint64_t*>(x.data), static_cast<uint64_t*>(y.data), w); return 0;
    }
    return hb_fail(call, 2, "strided_slice: unsupported dtype");
}
