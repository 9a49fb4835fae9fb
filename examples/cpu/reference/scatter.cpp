// Reference scatter: y = copy of data, then for every element of indices (coordinates c) the
// target t = c with t[dim] = indices[c] receives updates[c] by `reduce`:
//   None/"update": assign; "add": +=; "multiply": *=; "amin"/"amax": min/max with y[t]
//   (NaN propagates) -- torch scatter / scatter_reduce(include_self=True).
// float16/bfloat16 add/multiply accumulate in an fp32 copy of y (the workspace) and round once;
// integer add/multiply wrap (two's complement, through unsigned arithmetic).
// Plain on purpose: the lines of indices along dim go to OpenMP threads; a line writes only
// its own line of y, so there are no races, and applies its contributions in index order.
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

enum class Reduce { update, add, multiply, amin, amax, unknown };

Reduce reduce_of(const hb_call* call) {
    const hb_attr* a = hb_attr_find(call, "reduce");
    if (!a || a->type == HB_ATTR_NONE) return Reduce::update;
    if (a->type != HB_ATTR_STRING) return Reduce::unknown;
    const std::string s = a->s;
    if (s == "update") return Reduce::update;
    if (s == "add") return Reduce::add;
    if (s == "multiply") return Reduce::multiply;
    if (s == "amin") return Reduce::amin;
    if (s == "amax") return Reduce::amax;
    return Reduce::unknown;
}

// Values in a wide type: fp32 for the float dtypes, int64 for the integers.
double load_float(const void* p, hb_dtype t, int64_t i) {
    switch (t) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(p)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
        default: return static_cast<const float*>(p)[i];
    }
}
int64_t load_int(const void* p, hb_dtype t, int64_t i) {
    return t == HB_INT32 ? static_cast<const int32_t*>(p)[i] : static_cast<const int64_t*>(p)[i];
}

float combine(Reduce reduce, float a, float b) {
    switch (reduce) {
        case Reduce::add: return a + b;
        case Reduce::multiply: return a * b;
        case Reduce::amin: return a != a ? a : b != b ? b : (b < a ? b : a);
        case Reduce::amax: return a != a ? a : b != b ? b : (b > a ? b : a);
        default: return b;
    }
}
int64_t combine(Reduce reduce, int64_t a, int64_t b) {
    switch (reduce) {
        case Reduce::add: return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
        case Reduce::multiply: return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
        case Reduce::amin: return b < a ? b : a;
        case Reduce::amax: return b > a ? b : a;
        default: return b;
    }
}

bool is_half(hb_dtype t) { return t == HB_FLOAT16 || t == HB_BFLOAT16; }
bool needs_workspace(hb_dtype t, Reduce r) { return is_half(t) && (r == Reduce::add || r == Reduce::multiply); }

size_t element_size(hb_dtype t) {
    switch (t) {
        case HB_FLOAT16: case HB_BFLOAT16: return 2;
        case HB_FLOAT32: case HB_INT32: return 4;
        default: return 8;
    }
}

