// What the dense attention baselines (mha, gqa, mla) share, header-only like
// baseline_support.hpp: attention as PyTorch's math path computes it on oneDNN, one primitive
// per step over contiguous copies.
//   1. q and k (both parts of mla's, side by side: torch.cat) copied into [B * Nkv, G * S, Dqk]
//      and [B * Nkv, Skv, Dqk] (.contiguous(): oneDNN 2.6 runs matmuls on strided BSND views only
//      in its reference kernel), in the input dtype where oneDNN multiplies it with a jit kernel
//      (bfloat16 with AVX-512), else widened to fp32 (float16 always: oneDNN 2.6 has no f16
//      matmul); v widened to fp32 [B * Nkv, Skv, Dv];
//   2. oneDNN matmul: scores = q k^T, fp32, the scale as an output scale;
//   3. causal: a oneDNN binary_add of the [G * S, Skv] mask (0 or -inf) broadcast over the batch
//      (a matmul post-op would take oneDNN's reference kernel);
//   4. oneDNN softmax_forward over the keys, in place, fp32;
//   5. oneDNN matmul: y = P v in fp32 (fp32 probabilities: rounding them to half precision
//      fails the precision gate where y cancels), then copied into y's layout and narrowed.
// A query that sees no key (causal, S > Skv) is set to 0. Non-finite inputs (one vectorized
// scan of the exponents) take a threaded fp32 loop instead, which leaves masked keys out as
// the operator does (the mask's -inf added to an infinite score is NaN, a zero probability
// times an infinite value is NaN, and oneDNN's softmax drops NaN from its maximum).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ops/baseline_support.hpp"

#pragma GCC visibility push(hidden)

namespace hb::baseline {

// One dense attention call: q and k in parts along the head dim (mla: nope, rope), one layout
// (BSND or BNSD) for every tensor.
struct AttentionCall {
    hb_dtype dtype = HB_BFLOAT16;
    bool bsnd = true;
    std::int64_t batch = 1, q_heads = 1, kv_heads = 1, q_len = 1, kv_len = 1, v_dim = 1;
    std::vector<std::int64_t> parts;  // head dims of the q/k parts
    std::vector<const void*> q, k;
    const void* v = nullptr;
    void* y = nullptr;
    float scale = 1;
    bool causal = false;

