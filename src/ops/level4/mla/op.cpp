// mla(q_nope, q_rope, k_nope, k_rope, v, numKVHeads = 1, scaleValue = -1, inputLayout = "BSND",
// is_causal = false) -> y (operators-l3-l4.md): multi-head latent attention, float16 or
// bfloat16 throughout. BSND: q_nope [B, S, Nq, dn], q_rope [B, S, Nq, dr], k_nope and v
// [B, Skv, Nkv, dn], k_rope [B, Skv, Nkv, dr], y [B, S, Nq, dn]; BNSD swaps the S and N axes
// of every tensor. q = [q_nope | q_rope] and k = [k_nope | k_rope] on the head dim:
//   scale = scaleValue if > 0, else 1 / sqrt(dn + dr);  s = (q . k) * scale
//   query head h reads KV head floor(h / G), G = Nq / numKVHeads; bottom-right causal mask
//   y = sum over the allowed keys of softmax(s) v
// The reference's description says v equals k_nope; its golden uses the v input as given,
// and so does hapbench (v is an independent tensor in every case). numKVHeads must equal
// k_nope's head count. A masked key takes no part; a query that sees no key gives 0.
// The golden is ops/attention.hpp over hb::dgemm, the same-precision reference the same over
// sgemm (fp32 accumulation).
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/attention.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

AttentionGeometry mla_geometry(const Problem& p) {
    const std::string at = p.context();
    const AttentionLayout layout = attention_layout_attr(p, "inputLayout");
    const char* axes = layout == AttentionLayout::bsnd ? "BSND" : "BNSD";
    auto dims = [&](const char* name) { return attention_dims(p.input(name).tensors.at(0), layout, name, at); };
    const AttentionDims qn = dims("q_nope"), qr = dims("q_rope"), kn = dims("k_nope"), kr = dims("k_rope"),
                        vd = dims("v");
    const DType dtype = p.input("q_nope").tensors.at(0).dtype;
    if (dtype != DType::f16 && dtype != DType::bf16)
        throw Error(at + "q_nope is " + std::string(dtype_name(dtype)) + "; expected float16 or bfloat16");
    for (const auto& in : p.inputs)
        if (in.tensors.at(0).dtype != dtype)
            throw Error(at + in.name + " is " + std::string(dtype_name(in.tensors.at(0).dtype)) + " and q_nope " +
                        std::string(dtype_name(dtype)) + "; every input must have one dtype");
    auto shape_of = [&](const char* name) { return shape_to_string(p.input(name).tensors.at(0).shape); };
    if (qr.batch != qn.batch || qr.seq != qn.seq || qr.heads != qn.heads)
        throw Error(at + "q_rope " + shape_of("q_rope") + " and q_nope " + shape_of("q_nope") +
                    " must agree in B, S and N (" + axes + ")");
    if (kn.batch != qn.batch || kn.dim != qn.dim)
        throw Error(at + "k_nope " + shape_of("k_nope") + " must have q_nope's B and d_nope (q_nope " +
                    shape_of("q_nope") + ", " + axes + ")");
    if (kr.batch != kn.batch || kr.seq != kn.seq || kr.heads != kn.heads || kr.dim != qr.dim)
        throw Error(at + "k_rope " + shape_of("k_rope") + " must have k_nope's B, Skv and Nkv and q_rope's d_rope (" +
                    axes + ")");
    if (vd.batch != kn.batch || vd.seq != kn.seq || vd.heads != kn.heads || vd.dim != kn.dim)
        throw Error(at + "v has shape " + shape_of("v") + "; it must be k_nope's " + shape_of("k_nope"));
    const std::int64_t kv_heads = p.attr_int("numKVHeads");
    if (kv_heads != kn.heads)
        throw Error(at + "numKVHeads is " + std::to_string(kv_heads) + " but k_nope has " + std::to_string(kn.heads) +
                    " heads; they must be equal");
    if (qn.heads % kv_heads != 0)
        throw Error(at + "q_nope has " + std::to_string(qn.heads) + " heads, which numKVHeads = " +
                    std::to_string(kv_heads) + " does not divide");
    AttentionGeometry g;
    g.layout = layout;
    g.batch = qn.batch;
    g.q_heads = qn.heads;
    g.kv_heads = kv_heads;
    g.q_len = qn.seq;
    g.kv_len = kn.seq;
    g.qk_parts = {qn.dim, qr.dim};
    g.v_dim = vd.dim;
    g.scale = attention_scale(p, static_cast<double>(qn.dim + qr.dim));
    g.causal = p.attr_bool("is_causal");
    return g;
}

