// Baseline for moe_re_routing: plain threaded C++ (oneDNN has no permutation or gather
// primitive). The block offsets come from two prefix sums over the N x E counts; then the
// destination rows are split evenly over the OpenMP threads (however uneven the blocks), each
// thread finding its first block by binary search and copying row after row with memcpy, so
// every thread writes one contiguous stretch of permute_tokens.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <omp.h>

#include "ops/baseline_support.hpp"

namespace {

std::int64_t count_at(const hb_tensor& c, std::int64_t k) {
    return c.dtype == HB_INT32 ? static_cast<const std::int32_t*>(c.data)[k] : static_cast<const std::int64_t*>(c.data)[k];
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
    if (tokens.rank != 2 || counts.rank != 2 || (counts.dtype != HB_INT32 && counts.dtype != HB_INT64) ||
        out_counts->tensors[0].dtype != counts.dtype)
        return hb_fail(call, 2, "moe_re_routing: tokens must be [A, H], the counts int32/int64 [N, E] like expert_token_num");
    const std::int64_t rows = tokens.shape[0], ranks = counts.shape[0], experts = counts.shape[1];
    const std::size_t row_bytes = static_cast<std::size_t>(tokens.shape[1]) * (tokens.dtype == HB_INT8 ? 1 : 2);
    const bool scatter_index = hb_attr_int(call, "idx_type", 0) == 1;
    const bool cumulative = hb_attr_int(call, "expert_token_num_type", 1) == 0;
    const bool has_scales = scales_arg && scales_arg->present;

    // Blocks in destination (expert-major) order: where each starts in y and in tokens.
    const std::int64_t cells = ranks * experts;
    std::vector<std::int64_t> src_start(static_cast<std::size_t>(cells)), block_dst(static_cast<std::size_t>(cells) + 1),
        block_src(static_cast<std::size_t>(cells));
    std::int64_t total = 0;
    for (std::int64_t k = 0; k < cells; ++k) {
        if (count_at(counts, k) < 0) return hb_fail(call, 2, "moe_re_routing: a count is negative");
        src_start[static_cast<std::size_t>(k)] = total;
        total += count_at(counts, k);
    }
    if (total != rows) return hb_fail(call, 2, "moe_re_routing: the counts do not sum to the number of tokens");
    std::int64_t at = 0, b = 0;
    for (std::int64_t j = 0; j < experts; ++j)
        for (std::int64_t i = 0; i < ranks; ++i, ++b) {
            block_dst[static_cast<std::size_t>(b)] = at;
            block_src[static_cast<std::size_t>(b)] = src_start[static_cast<std::size_t>(i * experts + j)];
            at += count_at(counts, i * experts + j);
        }
    block_dst[static_cast<std::size_t>(cells)] = rows;

    const auto* src = static_cast<const char*>(tokens.data);
    auto* dst = static_cast<char*>(out_tokens->tensors[0].data);
    const float* scales = has_scales ? static_cast<const float*>(scales_arg->tensors[0].data) : nullptr;
    auto* scales_out = static_cast<float*>(out_scales->tensors[0].data);
    auto* idx = static_cast<std::int32_t*>(out_idx->tensors[0].data);
#pragma omp parallel
    {
        const std::int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
        const std::int64_t first = rows * me / threads, last = rows * (me + 1) / threads;
        if (first < last) {
            // The block holding row `first`: the last block starting at or before it.
            std::size_t k = static_cast<std::size_t>(
                std::upper_bound(block_dst.begin(), block_dst.end() - 1, first) - block_dst.begin() - 1);
            for (std::int64_t d = first; d < last; ++d) {
                while (d >= block_dst[k + 1]) ++k;
                const std::int64_t s = block_src[k] + (d - block_dst[k]);
                std::memcpy(dst + d * static_cast<std::int64_t>(row_bytes), src + s * static_cast<std::int64_t>(row_bytes), row_bytes);
                scales_out[d] = scales ? scales[s] : 0.0f;
                if (scatter_index) idx[s] = static_cast<std::int32_t>(d);
                else idx[d] = static_cast<std::int32_t>(s);
            }
        }
    }

    std::int64_t running = 0;
    for (std::int64_t j = 0; j < experts; ++j) {
        std::int64_t sum = 0;
        for (std::int64_t i = 0; i < ranks; ++i) sum += count_at(counts, i * experts + j);
        running += sum;
        const std::int64_t value = cumulative ? running : sum;
        if (counts.dtype == HB_INT32) static_cast<std::int32_t*>(out_counts->tensors[0].data)[j] = static_cast<std::int32_t>(value);
        else static_cast<std::int64_t*>(out_counts->tensors[0].data)[j] = value;
    }
    return 0;
}