    std::int64_t group() const { return q_heads / kv_heads; }
    std::int64_t qk_dim() const {
        std::int64_t d = 0;
        for (auto p : parts) d += p;
        return d;
    }
    std::int64_t blocks() const { return batch * kv_heads; }  // matmul batch
    std::int64_t rows() const { return group() * q_len; }     // query rows per block
    // Element offset of (b, position, head, 0) in a [B, seq, heads, dim] tensor of the layout.
    std::int64_t at(std::int64_t b, std::int64_t pos, std::int64_t head, std::int64_t seq, std::int64_t heads,
                    std::int64_t dim) const {
        return bsnd ? ((b * seq + pos) * heads + head) * dim : ((b * heads + head) * seq + pos) * dim;
    }
    // Keys query i sees: all, or (causal) j <= i + Skv - S.
    std::int64_t allowed(std::int64_t i) const {
        if (!causal) return kv_len;
        return std::clamp<std::int64_t>(i + kv_len - q_len + 1, 0, kv_len);
    }
    auto key() const {
        return std::make_tuple(static_cast<int>(dtype), bsnd, batch, q_heads, kv_heads, q_len, kv_len, v_dim, parts,
                               causal, scale);
    }
};

struct AttentionPlan {
    bool half_operands = false;  // q k^T in the input dtype (else fp32 copies)
    dnnl::matmul qk, pv;
    std::optional<dnnl::binary> mask_add;
    dnnl::softmax_forward softmax;
    dnnl::memory::desc q_md, k_md, scores_md, mask_md, v_md, y_md, softmax_md;
    std::vector<float> mask;  // [G * S, Skv]: 0 where allowed, -inf where masked
    // Workspace offsets (bytes): q and k copies, v, scores, y in fp32.
    std::size_t q_at = 0, k_at = 0, v_at = 0, scores_at = 0, y_at = 0, bytes = 0;
};

inline std::size_t attention_align64(std::size_t n) { return (n + 63) / 64 * 64; }

inline bool is_reference_kernel(const dnnl::primitive_desc_base& pd) {
    return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

inline AttentionPlan make_attention_plan(const AttentionCall& c) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    AttentionPlan plan;
    const std::int64_t n = c.blocks(), m = c.rows(), skv = c.kv_len, dqk = c.qk_dim(), dv = c.v_dim;
    plan.scores_md = dnnl::memory::desc({n, m, skv}, dt::f32, tag::abc);
    dnnl::primitive_attr scaled;
    scaled.set_output_scales(0, {c.scale});
    auto qk_pd = [&](dt t) {
        dnnl::matmul::primitive_desc pd(
            dnnl::matmul::desc(dnnl::memory::desc({n, m, dqk}, t, tag::abc), dnnl::memory::desc({n, dqk, skv}, t, tag::acb),
                               plan.scores_md),
            scaled, cpu_engine());
        if (t != dt::f32 && is_reference_kernel(pd)) throw dnnl::error(dnnl_unimplemented, "only the reference kernel");
        return pd;
    };
    std::optional<dnnl::matmul::primitive_desc> pd;
    if (c.dtype == HB_BFLOAT16) pd = try_create(qk_pd, dt::bf16);
    plan.half_operands = pd.has_value();
    if (!pd) pd = qk_pd(dt::f32);
    plan.qk = dnnl::matmul(*pd);
    plan.q_md = pd->src_desc();
    plan.k_md = pd->weights_desc();
    if (c.causal) {
        plan.mask_md = dnnl::memory::desc({1, m, skv}, dt::f32, tag::abc);
        plan.mask_add = dnnl::binary(dnnl::binary::primitive_desc(
            dnnl::binary::desc(dnnl::algorithm::binary_add, plan.scores_md, plan.mask_md, plan.scores_md), cpu_engine()));
        plan.mask.assign(static_cast<std::size_t>(m * skv), 0.0f);
        for (std::int64_t r = 0; r < m; ++r)
            for (std::int64_t j = c.allowed(r % c.q_len); j < skv; ++j)
                plan.mask[static_cast<std::size_t>(r * skv + j)] = -INFINITY;
    }
    plan.softmax_md = dnnl::memory::desc({n * m, skv}, dt::f32, tag::ab);
    plan.softmax = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, plan.softmax_md, 1), cpu_engine()));
    plan.v_md = dnnl::memory::desc({n, skv, dv}, dt::f32, tag::abc);
    plan.y_md = dnnl::memory::desc({n, m, dv}, dt::f32, tag::abc);
    plan.pv = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(plan.scores_md, plan.v_md, plan.y_md), cpu_engine()));
    const std::size_t operand = plan.half_operands ? 2 : 4;
    std::size_t at = 0;
    auto take = [&](std::size_t bytes) {
        const std::size_t here = at;
        at += attention_align64(bytes);
        return here;
    };
    plan.q_at = take(static_cast<std::size_t>(n * m * dqk) * operand);
    plan.k_at = take(static_cast<std::size_t>(n * skv * dqk) * operand);
    plan.v_at = take(static_cast<std::size_t>(n * skv * dv) * 4);
    plan.scores_at = take(static_cast<std::size_t>(n * m * skv) * 4);
    plan.y_at = take(static_cast<std::size_t>(n * m * dv) * 4);
    plan.bytes = at;
    return plan;
}

inline const AttentionPlan& attention_plan(const AttentionCall& c) {
    static PlanCache<decltype(c.key()), AttentionPlan> cache;
    return cache.get(c.key(), [&] { return make_attention_plan(c); });
}

inline float half_to_f32(std::uint16_t bits, hb_dtype t) {
#if defined(__F16C__)
    if (t == HB_FLOAT16) return _cvtsh_ss(bits);
#endif
    return t == HB_FLOAT16 ? hb_f16_to_f32(bits) : hb_bf16_to_f32(bits);
}

inline std::uint16_t f32_to_half(float v, hb_dtype t) {
#if defined(__F16C__)
    if (t == HB_FLOAT16) return static_cast<std::uint16_t>(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT));
#endif
    return t == HB_FLOAT16 ? hb_f32_to_f16(v) : hb_f32_to_bf16(v);
}

