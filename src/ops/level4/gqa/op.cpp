// gqa(query [B, S, Nq, D], key [B, Skv, Nkv, D], value [B, Skv, Nkv, D], scaleValue = -1,
// is_causal = false) -> y [B, S, Nq, D] (operators-l3-l4.md): grouped-query attention, BSND,
// float16 or bfloat16 throughout. Nkv divides Nq; G = Nq / Nkv consecutive query heads share
// a KV head: query head h reads KV head floor(h / G).
//   scale = scaleValue if > 0, else 1 / sqrt(D);  s[b, h, i, j] = (q[b, i, h, :] . k[b, j, h / G, :]) * scale
//   causal (bottom-right): query i sees keys j <= i + (Skv - S);  w = softmax over the allowed j
//   y[b, i, h, :] = sum over the allowed j of w[b, h, i, j] v[b, j, h / G, :]
// A masked key takes no part (its value is never multiplied); a query that sees no key
// (causal with S > Skv) gives 0. The golden is ops/attention.hpp over hb::dgemm, the
// same-precision reference the same over sgemm (fp32 accumulation).
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/attention.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

AttentionGeometry gqa_geometry(const Problem& p) {
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
    if (kd.batch != qd.batch || kd.dim != qd.dim)
        throw Error(at + "query " + shape_to_string(q.shape) + " and key " + shape_to_string(k.shape) +
                    " must agree in B and D (query [B, S, Nq, D], key [B, Skv, Nkv, D])");
    if (qd.heads % kd.heads != 0)
        throw Error(at + "query has " + std::to_string(qd.heads) + " heads and key " + std::to_string(kd.heads) +
                    "; the KV heads must divide the query heads (query head h reads KV head h / G, G = Nq / Nkv)");
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

// One public case's problem: its query/key pattern, mask, scale and group size.
struct Plan {
    AttentionPattern pattern;
    std::int64_t tokens;  // multi_token
    double ratio;         // cross
    bool causal;
    double scale;        // scaleValue as given (<= 0: the default 1/sqrt(D))
    std::int64_t group;  // G = Nq / Nkv; 0: every query head shares one KV head (MQA)
};

// Ten plans, each taken twice over the twenty cases: causal prefill, decode, MTP (S = 2, 4),
// cross-attention with S < Skv and S > Skv (causal: its first S - Skv queries see nothing),
// the default scale from -1 and from 0, explicit scales; group sizes 1 (MHA), 2, 4, 8 and
// all heads (MQA), each with and without the causal mask.
const std::vector<Plan>& plans() {
    static const std::vector<Plan> p = {
        {AttentionPattern::prefill, 1, 1, true, -1, 4},       {AttentionPattern::decode, 1, 1, false, -1, 0},
        {AttentionPattern::multi_token, 2, 1, true, -1, 8},   {AttentionPattern::cross, 1, 4, false, -1, 2},
        {AttentionPattern::prefill, 1, 1, false, 0.08838, 1}, {AttentionPattern::cross, 1, 0.25, false, 0, 4},
        {AttentionPattern::cross, 1, 2, true, -1, 0},         {AttentionPattern::multi_token, 4, 1, true, 0.125, 1},
        {AttentionPattern::decode, 1, 1, false, 0, 8},        {AttentionPattern::prefill, 1, 1, true, 0.05, 2},
    };
    return p;
}

}  // namespace

class GqaOp final : public OperatorWithCompute<GqaOp> {
  public:
    std::string name() const override { return "gqa"; }
    int level() const override { return 4; }
    std::string baseline_description() const override {
        return "PyTorch's math attention on oneDNN, one primitive per step: query and key copied into contiguous "
               "[B Nkv, G S, D] and [B Nkv, Skv, D] blocks (bfloat16 where oneDNN has a jit bf16 matmul, else fp32), a "
               "oneDNN matmul for the fp32 scores with the scale as an output scale, a oneDNN binary_add of the causal "
               "mask, oneDNN softmax_forward, an fp32 oneDNN matmul with value widened to fp32, y copied back and "
               "narrowed (the G query heads of a KV head form one block); inputs holding inf or NaN take a threaded fp32 loop (oneDNN's softmax drops NaN, and "
               "masked keys must take no part)";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const AttentionGeometry g = gqa_geometry(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{p.input("query").tensors.at(0).dtype,
                                       attention_shape(AttentionLayout::bsnd, g.batch, g.q_len, g.q_heads, g.v_dim)});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const AttentionGeometry g = gqa_geometry(p);
        attention_dense<T>(g, {in[0].one().v.data()}, {in[1].one().v.data()}, in[2].one().v.data(),
                           out[0].one().v.data());
    }

    WorkModel work(const Problem& p) const override {
        const AttentionGeometry g = gqa_geometry(p);
        const DType dtype = p.input("query").tensors.at(0).dtype;
        const double heads = static_cast<double>(g.batch * g.q_heads);
        const double allowed = heads * g.allowed_pairs_per_head();
        WorkModel w;
        AttentionWork a;
        a.dtype = dtype;
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

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const Plan plan = sampler.cycle(plans());
        // Aligned: D = 256 (512 bytes of a half type); otherwise the common head dims and odd ones.
        const std::int64_t dim =
            d.aligned ? 256 : sampler.pick(std::vector<std::int64_t>{64, 128, 64, 128, 80, 96, 112, 40, 57, 72});
        std::vector<std::int64_t> head_counts;
        for (std::int64_t n : {4, 8, 8, 12, 16, 32})
            if (plan.group == 0 || n % plan.group == 0) head_counts.push_back(n);
        const std::int64_t heads = sampler.pick(head_counts);
        const std::int64_t kv_heads = plan.group == 0 ? 1 : heads / plan.group;
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

    // float16: its largest values (products 4.3e9 and their sums stay finite in fp32, and y is
    // a weighted mean of values); bfloat16: +-1e16, whose products' sums stay finite in the
    // fp32 every practical kernel accumulates scores in (+-3e38 would overflow them).
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(GqaOp)

}  // namespace hb
