// sparse_flash_attention(query, key, value, sparseIndices, scaleValue, inputLayout = "BSND",
// is_causal = false) -> y (operators-l3-l4.md), float16 or bfloat16 (sparseIndices int32).
// BSND: query [B, S1, N1, Dk], key [B, S2, N2, Dk], value [B, S2, N2, Dv] (Dv <= Dk),
// sparseIndices [B, S1, N2, topK], y [B, S1, N1, Dv]; BNSD swaps axes 1 and 2 of all five.
// N2 divides N1; query head n1 reads KV head floor(n1 / G), G = N1 / N2, and that head's list.
//   A = the set of keys listed for (b, s1, n2) (duplicates count once), less j > s1 + (S2 - S1)
//       when causal;  s_j = (q . k_j) * scaleValue (verbatim: no default, any finite value)
//   y = sum over j in A of softmax_A(s)_j v_j;  an empty A gives 0
// Input contract (fix_inputs, after the reference's get_input): value is a copy of
// key[..., :Dv] (one latent KV cache; a kernel may read key in its place), and each list holds
// topK distinct keys in random order (when topK > S2: every key, then its last entry
// repeated). hapbench draws a causal list's keys stratified: exactly allowed_in_list(s1) of
// them are within the causal limit, the count a uniform draw gives on average, so the work
// model knows the allowed pairs. An index outside [0, S2) is an input error.
// The golden is ops/attention.hpp over hb::dgemm, the same-precision reference the same over
// sgemm (fp32 accumulation).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "ops/attention.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

struct Sparse {
    AttentionGeometry g;
    std::int64_t top_k = 1;
};

Sparse sparse_of(const Problem& p) {
    const std::string at = p.context();
    const AttentionLayout layout = attention_layout_attr(p, "inputLayout");
    const char* axes = layout == AttentionLayout::bsnd ? "BSND" : "BNSD";
    const TensorSpec& q = p.input("query").tensors.at(0);
    const TensorSpec& k = p.input("key").tensors.at(0);
    const TensorSpec& v = p.input("value").tensors.at(0);
    const TensorSpec& idx = p.input("sparseIndices").tensors.at(0);
    const AttentionDims qd = attention_dims(q, layout, "query", at), kd = attention_dims(k, layout, "key", at);
    const AttentionDims vd = attention_dims(v, layout, "value", at);
    const AttentionDims id = attention_dims(idx, layout, "sparseIndices", at);
    if (q.dtype != DType::f16 && q.dtype != DType::bf16)
        throw Error(at + "query is " + std::string(dtype_name(q.dtype)) + "; expected float16 or bfloat16");
    if (k.dtype != q.dtype || v.dtype != q.dtype)
        throw Error(at + "query, key and value are " + std::string(dtype_name(q.dtype)) + ", " +
                    std::string(dtype_name(k.dtype)) + ", " + std::string(dtype_name(v.dtype)) +
                    "; they must have one dtype");
    if (idx.dtype != DType::i32)
        throw Error(at + "sparseIndices is " + std::string(dtype_name(idx.dtype)) + "; expected int32");
    if (kd.batch != qd.batch || kd.dim != qd.dim)
        throw Error(at + "key " + shape_to_string(k.shape) + " must have query's B and Dk (query " +
                    shape_to_string(q.shape) + ", " + axes + ")");
    if (vd.batch != kd.batch || vd.seq != kd.seq || vd.heads != kd.heads || vd.dim > kd.dim)
        throw Error(at + "value has shape " + shape_to_string(v.shape) + "; it must have key's B, S2 and N2 (key " +
                    shape_to_string(k.shape) + ", " + axes + ") and Dv <= Dk");
    if (qd.heads % kd.heads != 0)
        throw Error(at + "query has " + std::to_string(qd.heads) + " heads and key " + std::to_string(kd.heads) +
                    "; N2 must divide N1");
    if (id.batch != qd.batch || id.seq != qd.seq || id.heads != kd.heads)
        throw Error(at + "sparseIndices has shape " + shape_to_string(idx.shape) + "; it must be " +
                    shape_to_string(attention_shape(layout, qd.batch, qd.seq, kd.heads, id.dim)) +
                    " ([B, S1, N2, topK] in " + axes + ")");
    const double scale = p.attr_float("scaleValue");
    if (!std::isfinite(scale))
        throw Error(at + "scaleValue is " + std::to_string(scale) + "; it must be finite (it is used as given)");
    Sparse s;
    s.g.layout = layout;
    s.g.batch = qd.batch;
    s.g.q_heads = qd.heads;
    s.g.kv_heads = kd.heads;
    s.g.q_len = qd.seq;
    s.g.kv_len = kd.seq;
    s.g.qk_parts = {qd.dim};
    s.g.v_dim = vd.dim;
    s.g.scale = scale;
    s.g.causal = p.attr_bool("is_causal");
    s.top_k = id.dim;
    return s;
}