// A row of `width` half values into fp32 (or copied as they are when `keep_half`).
inline void copy_row(const std::uint16_t* src, std::int64_t width, hb_dtype t, bool keep_half, void* dst) {
    if (keep_half) {
        std::memcpy(dst, src, static_cast<std::size_t>(width) * 2);
        return;
    }
    auto* d = static_cast<float*>(dst);
#pragma omp simd
    for (std::int64_t i = 0; i < width; ++i) d[i] = half_to_f32(src[i], t);
}

inline bool any_nonfinite(const void* data, std::int64_t n, hb_dtype t) {
    const auto* bits = static_cast<const std::uint16_t*>(data);
    const std::uint16_t exponent = t == HB_FLOAT16 ? 0x7c00 : 0x7f80;
    int found = 0;
#pragma omp parallel for simd reduction(| : found) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) found |= (bits[i] & exponent) == exponent;
    return found != 0;
}

// The operator's definition in a threaded fp32 loop (inputs holding inf or NaN).
inline void attention_special_values(const AttentionCall& c) {
    const std::int64_t group = c.group(), dqk = c.qk_dim(), dv = c.v_dim;
    const auto q_rows = c.batch * c.q_heads * c.q_len;
#pragma omp parallel
    {
        std::vector<float> q(static_cast<std::size_t>(dqk)), kr(static_cast<std::size_t>(dqk)),
            vr(static_cast<std::size_t>(dv)), acc(static_cast<std::size_t>(dv)), s(static_cast<std::size_t>(c.kv_len));
#pragma omp for schedule(dynamic, 4)
        for (std::int64_t row = 0; row < q_rows; ++row) {
            const std::int64_t b = row / (c.q_heads * c.q_len), h = row / c.q_len % c.q_heads, i = row % c.q_len;
            const std::int64_t kvh = h / group, count = c.allowed(i);
            std::int64_t offset = 0;
            for (std::size_t p = 0; p < c.parts.size(); ++p) {
                const auto* src = static_cast<const std::uint16_t*>(c.q[p]) + c.at(b, i, h, c.q_len, c.q_heads, c.parts[p]);
                copy_row(src, c.parts[p], c.dtype, false, q.data() + offset);
                offset += c.parts[p];
            }
            float max = -INFINITY;
            for (std::int64_t j = 0; j < count; ++j) {
                offset = 0;
                for (std::size_t p = 0; p < c.parts.size(); ++p) {
                    const auto* src =
                        static_cast<const std::uint16_t*>(c.k[p]) + c.at(b, j, kvh, c.kv_len, c.kv_heads, c.parts[p]);
                    copy_row(src, c.parts[p], c.dtype, false, kr.data() + offset);
                    offset += c.parts[p];
                }
                float dot = 0;
                for (std::int64_t d = 0; d < dqk; ++d) dot += q[static_cast<std::size_t>(d)] * kr[static_cast<std::size_t>(d)];
                const float score = dot * c.scale;
                s[static_cast<std::size_t>(j)] = score;
                if (score != score || score > max) max = max != max ? max : score;
            }
            std::fill(acc.begin(), acc.end(), 0.0f);
            if (count > 0 && max != -INFINITY) {
                float sum = 0;
                for (std::int64_t j = 0; j < count; ++j) {
                    const float w = std::exp(s[static_cast<std::size_t>(j)] - max);
                    sum += w;
                    copy_row(static_cast<const std::uint16_t*>(c.v) + c.at(b, j, kvh, c.kv_len, c.kv_heads, dv), dv,
                             c.dtype, false, vr.data());
                    for (std::int64_t d = 0; d < dv; ++d) acc[static_cast<std::size_t>(d)] += w * vr[static_cast<std::size_t>(d)];
                }
                for (auto& a : acc) a /= sum;
            }
            auto* y = static_cast<std::uint16_t*>(c.y) + c.at(b, i, h, c.q_len, c.q_heads, dv);
            for (std::int64_t d = 0; d < dv; ++d) y[d] = f32_to_half(acc[static_cast<std::size_t>(d)], c.dtype);
        }
    }
}

inline std::uint64_t attention_workspace_bytes(const AttentionCall& c) { return attention_plan(c).bytes; }

