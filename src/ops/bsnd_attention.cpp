#include "ops/bsnd_attention.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace hb {

AttentionGeometry bsnd_attention_geometry(const Problem& p, KvHeads rule) {
    const std::string at = p.context();
    const TensorSpec& q = p.input("query").tensors.at(0);
    const TensorSpec& k = p.input("key").tensors.at(0);
    const TensorSpec& v = p.input("value").tensors.at(0);
    const AttentionDims qd = attention_dims(q, AttentionLayout::bsnd, "query", at);
    const AttentionDims kd = attention_dims(k, AttentionLayout::bsnd, "key", at);
    const AttentionDims vd = attention_dims(v, AttentionLayout::bsnd, "value", at);
    if (q.dtype != DType::f16 && q.dtype != DType::bf16)
        throw Error(at + "query is " + std::string(dtype_name(q.dtype)) + "; expected float16 or bfloat16");
    if (k.dtype != q.dtype || v.dtype != q.dtype)
        throw Error(at + "query, key and value are " + std::string(dtype_name(q.dtype)) + ", " +
                    std::string(dtype_name(k.dtype)) + ", " + std::string(dtype_name(v.dtype)) +
                    "; they must have one dtype");
    if (k.shape != v.shape)
        throw Error(at + "key has shape " + shape_to_string(k.shape) + " and value " + shape_to_string(v.shape) +
                    "; they must be equal [B, Skv, N, D]");
    if (rule == KvHeads::equal) {
        if (kd.batch != qd.batch || kd.heads != qd.heads || kd.dim != qd.dim)
            throw Error(at + "query " + shape_to_string(q.shape) + " and key " + shape_to_string(k.shape) +
                        " must agree in B, N and D (query [B, S, N, D], key [B, Skv, N, D]); for fewer KV heads use gqa");
    } else {
        if (kd.batch != qd.batch || kd.dim != qd.dim)
            throw Error(at + "query " + shape_to_string(q.shape) + " and key " + shape_to_string(k.shape) +
                        " must agree in B and D (query [B, S, Nq, D], key [B, Skv, Nkv, D])");
        if (qd.heads % kd.heads != 0)
            throw Error(at + "query has " + std::to_string(qd.heads) + " heads and key " + std::to_string(kd.heads) +
                        "; the KV heads must divide the query heads (query head h reads KV head h / G, G = Nq / Nkv)");
    }
    AttentionGeometry g;
    g.batch = qd.batch;
    g.q_heads = qd.heads;
    g.kv_heads = kd.heads;
    g.q_len = qd.seq;
    g.kv_len = kd.seq;
    g.qk_parts = {qd.dim};
    g.v_dim = vd.dim;
    g.scale = attention_scale(p, static_cast<double>(qd.dim));
    g.causal = p.attr_bool("is_causal");
    return g;
}

std::vector<ArgSpec> bsnd_attention_outputs(const Problem& p, const AttentionGeometry& g) {
    ArgSpec y;
    y.name = "y";
    y.tensors.push_back(TensorSpec{p.input("query").tensors.at(0).dtype,
                                   attention_shape(AttentionLayout::bsnd, g.batch, g.q_len, g.q_heads, g.v_dim)});
    return {y};
}

WorkModel bsnd_attention_work(const Problem& p, const AttentionGeometry& g) {
    const double heads = static_cast<double>(g.batch * g.q_heads);
    const double allowed = heads * g.allowed_pairs_per_head();
    WorkModel w;
    AttentionWork a;
    a.dtype = p.input("query").tensors.at(0).dtype;
    a.batch = static_cast<double>(g.batch * g.kv_heads);
    a.rows = g.group() * g.q_len;
    a.qk_dim = g.qk_dim();
    a.v_dim = g.v_dim;
    a.allowed_scores = allowed;
    a.masked_scores = heads * static_cast<double>(g.q_len) * static_cast<double>(g.kv_len) - allowed;
    a.q_elements = static_cast<double>(p.input("query").tensors.at(0).numel());
    a.y_elements = static_cast<double>(p.outputs.at(0).tensors.at(0).numel());
    add_attention_work(w, a);
    for (const auto& in : p.inputs) w.bytes_read += static_cast<double>(in.tensors.at(0).bytes());
    w.bytes_written = static_cast<double>(p.outputs.at(0).tensors.at(0).bytes());
    // Query rows, each split over blocks of 64 keys (flash-decoding).
    w.parallel_items = heads * static_cast<double>(g.q_len) * std::ceil(static_cast<double>(g.kv_len) / 64);
    w.innermost = g.v_dim;
    return w;
}

void sample_bsnd_attention_case(CaseSampler& sampler, CaseSpec& out, const std::vector<BsndPlan>& plans,
                                const std::vector<std::int64_t>& head_counts, KvHeads rule) {
    const auto& d = sampler.draw();
    const BsndPlan plan = sampler.cycle(plans);
    // Aligned: D = 256 (512 bytes of a half type); otherwise the common head dims and odd ones.
    const std::int64_t dim =
        d.aligned ? 256 : sampler.pick(std::vector<std::int64_t>{64, 128, 64, 128, 80, 96, 112, 40, 57, 72});
    std::vector<std::int64_t> counts;
    for (std::int64_t n : head_counts)
        if (rule == KvHeads::equal || plan.group == 0 || n % plan.group == 0) counts.push_back(n);
    const std::int64_t heads = sampler.pick(counts);
    const std::int64_t kv_heads = rule == KvHeads::equal ? heads : plan.group == 0 ? 1 : heads / plan.group;
    AttentionSizing sizing;
    sizing.pattern = plan.pattern;
    sizing.tokens = plan.tokens;
    sizing.ratio = plan.ratio;
    sizing.kv_lo = plan.pattern == AttentionPattern::decode || plan.pattern == AttentionPattern::multi_token ? 128 : 16;
    sizing.kv_hi = plan.pattern == AttentionPattern::decode ? 4096 : 1024;
    auto geometry = [&](const AttentionCaseShape& c) {
        AttentionGeometry g;
        g.batch = c.batch;
        g.q_heads = heads;
        g.kv_heads = kv_heads;
        g.q_len = c.q_len;
        g.kv_len = c.kv_len;
        g.qk_parts = {dim};
        g.v_dim = dim;
        g.causal = plan.causal;
        return g;
    };
    const AttentionCaseShape c = size_attention_case(
        sampler, sizing,
        [&](const AttentionCaseShape& s) {
            return static_cast<double>(s.batch * dim * (heads * s.q_len + 2 * kv_heads * s.kv_len));
        },
        [&](const AttentionCaseShape& s) { return dense_attention_macs(geometry(s)); });
    out.inputs.at(0).shapes = {Shape{c.batch, c.q_len, heads, dim}};
    out.inputs.at(1).shapes = {Shape{c.batch, c.kv_len, kv_heads, dim}};
    out.inputs.at(2).shapes = {Shape{c.batch, c.kv_len, kv_heads, dim}};
    // Inputs at most +-2 outside the type-boundary, special-value and zero cases (attention_input_range).
    const ValueRange input_range = attention_input_range(sampler.draw());
    out.inputs.at(0).range = input_range;
    out.inputs.at(1).range = input_range;
    out.inputs.at(2).range = input_range;
    out.attrs = {{"scaleValue", AttrValue::of_float(plan.scale)}, {"is_causal", AttrValue::of_bool(plan.causal)}};
}

}  // namespace hb