// Keys within query i's causal limit (all S2 without the mask).
std::int64_t keys_in_limit(const Sparse& s, std::int64_t i) {
    if (!s.g.causal) return s.g.kv_len;
    return std::clamp<std::int64_t>(i + s.g.kv_len - s.g.q_len + 1, 0, s.g.kv_len);
}

// How many of a list's distinct keys fix_inputs draws within query i's limit: the mean of a
// uniform draw of min(topK, S2) keys from S2, rounded, and feasible (the rest must fit past
// the limit).
std::int64_t allowed_in_list(const Sparse& s, std::int64_t i) {
    const std::int64_t distinct = std::min(s.top_k, s.g.kv_len), inside = keys_in_limit(s, i);
    const std::int64_t outside = s.g.kv_len - inside;
    const auto mean = std::llround(static_cast<double>(distinct) * static_cast<double>(inside) /
                                   static_cast<double>(s.g.kv_len));
    return std::clamp<std::int64_t>(mean, std::max<std::int64_t>(0, distinct - outside), std::min(distinct, inside));
}

// `count` distinct values from [lo, hi), appended to `out` (rejection against `mark`, which
// must be all zero on entry and is left so).
void draw_distinct(std::int64_t lo, std::int64_t hi, std::int64_t count, Rng& rng, std::vector<char>& mark,
                   std::vector<std::int64_t>& out) {
    const std::int64_t n = hi - lo;
    if (count <= 0) return;
    const std::size_t first = out.size();
    if (2 * count <= n) {
        while (static_cast<std::int64_t>(out.size() - first) < count) {
            const std::int64_t j = rng.uniform_int(lo, hi - 1);
            if (mark[static_cast<std::size_t>(j)]) continue;
            mark[static_cast<std::size_t>(j)] = 1;
            out.push_back(j);
        }
    } else {
        // Most of the range: mark the ones left out instead.
        std::int64_t skipped = 0;
        while (skipped < n - count) {
            const std::int64_t j = rng.uniform_int(lo, hi - 1);
            if (mark[static_cast<std::size_t>(j)]) continue;
            mark[static_cast<std::size_t>(j)] = 1;
            ++skipped;
        }
        for (std::int64_t j = lo; j < hi; ++j) {
            if (!mark[static_cast<std::size_t>(j)]) out.push_back(j);
            mark[static_cast<std::size_t>(j)] = 1;  // cleared with the others below
        }
    }
    // Clear what this draw marked (the whole range when it took the complement).
    if (2 * count <= n)
        for (std::size_t t = first; t < out.size(); ++t) mark[static_cast<std::size_t>(out[t])] = 0;
    else
        std::fill(mark.begin() + lo, mark.begin() + hi, 0);
}

struct Plan {
    AttentionPattern pattern;  // prefill: S1 < S2 from the budget; decode S1 = 1; multi_token S1 = tokens
    std::int64_t tokens;
    bool causal;
    bool mla;            // one KV head, Dk = Dv + 64 (latent cache with its rotary part)
    double scale;        // 0 < scale: that value; 0: 1/sqrt(Dk); -1: a negative scale
};

// Ten plans, each taken twice; layouts alternate separately (period 4: BSND, BNSD, BSND, BSND).
const std::vector<Plan>& plans() {
    static const std::vector<Plan> p = {
        {AttentionPattern::prefill, 1, true, false, 0},       {AttentionPattern::decode, 1, false, true, 0},
        {AttentionPattern::multi_token, 2, true, false, 0.08838}, {AttentionPattern::prefill, 1, false, true, 0.04167},
        {AttentionPattern::decode, 1, false, false, 0},       {AttentionPattern::multi_token, 4, true, true, 0},
        {AttentionPattern::prefill, 1, true, true, 0.05},     {AttentionPattern::prefill, 1, false, false, -1},
        {AttentionPattern::multi_token, 2, true, true, 0.0625}, {AttentionPattern::decode, 1, true, false, 0.07217},
    };
    return p;
}

}  // namespace