const hb_tensor* data_tensor(const hb_call* call) {
    const hb_arg* a = hb_input(call, "data");
    return a && a->count == 1 ? &a->tensors[0] : nullptr;
}

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    const hb_tensor* data = data_tensor(call);
    if (!data || !needs_workspace(data->dtype, reduce_of(call))) return 0;
    return static_cast<uint64_t>(hb_numel(data)) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* indices_arg = hb_input(call, "indices");
    const hb_arg* updates_arg = hb_input(call, "updates");
    hb_arg* y_arg = hb_output(call, "y");
    const hb_tensor* data_ptr = data_tensor(call);
    if (!data_ptr || !indices_arg || !updates_arg || !y_arg || indices_arg->count != 1 || updates_arg->count != 1 ||
        y_arg->count != 1)
        return hb_fail(call, 1, "scatter: expected inputs `data`, `indices`, `updates` and output `y`");
    const hb_tensor& data = *data_ptr;
    const hb_tensor& indices = indices_arg->tensors[0];
    const hb_tensor& updates = updates_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&data) || !hb_is_contiguous(&indices) || !hb_is_contiguous(&updates) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "scatter: only contiguous tensors are supported");
    if (y.dtype != data.dtype || updates.dtype != data.dtype || hb_numel(&y) != hb_numel(&data))
        return hb_fail(call, 2, "scatter: y and updates must have data's dtype, y data's shape");
    if (indices.dtype != HB_INT32 && indices.dtype != HB_INT64)
        return hb_fail(call, 2, "scatter: indices must be int32 or int64");
    if (indices.rank != data.rank || updates.rank != data.rank)
        return hb_fail(call, 2, "scatter: data, indices and updates must have the same rank");
    const Reduce reduce = reduce_of(call);
    if (reduce == Reduce::unknown) return hb_fail(call, 2, "scatter: reduce must be None, update, add, multiply, amin or amax");
    const bool via_f32 = needs_workspace(data.dtype, reduce);
    if (via_f32 && (!call->workspace || call->workspace_bytes < static_cast<uint64_t>(hb_numel(&data)) * sizeof(float)))
        return hb_fail(call, 4, "scatter: the fp32 accumulation needs the workspace");

    const int rank = data.rank;
    int64_t dim = hb_attr_int(call, "dim", 0);
    if (dim < 0) dim += rank > 0 ? rank : 1;
    if (dim < 0 || dim >= (rank > 0 ? rank : 1)) return hb_fail(call, 4, "scatter: dim is out of range");

    int64_t data_strides[HB_MAX_RANK], index_strides[HB_MAX_RANK], update_strides[HB_MAX_RANK];
    int64_t sd = 1, si = 1, su = 1;
    for (int d = rank - 1; d >= 0; --d) {
        data_strides[d] = sd, index_strides[d] = si, update_strides[d] = su;
        sd *= data.shape[d], si *= indices.shape[d], su *= updates.shape[d];
    }
    const int64_t n = hb_numel(&data);
    const hb_dtype t = data.dtype;
    const bool floating = t == HB_FLOAT32 || is_half(t);
    float* acc = static_cast<float*>(call->workspace);
    if (via_f32) {
        for (int64_t i = 0; i < n; ++i) acc[i] = static_cast<float>(load_float(data.data, t, i));
    } else {
        std::memcpy(y.data, data.data, static_cast<size_t>(n) * element_size(t));
    }

    const int64_t per_line = rank > 0 ? indices.shape[dim] : 1;
    const int64_t lines = per_line > 0 ? hb_numel(&indices) / per_line : 0;
#pragma omp parallel for schedule(static) if (lines * per_line >= 32768)
    for (int64_t line = 0; line < lines; ++line) {
        int64_t rest = line, data_base = 0, index_base = 0, update_base = 0;
        for (int d = rank - 1; d >= 0; --d) {
            if (d == dim) continue;
            const int64_t c = rest % indices.shape[d];
            rest /= indices.shape[d];
            data_base += c * data_strides[d], index_base += c * index_strides[d], update_base += c * update_strides[d];
        }
        for (int64_t k = 0; k < per_line; ++k) {
            const int64_t at = rank > 0 ? k : 0;
            const int64_t position = load_int(indices.data, indices.dtype, index_base + at * (rank ? index_strides[dim] : 1));
            const int64_t target = data_base + position * (rank ? data_strides[dim] : 1);
            const int64_t source = update_base + at * (rank ? update_strides[dim] : 1);
            if (reduce == Reduce::update) {  // copy the bits
                const size_t size = element_size(t);
                std::memcpy(static_cast<char*>(y.data) + target * size,
                            static_cast<const char*>(updates.data) + source * size, size);
            } else if (via_f32) {
                acc[target] = combine(reduce, acc[target], static_cast<float>(load_float(updates.data, t, source)));
            } else if (floating) {
                const float v = combine(reduce, static_cast<float>(load_float(y.data, t, target)),
                                        static_cast<float>(load_float(updates.data, t, source)));
                if (t == HB_FLOAT32) static_cast<float*>(y.data)[target] = v;
                else if (t == HB_FLOAT16) static_cast<uint16_t*>(y.data)[target] = hb_f32_to_f16(v);
                else static_cast<uint16_t*>(y.data)[target] = hb_f32_to_bf16(v);
            } else {
                const int64_t v = combine(reduce, load_int(y.data, t, target), load_int(updates.data, t, source));
                if (t == HB_INT32) static_cast<int32_t*>(y.data)[target] = static_cast<int32_t>(static_cast<uint32_t>(v));
                else static_cast<int64_t*>(y.data)[target] = v;
            }
        }
    }
    if (via_f32) {
        auto* out = static_cast<uint16_t*>(y.data);
        for (int64_t i = 0; i < n; ++i) out[i] = t == HB_FLOAT16 ? hb_f32_to_f16(acc[i]) : hb_f32_to_bf16(acc[i]);
    }
    return 0;
}
