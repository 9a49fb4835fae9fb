// Reference unsorted_segment_sum: y[s, :] = sum of the rows data[j, :] with
// segment_ids[j] == s, 0 for empty segments. data is [N, ...] in float16, bfloat16, float32,
// int32 or int64; segment_ids is int32 or int64 [N]; y is [num_segments, data.shape[1:]].
// Floats accumulate in fp32 (rounded once at the end); integers in their own width, wrapping
// around on overflow (unsigned arithmetic, so the wrap is well defined). Each element adds its
// rows in row order on any thread count (segment_sum below).
#include <omp.h>

#include <cstdint>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

struct Fp32 {
    using Storage = float;
    using Acc = float;
    static float load(float v) { return v; }
    static float store(float v) { return v; }
};
struct Fp16 {
    using Storage = uint16_t;
    using Acc = float;
    static float load(uint16_t v) { return hb_f16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_f16(v); }
};
struct Bf16 {
    using Storage = uint16_t;
    using Acc = float;
    static float load(uint16_t v) { return hb_bf16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_bf16(v); }
};
struct Int32 {
    using Storage = int32_t;
    using Acc = uint32_t;
    static uint32_t load(int32_t v) { return static_cast<uint32_t>(v); }
    static int32_t store(uint32_t v) { return static_cast<int32_t>(v); }
};
struct Int64 {
    using Storage = int64_t;
    using Acc = uint64_t;
    static uint64_t load(int64_t v) { return static_cast<uint64_t>(v); }
    static int64_t store(uint64_t v) { return static_cast<int64_t>(v); }
};

// Accumulators of one element each: in y itself where the accumulator has y's width
// (float32; int32 and int64 as their unsigned kin, which may alias them), in the fp32
// workspace for float16 and bfloat16.
template <typename Type>
constexpr bool accumulates_in_place = sizeof(typename Type::Acc) == sizeof(typename Type::Storage);

// Each thread owns a part of y and adds the rows into it in row order, so every element's sum
// has the serial order whatever the thread count, and no two threads write one element. Long
// rows are split by columns (every thread walks all rows); short ones by segments (every
// thread reads all ids and adds only the rows of its own segments).
template <typename Type, typename Id>
void segment_sum(const hb_tensor& data, const Id* ids, const hb_tensor& y, void* workspace, int64_t rows, int64_t len,
                 int64_t segments, int threads) {
    using Acc = typename Type::Acc;
    const auto* in = static_cast<const typename Type::Storage*>(data.data);
    auto* out = static_cast<typename Type::Storage*>(y.data);
    Acc* acc = accumulates_in_place<Type> ? reinterpret_cast<Acc*>(out) : static_cast<Acc*>(workspace);
    const int64_t n = segments * len;
    const bool by_columns = len >= 64 * static_cast<int64_t>(threads);
#pragma omp parallel num_threads(threads) if (rows * len >= 65536 || n >= 65536)
    {
        const int64_t parts = omp_get_num_threads(), part = omp_get_thread_num();
        const int64_t extent = by_columns ? len : segments;
        const int64_t begin = extent * part / parts, end = extent * (part + 1) / parts;
        const int64_t s_begin = by_columns ? 0 : begin, s_end = by_columns ? segments : end;
        const int64_t k_begin = by_columns ? begin : 0, k_end = by_columns ? end : len;
        for (int64_t s = s_begin; s < s_end; ++s)
            for (int64_t k = k_begin; k < k_end; ++k) acc[s * len + k] = Acc(0);
        for (int64_t j = 0; j < rows; ++j) {
            const int64_t s = static_cast<int64_t>(ids[j]);
            if (s < s_begin || s >= s_end) continue;  // another thread's, or never drawn (dropped as TensorFlow does)
            const auto* src = in + j * len;
            Acc* dst = acc + s * len;
            for (int64_t k = k_begin; k < k_end; ++k) dst[k] += Type::load(src[k]);
        }
        if constexpr (!accumulates_in_place<Type>) {
            for (int64_t s = s_begin; s < s_end; ++s)
                for (int64_t k = k_begin; k < k_end; ++k) out[s * len + k] = Type::store(acc[s * len + k]);
        }
    }
}

template <typename Type>
int dispatch_ids(const hb_tensor& data, const hb_tensor& ids, const hb_tensor& y, void* workspace, int64_t rows,
                 int64_t len, int64_t segments, int threads) {
    if (ids.dtype == HB_INT32)
        segment_sum<Type>(data, static_cast<const int32_t*>(ids.data), y, workspace, rows, len, segments, threads);
    else
        segment_sum<Type>(data, static_cast<const int64_t*>(ids.data), y, workspace, rows, len, segments, threads);
    return 0;
}

const hb_tensor* output_tensor(const hb_call* call) {
    const hb_arg* a = hb_output(call, "y");
    return a && a->count == 1 ? &a->tensors[0] : nullptr;
}

bool is_half(hb_dtype t) { return t == HB_FLOAT16 || t == HB_BFLOAT16; }

}  // namespace

// float16 and bfloat16 sum in fp32: one float per element of y.
extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    const hb_tensor* y = output_tensor(call);
    if (!y || !is_half(y->dtype)) return 0;
    return static_cast<uint64_t>(hb_numel(y)) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* data_arg = hb_input(call, "data");
    const hb_arg* ids_arg = hb_input(call, "segment_ids");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!data_arg || !ids_arg || !y_arg || data_arg->count != 1 || ids_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "unsorted_segment_sum: expected inputs data, segment_ids and output y");
    const hb_tensor& data = data_arg->tensors[0];
    const hb_tensor& ids = ids_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&data) || !hb_is_contiguous(&ids) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "unsorted_segment_sum: only contiguous tensors are supported");
    if (data.rank < 1 || ids.rank != 1 || ids.shape[0] != data.shape[0] || y.dtype != data.dtype)
        return hb_fail(call, 2, "unsorted_segment_sum: segment_ids must be [N] for data [N, ...]; y has data's dtype");
    if (ids.dtype != HB_INT32 && ids.dtype != HB_INT64)
        return hb_fail(call, 2, "unsorted_segment_sum: segment_ids must be int32 or int64");
    const int64_t rows = data.shape[0];
    const int64_t segments = y.shape[0];
    const int64_t len = segments > 0 ? hb_numel(&y) / segments : 0;  // elements a row (y's, so that no rows still zeroes y)
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    void* workspace = call->workspace;
    if (is_half(y.dtype) && (!workspace || call->workspace_bytes < static_cast<uint64_t>(hb_numel(&y)) * sizeof(float)))
        return hb_fail(call, 4, "unsorted_segment_sum: the fp32 accumulation needs the workspace");
    switch (data.dtype) {
        case HB_FLOAT32: return dispatch_ids<Fp32>(data, ids, y, workspace, rows, len, segments, threads);
        case HB_FLOAT16: return dispatch_ids<Fp16>(data, ids, y, workspace, rows, len, segments, threads);
        case HB_BFLOAT16: return dispatch_ids<Bf16>(data, ids, y, workspace, rows, len, segments, threads);
        case HB_INT32: return dispatch_ids<Int32>(data, ids, y, workspace, rows, len, segments, threads);
        case HB_INT64: return dispatch_ids<Int64>(data, ids, y, workspace, rows, len, segments, threads);
        default: return hb_fail(call, 2, "unsorted_segment_sum: unsupported data dtype");
    }
}
