// Reference moe_gating_top_k_softmax: x [N, E] or [B, N, E] seen as R rows of E logits. Per
// row, in fp32: p = softmax(x) (max subtracted; NaN propagates), the k experts with the
// largest logits in descending order (softmax keeps the order of x: NaN first, equal logits
// by the lower index), y[r, j] = p of the j-th expert, expert_idx[r, j] = that expert (E
// when finished[r] is true), row_idx[r, j] = j * R + r.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load(const hb_tensor& t, int64_t i) {
    switch (t.dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        default: return static_cast<const float*>(t.data)[i];
    }
}

void store(const hb_tensor& t, int64_t i, float v) {
    switch (t.dtype) {
        case HB_FLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_f16(v); break;
        case HB_BFLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_bf16(v); break;
        default: static_cast<float*>(t.data)[i] = v; break;
    }
}

// a before b: the larger logit, NaN above all, the lower index among equals.
bool ranks_before(float xa, int32_t a, float xb, int32_t b) {
    if ((xa != xa) != (xb != xb)) return xa != xa;
    if (xa == xa && xa != xb) return xa > xb;
    return a < b;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* finished_arg = hb_input(call, "finished");
    const hb_arg* y_arg = hb_output(call, "y");
    const hb_arg* idx_arg = hb_output(call, "expert_idx");
    const hb_arg* row_arg = hb_output(call, "row_idx");
    if (!x_arg || !y_arg || !idx_arg || !row_arg)
        return hb_fail(call, 1, "moe_gating_top_k_softmax: expected input x and outputs y, expert_idx, row_idx");
    const hb_tensor& x = x_arg->tensors[0];
    if (x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16 && x.dtype != HB_FLOAT32)
        return hb_fail(call, 2, "moe_gating_top_k_softmax: x must be float16, bfloat16 or float32");
    if (!hb_is_contiguous(&x)) return hb_fail(call, 3, "moe_gating_top_k_softmax: only contiguous tensors are supported");
    const int64_t experts = x.shape[x.rank - 1];
    const int64_t rows = experts ? hb_numel(&x) / experts : 0;
    const int64_t k = hb_attr_int(call, "k", 1);
    if (k < 1 || k > experts) return hb_fail(call, 2, "moe_gating_top_k_softmax: k must be in [1, E]");
    const auto* finished = finished_arg && finished_arg->present
                               ? static_cast<const uint8_t*>(finished_arg->tensors[0].data)
                               : nullptr;
    auto* expert_idx = static_cast<int32_t*>(idx_arg->tensors[0].data);
    auto* row_idx = static_cast<int32_t*>(row_arg->tensors[0].data);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads) if (rows * experts >= 16384)
    {
        std::vector<float> logits(static_cast<size_t>(experts));
        std::vector<int32_t> order(static_cast<size_t>(experts));
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
            float max = -INFINITY;
            for (int64_t e = 0; e < experts; ++e) {
                const float v = load(x, r * experts + e);
                logits[static_cast<size_t>(e)] = v;
                if (v != v || v > max) max = max != max ? max : v;  // NaN sticks
            }
            float sum = 0.0f;
            for (int64_t e = 0; e < experts; ++e) sum += std::exp(logits[static_cast<size_t>(e)] - max);
            std::iota(order.begin(), order.end(), 0);
            std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
                return ranks_before(logits[static_cast<size_t>(a)], a, logits[static_cast<size_t>(b)], b);
            });
            const bool done = finished && finished[r] != 0;
            for (int64_t j = 0; j < k; ++j) {
                const int32_t e = order[static_cast<size_t>(j)];
                store(y_arg->tensors[0], r * k + j, std::exp(logits[static_cast<size_t>(e)] - max) / sum);
                expert_idx[r * k + j] = done ? static_cast<int32_t>(experts) : e;
                row_idx[r * k + j] = static_cast<int32_t>(j * rows + r);
            }
        }
    }
    return 0;
}
