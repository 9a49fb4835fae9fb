// WRONG on purpose (tests/integration/test_wrong_level2_spatial.cpp): accumulates float16 and
// bfloat16 sums in the storage dtype, rounding after every addition, so long segments stall
// and drift; float32 and integer sums are right. Otherwise the reference kernel.
#include <omp.h>

#include <cstdint>
#include <vector>

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

template <typename Type, typename Id>
void segment_sum(const hb_tensor& data, const Id* ids, const hb_tensor& y, int64_t rows, int64_t len,
                 int64_t segments, int threads) {
    using Acc = typename Type::Acc;
    const auto* in = static_cast<const typename Type::Storage*>(data.data);
    auto* out = static_cast<typename Type::Storage*>(y.data);
    std::vector<Acc> acc(static_cast<size_t>(segments * len), Acc(0));
    // Rows in order; the elements of a row in parallel when rows are long.
    for (int64_t j = 0; j < rows; ++j) {
        const int64_t s = static_cast<int64_t>(ids[j]);
        if (s < 0 || s >= segments) continue;  // never drawn; dropped as TensorFlow does
        const auto* src = in + j * len;
        Acc* dst = acc.data() + s * len;
#pragma omp parallel for schedule(static) num_threads(threads) if (len >= 65536)
        for (int64_t k = 0; k < len; ++k) dst[k] = Type::load(Type::store(dst[k] + Type::load(src[k])));  // the bug
    }
    const int64_t n = segments * len;
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 65536)
    for (int64_t i = 0; i < n; ++i) out[i] = Type::store(acc[static_cast<size_t>(i)]);
}

template <typename Type>
int dispatch_ids(const hb_tensor& data, const hb_tensor& ids, const hb_tensor& y, int64_t rows, int64_t len,
                 int64_t segments, int threads) {
    if (ids.dtype == HB_INT32)
        segment_sum<Type>(data, static_cast<const int32_t*>(ids.data), y, rows, len, segments, threads);
    else
        segment_sum<Type>(data, static_cast<const int64_t*>(ids.data), y, rows, len, segments, threads);
    return 0;
}

}  // namespace

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
    const int64_t len = rows > 0 ? hb_numel(&data) / rows : 0;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (data.dtype) {
        case HB_FLOAT32: return dispatch_ids<Fp32>(data, ids, y, rows, len, segments, threads);
        case HB_FLOAT16: return dispatch_ids<Fp16>(data, ids, y, rows, len, segments, threads);
        case HB_BFLOAT16: return dispatch_ids<Bf16>(data, ids, y, rows, len, segments, threads);
        case HB_INT32: return dispatch_ids<Int32>(data, ids, y, rows, len, segments, threads);
        case HB_INT64: return dispatch_ids<Int64>(data, ids, y, rows, len, segments, threads);
        default: return hb_fail(call, 2, "unsorted_segment_sum: unsupported data dtype");
    }
}
