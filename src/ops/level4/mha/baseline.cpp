// Baseline for mha: attention as PyTorch's math path on oneDNN (ops/dnnl_attention_baseline.hpp),
// one block of S query rows per (batch, head).
#include "ops/dnnl_attention_baseline.hpp"

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    return hb::baseline::bsnd_attention_workspace_bytes(call, "mha", false);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    return hb::baseline::bsnd_attention_kernel(call, "mha", false);
}