struct Plan {
    AttentionPattern pattern;
    std::int64_t tokens;  // multi_token
    double ratio;         // cross
    bool causal;
    double scale;           // scaleValue as given (<= 0: the default 1/sqrt(dn + dr))
    std::int64_t kv_heads;  // numKVHeads; 0: as many as query heads
};

// Ten plans, each taken twice: MLA's single KV head in causal prefill, decode, MTP (S = 2, 4)
// and cross-attention (S > Skv non-causal, S < Skv causal), with the default scale from -1
// and 0 and explicit ones; numKVHeads 2 and = Nq cover the attribute's other values.
const std::vector<Plan>& plans() {
    static const std::vector<Plan> p = {
        {AttentionPattern::prefill, 1, 1, true, -1, 1},        {AttentionPattern::decode, 1, 1, false, -1, 1},
        {AttentionPattern::multi_token, 2, 1, true, -1, 1},    {AttentionPattern::cross, 1, 2, false, -1, 1},
        {AttentionPattern::prefill, 1, 1, false, 0.04167, 1}, {AttentionPattern::decode, 1, 1, false, 0, 2},
        {AttentionPattern::multi_token, 4, 1, true, 0.0625, 1}, {AttentionPattern::cross, 1, 0.5, true, -1, 1},
        {AttentionPattern::decode, 1, 1, false, -1, 0},        {AttentionPattern::prefill, 1, 1, true, 0, 2},
    };
    return p;
}

}  // namespace