class SparseFlashAttentionOp final : public OperatorWithCompute<SparseFlashAttentionOp> {
  public:
    std::string name() const override { return "sparse_flash_attention"; }
    int level() const override { return 4; }
    std::string baseline_description() const override {
        return "threaded C++ (OpenMP over (batch, KV head, query row), fp32): each row's listed keys deduplicated and "
               "filtered by the causal limit, their key rows gathered once and shared by the G query heads, scores, "
               "softmax and the weighted sum of value rows in registers: oneDNN has no gather, and a matmul per "
               "(row, KV head) on topK gathered keys would be dominated by its call overhead";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const Sparse s = sparse_of(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{p.input("query").tensors.at(0).dtype,
                                       attention_shape(s.g.layout, s.g.batch, s.g.q_len, s.g.q_heads, s.g.v_dim)});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const Sparse s = sparse_of(p);
        attention_sparse<T>(s.g, in[0].one().v.data(), in[1].one().v.data(), in[2].one().v.data(),
                            in[3].one().v.data(), s.top_k, out[0].one().v.data(), p.context());
    }

    WorkModel work(const Problem& p) const override {
        const Sparse s = sparse_of(p);
        const AttentionGeometry& g = s.g;
        const DType dtype = p.input("query").tensors.at(0).dtype;
        const std::int64_t distinct = std::min(s.top_k, g.kv_len);
        double allowed_per_head = 0;  // over the query rows of one (b, n1)
        std::int64_t most_in_a_list = 0;
        for (std::int64_t i = 0; i < g.q_len; ++i) {
            const std::int64_t c = g.causal ? allowed_in_list(s, i) : distinct;
            allowed_per_head += static_cast<double>(c);
            most_in_a_list = std::max(most_in_a_list, c);
        }
        const double heads = static_cast<double>(g.batch * g.q_heads);
        const double listed = heads * static_cast<double>(g.q_len) * static_cast<double>(s.top_k);
        WorkModel w;
        AttentionWork a;
        a.dtype = dtype;
        a.batch = static_cast<double>(g.batch * g.kv_heads * g.q_len);
        a.rows = g.group();
        a.qk_dim = g.qk_dim();
        a.v_dim = g.v_dim;
        a.allowed_scores = heads * allowed_per_head;
        a.masked_scores = listed - a.allowed_scores;
        a.q_elements = static_cast<double>(p.input("query").tensors.at(0).numel());
        a.y_elements = static_cast<double>(p.outputs.at(0).tensors.at(0).numel());
        add_attention_work(w, a);
        // cann-bench (docs/hap.md): the gather moves topK (Dk + Dv) elements per (b, s1, n2): a
        // select each (no casts).
        add_formula(w, dtype, FormulaMath::compare,
                    static_cast<double>(g.batch * g.kv_heads * g.q_len * s.top_k * (g.qk_dim() + g.v_dim)),
                    {{OpClass::select, 1}});
        // Compulsory: query and the index lists in full; of key, at least the rows of the fullest
        // list of each (b, n2) (the lists of other rows may repeat them); value is a prefix of key
        // by the input contract, so a kernel need not read it.
        const double size = static_cast<double>(dtype_size(dtype));
        w.bytes_read = static_cast<double>(p.input("query").tensors.at(0).bytes()) +
                       static_cast<double>(p.input("sparseIndices").tensors.at(0).bytes()) +
                       static_cast<double>(g.batch * g.kv_heads * most_in_a_list * g.qk_dim()) * size;
        w.bytes_written = static_cast<double>(p.outputs.at(0).tensors.at(0).bytes());
        w.parallel_items = heads * static_cast<double>(g.q_len) * std::ceil(static_cast<double>(s.top_k) / 64);
        w.innermost = g.v_dim;
        return w;
    }

    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        const Sparse s = sparse_of(p);
        const AttentionGeometry& g = s.g;
        const bool bsnd = g.layout == AttentionLayout::bsnd;
        // value = key[..., :Dv].
        Tensor& key = inputs.at(1).tensors.at(0);
        Tensor& value = inputs.at(2).tensors.at(0);
        const std::int64_t dk = g.qk_dim(), dv = g.v_dim, rows = g.batch * g.kv_len * g.kv_heads;
        const std::size_t element = dtype_size(key.spec.dtype);
        const auto* src = static_cast<const unsigned char*>(key.data());
        auto* dst = static_cast<unsigned char*>(value.data());
        for (std::int64_t r = 0; r < rows; ++r)
            std::copy(src + static_cast<std::size_t>(r * dk) * element, src + static_cast<std::size_t>(r * dk + dv) * element,
                      dst + static_cast<std::size_t>(r * dv) * element);
        // The lists: distinct keys in random order.
        auto* idx = static_cast<std::int32_t*>(inputs.at(3).tensors.at(0).data());
        std::vector<char> mark(static_cast<std::size_t>(g.kv_len), 0);
        std::vector<std::int64_t> list;
        for (std::int64_t b = 0; b < g.batch; ++b)
            for (std::int64_t n2 = 0; n2 < g.kv_heads; ++n2)
                for (std::int64_t i = 0; i < g.q_len; ++i) {
                    list.clear();
                    if (s.top_k >= g.kv_len) {
                        draw_distinct(0, g.kv_len, g.kv_len, rng, mark, list);
                    } else if (!g.causal) {
                        draw_distinct(0, g.kv_len, s.top_k, rng, mark, list);
                    } else {
                        const std::int64_t inside = keys_in_limit(s, i), allowed = allowed_in_list(s, i);
                        draw_distinct(0, inside, allowed, rng, mark, list);
                        draw_distinct(inside, g.kv_len, s.top_k - allowed, rng, mark, list);
                    }
                    for (std::size_t t = list.size(); t > 1; --t)
                        std::swap(list[t - 1], list[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(t) - 1))]);
                    while (static_cast<std::int64_t>(list.size()) < s.top_k) list.push_back(list.back());
                    const std::int64_t base = bsnd ? ((b * g.q_len + i) * g.kv_heads + n2) * s.top_k
                                                   : ((b * g.kv_heads + n2) * g.q_len + i) * s.top_k;
                    for (std::int64_t t = 0; t < s.top_k; ++t)
                        idx[base + t] = static_cast<std::int32_t>(list[static_cast<std::size_t>(t)]);
                }
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const Plan plan = sampler.cycle(plans());
        const AttentionLayout layout =
            sampler.cycle(std::vector<AttentionLayout>{AttentionLayout::bsnd, AttentionLayout::bnsd,
                                                       AttentionLayout::bsnd, AttentionLayout::bsnd});
        Rng& rng = sampler.rng();
        // Head dims: aligned cases need Dk, Dv at 256 elements and topK at 128 (512 bytes each).
        std::int64_t dk = 0, dv = 0, kv_heads = 1, heads = 1;
        if (plan.mla) {
            dv = d.aligned ? 512 : sampler.pick(std::vector<std::int64_t>{512, 256, 128, 192});
            dk = d.aligned ? 512 : dv + 64;
            kv_heads = 1;
            heads = sampler.pick(std::vector<std::int64_t>{8, 16, 32});
        } else {
            const std::vector<std::pair<std::int64_t, std::int64_t>> dims =
                d.aligned ? std::vector<std::pair<std::int64_t, std::int64_t>>{{256, 256}}
                          : std::vector<std::pair<std::int64_t, std::int64_t>>{{128, 128}, {192, 128}, {64, 64}, {96, 96}};
            const auto dims_pick = sampler.pick(dims);
            dk = dims_pick.first;
            dv = dims_pick.second;
            kv_heads = sampler.pick(std::vector<std::int64_t>{2, 4, 8});
            heads = kv_heads * sampler.pick(std::vector<std::int64_t>{1, 2, 4, 8});
        }
        const std::vector<std::int64_t> top_ks =
            d.aligned ? std::vector<std::int64_t>{128, 256, 512} : std::vector<std::int64_t>{16, 48, 64, 100, 127, 256};
        std::int64_t top_k = sampler.pick(top_ks);
        // S2 by regime (the reference's 1024 to 8192, scaled to the cpu profile).
        const double s2_lo = d.regime == Regime::small ? 64 : d.regime == Regime::medium ? 256 : 1024;
        std::int64_t s2 = std::llround(std::exp(rng.uniform(std::log(s2_lo), std::log(8 * s2_lo))));
        s2 = std::max(s2, top_k);
        if (!d.aligned) s2 |= 1;
        std::int64_t s1 = plan.pattern == AttentionPattern::decode        ? 1
                          : plan.pattern == AttentionPattern::multi_token ? plan.tokens
                                                                          : sampler.pick(std::vector<std::int64_t>{16, 33, 64, 127, 256});
        const double target = static_cast<double>(attention_budgeted_elements(sampler));
        const double macs_cap = 3e7;
        std::int64_t batch = 1;
        for (int round = 0; round < 80; ++round) {
            const double per_batch = static_cast<double>(s1 * heads * dk + s2 * kv_heads * (dk + dv) + s1 * kv_heads * top_k);
            batch = std::clamp<std::int64_t>(std::llround(target / per_batch), 1, 64);
            const double macs = static_cast<double>(batch * heads * s1 * std::min(top_k, s2) * (dk + dv));
            const bool too_big = per_batch > 1.15 * target;
            if (!too_big && macs <= macs_cap) break;
            if (macs > macs_cap && s1 > 4) s1 = std::max<std::int64_t>(4, s1 * 3 / 4);
            else if (macs > macs_cap && top_k > 16) top_k = std::max<std::int64_t>(16, top_k / 2);
            else if (too_big && s2 > std::max<std::int64_t>(64, top_k)) s2 = std::max<std::int64_t>(std::max<std::int64_t>(64, top_k), s2 * 3 / 4);
            else if (too_big && kv_heads > 1) kv_heads /= 2, heads = std::max<std::int64_t>(kv_heads, heads / 2);
            else if (too_big && heads > kv_heads) heads /= 2;
            else if (too_big && s1 > 1) s1 = std::max<std::int64_t>(1, s1 / 2);
            else if (too_big && !d.aligned && top_k > 16) top_k /= 2, s2 = std::max<std::int64_t>(64, s2 / 2);
            else break;
        }
        s1 = std::min(s1, s2);
        // The drawn regime before the cap: more keys (they cost no multiply-adds) until the
        // case reaches the regime's floor.
        const double floor = static_cast<double>(regime_floor_elements(sampler));
        const double rest = static_cast<double>(batch * (s1 * heads * dk + s1 * kv_heads * top_k));
        const double per_key = static_cast<double>(batch * kv_heads * (dk + dv));
        if (rest + per_key * static_cast<double>(s2) < floor) {
            s2 = static_cast<std::int64_t>(std::ceil((floor - rest) / per_key));
            if (!d.aligned) s2 |= 1;
        }
        double scale = plan.scale;
        if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(dk));
        if (scale < 0) scale = -1.0 / std::sqrt(static_cast<double>(dk));
        out.inputs.at(0).shapes = {attention_shape(layout, batch, s1, heads, dk)};
        out.inputs.at(1).shapes = {attention_shape(layout, batch, s2, kv_heads, dk)};
        out.inputs.at(2).shapes = {attention_shape(layout, batch, s2, kv_heads, dv)};
        out.inputs.at(3).shapes = {attention_shape(layout, batch, s1, kv_heads, top_k)};
        out.inputs.at(3).dtype = DType::i32;
        out.inputs.at(3).range = ValueRange{0, static_cast<double>(s2 - 1)};  // fix_inputs redraws them
        // Inputs at most +-2 outside the type-boundary, special-value and zero cases (attention_input_range).
        const ValueRange input_range = attention_input_range(sampler.draw());
        out.inputs.at(0).range = input_range;
        out.inputs.at(1).range = input_range;
        out.inputs.at(2).range = input_range;
        out.attrs = {{"scaleValue", AttrValue::of_float(scale)},
                     {"inputLayout", AttrValue::of_string(layout == AttentionLayout::bsnd ? "BSND" : "BNSD")},
                     {"is_causal", AttrValue::of_bool(plan.causal)}};
    }

    // As mha: float16's largest values, bfloat16 +-1e16 (finite fp32 score sums).
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(SparseFlashAttentionOp)

}  // namespace hb
