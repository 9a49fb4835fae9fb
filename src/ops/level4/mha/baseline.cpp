// Baseline for mha: attention as PyTorch's math path on oneDNN (ops/dnnl_attention_baseline.hpp),
// one block of S query rows per (batch, head).
#include "ops/dnnl_attention_baseline.hpp"

namespace {

using namespace hb::baseline;

// Empty on success, else a message for hb_fail.
std::string call_of(const hb_call* call, AttentionCall& c) {
    const hb_arg* q = hb_input(call, "query");
    const hb_arg* k = hb_input(call, "key");
    const hb_arg* v = hb_input(call, "value");
    const hb_arg* y = hb_output(call, "y");
    if (!q || !k || !v || !y) return "mha: expected inputs query, key, value and output y";
    const hb_tensor &qt = q->tensors[0], &kt = k->tensors[0], &vt = v->tensors[0], &yt = y->tensors[0];
    for (const hb_tensor* t : {&qt, &kt, &vt, &yt})
        if (t->rank != 4 || !hb_is_contiguous(t) || t->dtype != qt.dtype) return "mha: tensors must be contiguous 4-D of one dtype";
    if (qt.dtype != HB_FLOAT16 && qt.dtype != HB_BFLOAT16) return "mha: query must be float16 or bfloat16";
    c.dtype = qt.dtype;
    c.batch = qt.shape[0];
    c.q_len = qt.shape[1];
    c.q_heads = qt.shape[2];
    c.kv_len = kt.shape[1];
    c.kv_heads = kt.shape[2];
    c.parts = {qt.shape[3]};
    c.v_dim = vt.shape[3];
    if (c.kv_heads != c.q_heads) return "mha: key and value must have query's heads";
    c.q = {qt.data};
    c.k = {kt.data};
    c.v = vt.data;
    c.y = yt.data;
    const double given = hb_attr_float(call, "scaleValue", -1.0);
    c.scale = static_cast<float>(given > 0 ? given : 1.0 / std::sqrt(static_cast<double>(qt.shape[3])));
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
        if (call->workspace_bytes < attention_workspace_bytes(c)) return hb_fail(call, 2, "mha: the workspace is too small");
        run_attention(c, call->workspace);
        return 0;
    });
}
