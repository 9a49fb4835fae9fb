// Reference moe_finalize_routing: for every source row r, in fp32,
//   out[r] = skip1[r] + skip2[r] + sum over k = 0..K-1 of scales[r, k] * (R[idx[p]] + bias[e])
// with R = expanded_permuted_rows seen as [num_dst, H], idx = expanded_src_to_dst_row,
// p = k * NUM_ROWS + r (drop_pad_mode 0, 1) or r * K + k (2, 3), e = expert_for_source_row[r, k].
// idx == -1 adds nothing; the bias is added only for 0 <= e < E (bias rows); absent skips,
// bias and scales contribute nothing or a scale of 1. K = scales' last dim, 1 without.
#include <omp.h>

#include <cstdint>
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

const hb_tensor* optional(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present ? &a->tensors[0] : nullptr;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor* rows = optional(call, "expanded_permuted_rows");
    const hb_tensor* idx = optional(call, "expanded_src_to_dst_row");
    const hb_tensor* skip1 = optional(call, "skip1");
    const hb_tensor* skip2 = optional(call, "skip2");
    const hb_tensor* bias = optional(call, "bias");
    const hb_tensor* scales = optional(call, "scales");
    const hb_tensor* experts = optional(call, "expert_for_source_row");
    const hb_arg* out_arg = hb_output(call, "out");
    if (!rows || !idx || !out_arg) return hb_fail(call, 1, "moe_finalize_routing: missing rows, idx or out");
    const hb_tensor* out_tensor = &out_arg->tensors[0];
    for (const hb_tensor* t : {rows, idx, skip1, skip2, bias, scales, experts, out_tensor})
        if (t && !hb_is_contiguous(t)) return hb_fail(call, 3, "moe_finalize_routing: only contiguous tensors are supported");
    const hb_tensor& out = out_arg->tensors[0];
    const int64_t mode = hb_attr_int(call, "drop_pad_mode", 0);
    const int64_t hidden = rows->shape[rows->rank - 1];
    const int64_t num_dst = hidden ? hb_numel(rows) / hidden : 0;
    const int64_t k = scales ? scales->shape[1] : 1;
    const int64_t num_rows = idx->shape[0] / k;
    const int64_t num_experts = bias ? bias->shape[0] : 0;
    const auto* dst = static_cast<const int32_t*>(idx->data);
    const auto* expert = experts ? static_cast<const int32_t*>(experts->data) : nullptr;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads) if (num_rows * hidden >= 16384)
    {
        std::vector<float> acc(static_cast<size_t>(hidden));
#pragma omp for schedule(static)
        for (int64_t r = 0; r < num_rows; ++r) {
            for (int64_t j = 0; j < hidden; ++j)
                acc[static_cast<size_t>(j)] =
                    (skip1 ? load(*skip1, r * hidden + j) : 0.0f) + (skip2 ? load(*skip2, r * hidden + j) : 0.0f);
            for (int64_t slot = 0; slot < k; ++slot) {
                const int64_t p = (mode == 2 || mode == 3) ? r * k + slot : slot * num_rows + r;
                const int64_t v = dst[p];
                if (v < 0 || v >= num_dst) continue;
                const float scale = scales ? load(*scales, r * k + slot) : 1.0f;
                const int64_t e = bias && expert ? expert[r * k + slot] : -1;
                const bool with_bias = e >= 0 && e < num_experts;
                for (int64_t j = 0; j < hidden; ++j) {
                    const float term = load(*rows, v * hidden + j) + (with_bias ? load(*bias, e * hidden + j) : 0.0f);
                    acc[static_cast<size_t>(j)] += scale * term;
                }
            }
            for (int64_t j = 0; j < hidden; ++j) store(out, r * hidden + j, acc[static_cast<size_t>(j)]);
        }
    }
    return 0;
}
