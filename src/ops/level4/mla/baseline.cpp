// Baseline for mla: attention as PyTorch's math path on oneDNN (ops/dnnl_attention_baseline.hpp),
// q = [q_nope | q_rope] and k = [k_nope | k_rope] concatenated into the contiguous copies
// (torch.cat), BSND or BNSD.
#include <cstring>

#include "ops/dnnl_attention_baseline.hpp"

namespace {

using namespace hb::baseline;

std::string call_of(const hb_call* call, AttentionCall& c) {
    const char* names[] = {"q_nope", "q_rope", "k_nope", "k_rope", "v"};
    const hb_tensor* t[5];
    for (int a = 0; a < 5; ++a) {
        const hb_arg* arg = hb_input(call, names[a]);
        if (!arg) return "mla: expected inputs q_nope, q_rope, k_nope, k_rope, v";
        t[a] = &arg->tensors[0];
        if (t[a]->rank != 4 || !hb_is_contiguous(t[a]) || t[a]->dtype != t[0]->dtype)
            return "mla: inputs must be contiguous 4-D tensors of one dtype";
    }
    const hb_arg* y = hb_output(call, "y");
    if (!y) return "mla: expected output y";
    if (t[0]->dtype != HB_FLOAT16 && t[0]->dtype != HB_BFLOAT16) return "mla: inputs must be float16 or bfloat16";
    const char* layout = hb_attr_string(call, "inputLayout", "BSND");
    if (std::strcmp(layout, "BSND") != 0 && std::strcmp(layout, "BNSD") != 0) return "mla: inputLayout must be BSND or BNSD";
    c.bsnd = std::strcmp(layout, "BSND") == 0;
    const int seq = c.bsnd ? 1 : 2, heads = c.bsnd ? 2 : 1;
    c.dtype = t[0]->dtype;
    c.batch = t[0]->shape[0];
    c.q_len = t[0]->shape[seq];
    c.q_heads = t[0]->shape[heads];
    c.kv_len = t[2]->shape[seq];
    c.kv_heads = t[2]->shape[heads];
    c.parts = {t[0]->shape[3], t[1]->shape[3]};
    c.v_dim = t[4]->shape[3];
    if (c.kv_heads < 1 || c.q_heads % c.kv_heads != 0 || hb_attr_int(call, "numKVHeads", 1) != c.kv_heads)
        return "mla: numKVHeads must equal k_nope's heads and divide the query heads";
    c.q = {t[0]->data, t[1]->data};
    c.k = {t[2]->data, t[3]->data};
    c.v = t[4]->data;
    c.y = y->tensors[0].data;
    const double given = hb_attr_float(call, "scaleValue", -1.0);
    c.scale = static_cast<float>(given > 0 ? given : 1.0 / std::sqrt(static_cast<double>(c.qk_dim())));
    c.causal = hb_attr_int(call, "is_causal", 0) != 0;
    return {};
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    AttentionCall c;
    if (!call_of(call, c).empty()) return 0;  // the kernel reports the error
    try {
        return attention_workspace_bytes(c);  // the plan is made here, outside the timed calls
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    AttentionCall c;
    if (const std::string error = call_of(call, c); !error.empty()) return hb_fail(call, 2, error.c_str());
    return guarded(call, [&] {
        if (call->workspace_bytes < attention_workspace_bytes(c)) return hb_fail(call, 2, "mla: the workspace is too small");
        run_attention(c, call->workspace);
        return 0;
    });
}