// Runs the call; throws dnnl::error or std::exception on failure (guarded() reports them).
inline void run_attention(const AttentionCall& c, void* workspace) {
    bool special = any_nonfinite(c.v, c.batch * c.kv_len * c.kv_heads * c.v_dim, c.dtype);
    for (std::size_t p = 0; p < c.parts.size() && !special; ++p)
        special = any_nonfinite(c.q[p], c.batch * c.q_len * c.q_heads * c.parts[p], c.dtype) ||
                  any_nonfinite(c.k[p], c.batch * c.kv_len * c.kv_heads * c.parts[p], c.dtype);
    if (special) {
        attention_special_values(c);
        return;
    }
    const AttentionPlan& plan = attention_plan(c);
    auto* ws = static_cast<char*>(workspace);
    const std::int64_t n = c.blocks(), m = c.rows(), group = c.group(), skv = c.kv_len, dqk = c.qk_dim(), dv = c.v_dim;
    const std::size_t operand = plan.half_operands ? 2 : 4;
    char* qc = ws + plan.q_at;
    char* kc = ws + plan.k_at;
    auto* v32 = reinterpret_cast<float*>(ws + plan.v_at);
    auto* scores = reinterpret_cast<float*>(ws + plan.scores_at);
    auto* y32 = reinterpret_cast<float*>(ws + plan.y_at);
    // 1. Contiguous copies (block = (b, kv head); query row r = g * S + i).
#pragma omp parallel for schedule(static) collapse(2)
    for (std::int64_t blk = 0; blk < n; ++blk)
        for (std::int64_t r = 0; r < m; ++r) {
            const std::int64_t b = blk / c.kv_heads, kvh = blk % c.kv_heads, h = kvh * group + r / c.q_len,
                               i = r % c.q_len;
            std::int64_t offset = 0;
            for (std::size_t p = 0; p < c.parts.size(); ++p) {
                const auto* src = static_cast<const std::uint16_t*>(c.q[p]) + c.at(b, i, h, c.q_len, c.q_heads, c.parts[p]);
                copy_row(src, c.parts[p], c.dtype, plan.half_operands,
                         qc + static_cast<std::size_t>((blk * m + r) * dqk + offset) * operand);
                offset += c.parts[p];
            }
        }
#pragma omp parallel for schedule(static) collapse(2)
    for (std::int64_t blk = 0; blk < n; ++blk)
        for (std::int64_t j = 0; j < skv; ++j) {
            const std::int64_t b = blk / c.kv_heads, kvh = blk % c.kv_heads;
            std::int64_t offset = 0;
            for (std::size_t p = 0; p < c.parts.size(); ++p) {
                const auto* src = static_cast<const std::uint16_t*>(c.k[p]) + c.at(b, j, kvh, skv, c.kv_heads, c.parts[p]);
                copy_row(src, c.parts[p], c.dtype, plan.half_operands,
                         kc + static_cast<std::size_t>((blk * skv + j) * dqk + offset) * operand);
                offset += c.parts[p];
            }
            copy_row(static_cast<const std::uint16_t*>(c.v) + c.at(b, j, kvh, skv, c.kv_heads, dv), dv, c.dtype, false,
                     v32 + (blk * skv + j) * dv);
        }
    dnnl::stream& stream = cpu_stream();
    const dnnl::engine& engine = cpu_engine();
    dnnl::memory q_mem(plan.q_md, engine, qc), k_mem(plan.k_md, engine, kc), s_mem(plan.scores_md, engine, scores);
    // 2-4. Scores, mask, softmax.
    plan.qk.execute(stream, {{DNNL_ARG_SRC, q_mem}, {DNNL_ARG_WEIGHTS, k_mem}, {DNNL_ARG_DST, s_mem}});
    if (plan.mask_add) {
        dnnl::memory mask_mem(plan.mask_md, engine, const_cast<float*>(plan.mask.data()));
        plan.mask_add->execute(stream, {{DNNL_ARG_SRC_0, s_mem}, {DNNL_ARG_SRC_1, mask_mem}, {DNNL_ARG_DST, s_mem}});
    }
    dnnl::memory soft_mem(plan.softmax_md, engine, scores);
    plan.softmax.execute(stream, {{DNNL_ARG_SRC, soft_mem}, {DNNL_ARG_DST, soft_mem}});
    // 5. y = P v.
    dnnl::memory v_mem(plan.v_md, engine, v32), y_mem(plan.y_md, engine, y32);
    plan.pv.execute(stream, {{DNNL_ARG_SRC, s_mem}, {DNNL_ARG_WEIGHTS, v_mem}, {DNNL_ARG_DST, y_mem}});
    stream.wait();
    // y in its layout; a query that sees no key is 0 (its softmax row of -inf is NaN).
#pragma omp parallel for schedule(static) collapse(2)
    for (std::int64_t blk = 0; blk < n; ++blk)
        for (std::int64_t r = 0; r < m; ++r) {
            const std::int64_t b = blk / c.kv_heads, kvh = blk % c.kv_heads, h = kvh * group + r / c.q_len,
                               i = r % c.q_len;
            auto* dst = static_cast<std::uint16_t*>(c.y) + c.at(b, i, h, c.q_len, c.q_heads, dv);
            const float* src = y32 + (blk * m + r) * dv;
            const bool sees_none = c.allowed(i) == 0;
#pragma omp simd
            for (std::int64_t d = 0; d < dv; ++d) dst[d] = f32_to_half(sees_none ? 0.0f : src[d], c.dtype);
        }
}