class MlaOp final : public OperatorWithCompute<MlaOp> {
  public:
    std::string name() const override { return "mla"; }
    int level() const override { return 4; }
    std::string baseline_description() const override {
        return "PyTorch's math attention on oneDNN, one primitive per step: query and key copied into contiguous "
               "[B Nkv, G S, D] and [B Nkv, Skv, D] blocks (bfloat16 where oneDNN has a jit bf16 matmul, else fp32), a "
               "oneDNN matmul for the fp32 scores with the scale as an output scale, a oneDNN binary_add of the causal "
               "mask, oneDNN softmax_forward, an fp32 oneDNN matmul with value widened to fp32, y copied back and "
               "narrowed (q = [q_nope | q_rope], k = [k_nope | k_rope] concatenated in the copies, BSND or BNSD); inputs holding inf or NaN take a threaded fp32 loop (oneDNN's softmax drops NaN, and "
               "masked keys must take no part)";
    }
    // q_rope and k_rope's innermost dim is the rotary width d_rope (64 in DeepSeek's MLA, 32 or
    // 64 here), never 512 bytes.
    bool can_align() const override { return false; }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const AttentionGeometry g = mla_geometry(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{p.input("q_nope").tensors.at(0).dtype,
                                       attention_shape(g.layout, g.batch, g.q_len, g.q_heads, g.v_dim)});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const AttentionGeometry g = mla_geometry(p);
        attention_dense<T>(g, {in[0].one().v.data(), in[1].one().v.data()},
                           {in[2].one().v.data(), in[3].one().v.data()}, in[4].one().v.data(), out[0].one().v.data());
    }

    WorkModel work(const Problem& p) const override {
        const AttentionGeometry g = mla_geometry(p);
        const DType dtype = p.input("q_nope").tensors.at(0).dtype;
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
        a.q_elements = static_cast<double>(p.input("q_nope").tensors.at(0).numel() + p.input("q_rope").tensors.at(0).numel());
        a.y_elements = static_cast<double>(p.outputs.at(0).tensors.at(0).numel());
        add_attention_work(w, a);
        for (const auto& in : p.inputs) w.bytes_read += static_cast<double>(in.tensors.at(0).bytes());
        w.bytes_written = static_cast<double>(p.outputs.at(0).tensors.at(0).bytes());
        w.parallel_items = heads * static_cast<double>(g.q_len) * std::ceil(static_cast<double>(g.kv_len) / 64);
        w.innermost = g.v_dim;
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const Plan plan = sampler.cycle(plans());
        const AttentionLayout layout =
            sampler.cycle(std::vector<AttentionLayout>{AttentionLayout::bsnd, AttentionLayout::bsnd,
                                                       AttentionLayout::bnsd, AttentionLayout::bsnd});
        // d_nope: DeepSeek's 512 and 448 (MLA with absorbed weights) and smaller latent widths.
        const std::int64_t d_nope = sampler.pick(std::vector<std::int64_t>{128, 192, 256, 448, 512, 96, 320});
        const std::int64_t d_rope = sampler.pick(std::vector<std::int64_t>{64, 64, 32});
        std::vector<std::int64_t> head_counts;
        for (std::int64_t n : {4, 8, 16, 16, 32})
            if (plan.kv_heads == 0 || n % plan.kv_heads == 0) head_counts.push_back(n);
        const std::int64_t heads = sampler.pick(head_counts);
        const std::int64_t kv_heads = plan.kv_heads == 0 ? heads : plan.kv_heads;
        AttentionSizing sizing;
        sizing.pattern = plan.pattern;
        sizing.tokens = plan.tokens;
        sizing.ratio = plan.ratio;
        sizing.kv_lo = plan.pattern == AttentionPattern::decode || plan.pattern == AttentionPattern::multi_token ? 128 : 16;
        sizing.kv_hi = plan.pattern == AttentionPattern::decode ? 4096 : 512;
        auto geometry = [&](const AttentionCaseShape& c) {
            AttentionGeometry g;
            g.batch = c.batch;
            g.q_heads = heads;
            g.kv_heads = kv_heads;
            g.q_len = c.q_len;
            g.kv_len = c.kv_len;
            g.qk_parts = {d_nope, d_rope};
            g.v_dim = d_nope;
            g.causal = plan.causal;
            return g;
        };
        const AttentionCaseShape c = size_attention_case(
            sampler, sizing,
            [&](const AttentionCaseShape& s) {
                return static_cast<double>(s.batch * (heads * s.q_len * (d_nope + d_rope) +
                                                      kv_heads * s.kv_len * (2 * d_nope + d_rope)));
            },
            [&](const AttentionCaseShape& s) { return dense_attention_macs(geometry(s)); });
        out.inputs.at(0).shapes = {attention_shape(layout, c.batch, c.q_len, heads, d_nope)};
        out.inputs.at(1).shapes = {attention_shape(layout, c.batch, c.q_len, heads, d_rope)};
        out.inputs.at(2).shapes = {attention_shape(layout, c.batch, c.kv_len, kv_heads, d_nope)};
        out.inputs.at(3).shapes = {attention_shape(layout, c.batch, c.kv_len, kv_heads, d_rope)};
        out.inputs.at(4).shapes = {attention_shape(layout, c.batch, c.kv_len, kv_heads, d_nope)};
        // Inputs at most +-2 outside the type-boundary, special-value and zero cases (attention_input_range).
        const ValueRange input_range = attention_input_range(sampler.draw());
        out.inputs.at(0).range = input_range;
        out.inputs.at(1).range = input_range;
        out.inputs.at(2).range = input_range;
        out.inputs.at(3).range = input_range;
        out.inputs.at(4).range = input_range;
        out.attrs = {{"numKVHeads", AttrValue::of_int(kv_heads)},
                     {"scaleValue", AttrValue::of_float(plan.scale)},
                     {"inputLayout", AttrValue::of_string(layout == AttentionLayout::bsnd ? "BSND" : "BNSD")},
                     {"is_causal", AttrValue::of_bool(plan.causal)}};
    }

    // As mha: float16's largest values, bfloat16 +-1e16 (finite fp32 score sums).
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(MlaOp)

}  // namespace hb
