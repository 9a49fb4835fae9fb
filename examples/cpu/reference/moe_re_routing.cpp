// Reference moe_re_routing: tokens arrive rank-major (rank i's block for expert j is c[i, j]
// rows) and leave expert-major (expert j's blocks from ranks 0, 1, ... in order), with their
// scales, a gather (idx_type 0) or scatter (idx_type 1) index, and per-expert counts or
// cumulative counts (expert_token_num_type 1 / 0). Plain on purpose: the block offsets by
// two serial prefix sums, then one OpenMP loop over the blocks, each row a memcpy.
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "hapbench/kernel.h"

namespace {

int64_t count_at(const hb_tensor& c, int64_t k) {
    return c.dtype == HB_INT32 ? static_cast<const int32_t*>(c.data)[k] : static_cast<const int64_t*>(c.data)[k];
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* tokens_arg = hb_input(call, "tokens");
    const hb_arg* counts_arg = hb_input(call, "expert_token_num_per_rank");
    const hb_arg* scales_arg = hb_input(call, "per_token_scales");
    hb_arg* out_tokens = hb_output(call, "permute_tokens");
    hb_arg* out_scales = hb_output(call, "permute_per_token_scales");
    hb_arg* out_idx = hb_output(call, "permute_token_idx");
    hb_arg* out_counts = hb_output(call, "expert_token_num");
    if (!tokens_arg || !counts_arg || !out_tokens || !out_scales || !out_idx || !out_counts)
        return hb_fail(call, 1, "moe_re_routing: missing an input or output");
    const hb_tensor& tokens = tokens_arg->tensors[0];
    const hb_tensor& counts = counts_arg->tensors[0];
    const bool has_scales = scales_arg && scales_arg->present;
    if (tokens.rank != 2 || counts.rank != 2 || (counts.dtype != HB_INT32 && counts.dtype != HB_INT64))
        return hb_fail(call, 2, "moe_re_routing: tokens must be [A, H], expert_token_num_per_rank int32/int64 [N, E]");
    if (out_counts->tensors[0].dtype != counts.dtype)
        return hb_fail(call, 2, "moe_re_routing: expert_token_num must have the counts' dtype");
    const int64_t rows = tokens.shape[0], ranks = counts.shape[0], experts = counts.shape[1];
    const size_t row_bytes = static_cast<size_t>(tokens.shape[1]) * (tokens.dtype == HB_INT8 ? 1 : 2);
    const bool scatter_index = hb_attr_int(call, "idx_type", 0) == 1;
    const bool cumulative = hb_attr_int(call, "expert_token_num_type", 1) == 0;

    const int64_t cells = ranks * experts;
    std::vector<int64_t> src_start(static_cast<size_t>(cells)), dst_start(static_cast<size_t>(cells));
    int64_t total = 0;
    for (int64_t k = 0; k < cells; ++k) {
        if (count_at(counts, k) < 0) return hb_fail(call, 2, "moe_re_routing: a count is negative");
        src_start[k] = total;
        total += count_at(counts, k);
    }
    if (total != rows) return hb_fail(call, 2, "moe_re_routing: the counts do not sum to the number of tokens");
    int64_t at = 0;
    for (int64_t j = 0; j < experts; ++j)
        for (int64_t i = 0; i < ranks; ++i) {
            dst_start[i * experts + j] = at;
            at += count_at(counts, i * experts + j);
        }

    const auto* src = static_cast<const char*>(tokens.data);
    auto* dst = static_cast<char*>(out_tokens->tensors[0].data);
    const float* scales = has_scales ? static_cast<const float*>(scales_arg->tensors[0].data) : nullptr;
    auto* scales_out = static_cast<float*>(out_scales->tensors[0].data);
    auto* idx = static_cast<int32_t*>(out_idx->tensors[0].data);
#pragma omp parallel for schedule(dynamic)
    for (int64_t k = 0; k < cells; ++k) {
        const int64_t n = count_at(counts, k);
        for (int64_t t = 0; t < n; ++t) {
            const int64_t s = src_start[k] + t, d = dst_start[k] + t;
            std::memcpy(dst + d * row_bytes, src + s * row_bytes, row_bytes);
            scales_out[d] = scales ? scales[s] : 0.0f;
            if (scatter_index) idx[s] = static_cast<int32_t>(d);
            else idx[d] = static_cast<int32_t>(s);
        }
    }

    int64_t running = 0;
    for (int64_t j = 0; j < experts; ++j) {
        int64_t sum = 0;
        for (int64_t i = 0; i < ranks; ++i) sum += count_at(counts, i * experts + j);
        running += sum;
        const int64_t value = cumulative ? running : sum;
        if (counts.dtype == HB_INT32) static_cast<int32_t*>(out_counts->tensors[0].data)[j] = static_cast<int32_t>(value);
        else static_cast<int64_t*>(out_counts->tensors[0].data)[j] = value;
    }
    return 0;
}