// mha and gqa (BSND query [B, S, Nq, D], key and value [B, Skv, Nkv, D]): the call read from
// `call`, empty on success, else a message for hb_fail that starts with `op`. `grouped`: Nkv
// divides Nq (gqa), else Nkv = Nq (mha).
inline std::string bsnd_attention_call(const hb_call* call, const char* op, bool grouped, AttentionCall& c) {
    const std::string name = op;
    const hb_arg* q = hb_input(call, "query");
    const hb_arg* k = hb_input(call, "key");
    const hb_arg* v = hb_input(call, "value");
    const hb_arg* y = hb_output(call, "y");
    if (!q || !k || !v || !y) return name + ": expected inputs query, key, value and output y";
    const hb_tensor &qt = q->tensors[0], &kt = k->tensors[0], &vt = v->tensors[0], &yt = y->tensors[0];
    for (const hb_tensor* t : {&qt, &kt, &vt, &yt})
        if (t->rank != 4 || !hb_is_contiguous(t) || t->dtype != qt.dtype)
            return name + ": tensors must be contiguous 4-D of one dtype";
    if (qt.dtype != HB_FLOAT16 && qt.dtype != HB_BFLOAT16) return name + ": query must be float16 or bfloat16";
    c.dtype = qt.dtype;
    c.batch = qt.shape[0];
    c.q_len = qt.shape[1];
    c.q_heads = qt.shape[2];
    c.kv_len = kt.shape[1];
    c.kv_heads = kt.shape[2];
    c.parts = {qt.shape[3]};
    c.v_dim = vt.shape[3];
    if (grouped && (c.kv_heads < 1 || c.q_heads % c.kv_heads != 0))
        return name + ": the KV heads must divide the query heads";
    if (!grouped && c.kv_heads != c.q_heads) return name + ": key and value must have query's heads";
    c.q = {qt.data};
    c.k = {kt.data};
    c.v = vt.data;
    c.y = yt.data;
    const double given = hb_attr_float(call, "scaleValue", -1.0);
    c.scale = static_cast<float>(given > 0 ? given : 1.0 / std::sqrt(static_cast<double>(qt.shape[3])));
    c.causal = hb_attr_int(call, "is_causal", 0) != 0;
    return {};
}

// The bodies of hapbench_workspace_bytes and hapbench_kernel for mha and gqa.
inline std::uint64_t bsnd_attention_workspace_bytes(const hb_call* call, const char* op, bool grouped) {
    AttentionCall c;
    if (!bsnd_attention_call(call, op, grouped, c).empty()) return 0;  // the kernel reports the error
    try {
        return attention_workspace_bytes(c);  // the plan is made here, outside the timed calls
    } catch (const std::exception&) {
        return 0;
    }
}

inline int bsnd_attention_kernel(const hb_call* call, const char* op, bool grouped) {
    AttentionCall c;
    if (const std::string error = bsnd_attention_call(call, op, grouped, c); !error.empty())
        return hb_fail(call, 2, error.c_str());
    return guarded(call, [&] {
        if (call->workspace_bytes < attention_workspace_bytes(c))
            return hb_fail(call, 2, (std::string(op) + ": the workspace is too small").c_str());
        run_attention(c, call->workspace);
        return 0;
    });
}

}  // namespace hb::baseline

#pragma GCC visibility pop
