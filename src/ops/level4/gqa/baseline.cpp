// Baseline for gqa: attention as PyTorch's math path on oneDNN (ops/dnnl_attention_baseline.hpp),
// the G query heads of a KV head stacked as one block of G * S query rows.
#include "ops/dnnl_attention_baseline.hpp"

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    return hb::baseline::bsnd_attention_workspace_bytes(call, "gqa", true);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    return hb::baseline::bsnd_attention_kernel(call, "gqa", true);
}
