// Scaled dot-product attention for the level-4 attention operators (gqa, mha, mla,
// sparse_flash_attention): the geometry they share, the fp64 golden (and fp32 same-precision
// reference) through hb::dgemm / hb::sgemm, and the work model of a fused attention kernel.
// Harness only (the baselines do not link it).
//
// Semantics, one rule for the whole family (docs/operators.md, "Level 4: attention"):
//   s_j = (q . k_j) * scale for the keys j the query may see (its allowed keys);
//   m = max_j s_j (NaN-propagating); w_j = e^(s_j - m) / sum_j e^(s_j - m);
//   y = sum over the allowed j of w_j v_j.
// A masked key takes no part at all: its score is never used and its value never multiplied,
// so an infinite or NaN value behind the mask does not reach the output. A row with no
// allowed key, or whose maximum is -inf, is 0. Query head h reads KV head h / G (G = query
// heads / KV heads: consecutive query heads share a KV head). Causal masks are bottom-right
// aligned: query i of S sees keys j <= i + (Skv - S).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "ops/problem.hpp"
#include "ops/work_model.hpp"
#include "ops/attention_budget.hpp"
#include "spec/case_sampler.hpp"

namespace hb {

// Axis order of every tensor of a call: [B, S, N, D] or [B, N, S, D].
enum class AttentionLayout { bsnd, bnsd };

// "BSND" or "BNSD" from the string attribute `name`; throws naming the attribute otherwise.
AttentionLayout attention_layout_attr(const Problem& p, const std::string& name);

// The shape of [B, seq, heads, dim] in `layout`.
Shape attention_shape(AttentionLayout layout, std::int64_t batch, std::int64_t seq, std::int64_t heads,
                      std::int64_t dim);

// Reads (batch, seq, heads, dim) from a rank-4 tensor in `layout`; throws with `what` (the
// tensor's name) when the rank is not 4.
struct AttentionDims {
    std::int64_t batch = 0, seq = 0, heads = 0, dim = 0;
};
AttentionDims attention_dims(const TensorSpec& t, AttentionLayout layout, const std::string& what,
                             const std::string& context);

struct AttentionGeometry {
    AttentionLayout layout = AttentionLayout::bsnd;
    std::int64_t batch = 1, q_heads = 1, kv_heads = 1, q_len = 1, kv_len = 1;
    // The query/key head dim in parts laid side by side (mla: {d_nope, d_rope}; else {D}).
    std::vector<std::int64_t> qk_parts;
    std::int64_t v_dim = 1;
    double scale = 1;
    bool causal = false;

    std::int64_t group() const { return q_heads / kv_heads; }
    std::int64_t qk_dim() const;
    // Keys query i may see: all of them, or (causal) min(Skv, max(0, i + Skv - S + 1)).
    std::int64_t allowed_keys(std::int64_t i) const;
    // Sum over the queries of one head of allowed_keys(i).
    double allowed_pairs_per_head() const;
};

// The scale of mha, gqa and mla: scaleValue when it is > 0, else 1 / sqrt(default_dim).
// scaleValue must be finite.
double attention_scale(const Problem& p, double default_dim);

// y = attention(q, k, v) with q given as qk_parts.size() tensors (one per part, each
// [B, S, Nq, part] in the layout), k likewise ([B, Skv, Nkv, part]), v [B, Skv, Nkv, Dv];
// y [B, S, Nq, Dv]. T = double is the golden (dgemm), T = float the same-precision reference
// (sgemm, fp32 accumulation, nothing rounded but the output). Not the reference benchmark's
// native run, which rounds the scores and weights to the case dtype as PyTorch does on half
// tensors: its errors on bfloat16 inputs in [-10, 4] are so many (13,746 of 151,040 outputs
// of mha public case 10) that the gate's fallback accepted a causal mask off by one.
template <typename T>
void attention_dense(const AttentionGeometry& g, const std::vector<const T*>& q_parts,
                     const std::vector<const T*>& k_parts, const T* v, T* y);

// Sparse attention: query row (b, s1) of the heads of KV head n2 sees the distinct keys listed
// in indices[b, s1, n2, :] (a set: duplicates count once), less those beyond the causal
// limit. indices has the layout's axis order ([B, S1, N2, topK] or [B, N2, S1, topK]); an
// index outside [0, Skv) throws hb::Error naming its position. qk_parts must be one part.
template <typename T>
void attention_sparse(const AttentionGeometry& g, const T* q, const T* k, const T* v, const T* indices,
                      std::int64_t top_k, T* y, const std::string& context);

// The work of a fused (flash) attention kernel, the same for the whole family: per block of
// `rows` query rows that share their keys (G query heads x their positions, for one batch and
// KV head; `batch` such blocks) two contractions, scores = Q K^T (k = qk_dim) and y = P V
// (n = v_dim), over the allowed keys only (a causal or sparse kernel skips the rest): each row
// is given floor(allowed_scores / (batch * rows)) keys, so the MACs never exceed the allowed
// pairs'. Per allowed score the online softmax: running max (cmp), shifted score (add), exp,
// running sum (add); the scale is folded into q (a mul per q element) and 1/sum into y (a mul
// per y element). The contractions' fp32 results are the scores and partial sums a fused
// kernel hands from the matrix to the vector stage (on the Ascend 910B through global memory,
// via FixPipe); no cube_vector_bytes on top (attention.cpp says why). The caller states bytes,
// parallel items and the innermost dim. The cann-bench formula (docs/hap.md), without casts
// (the softmax reads the contractions' fp32 result): per allowed score the scale's mul and
// softmax's exp, sum add and div; per masked score the mask's select.
struct AttentionWork {
    DType dtype = DType::f16;
    double batch = 1;
    std::int64_t rows = 1, qk_dim = 1, v_dim = 1;
    double allowed_scores = 0;  // over the whole case
    double masked_scores = 0;   // scores the formula masks (causal), over the whole case
    double q_elements = 0, y_elements = 0;
};
void add_attention_work(WorkModel& w, const AttentionWork& a);

// ---- Case sizing (the cpu profile's attention cases) ----------------------------------------

// The range every input is drawn from: the case's range scaled down to a magnitude of at most
// 2, except in the type-boundary, special-value and zero cases, which keep it. Attention reads
// normalized activations; wider ranges make fp32 arithmetic, which every practical kernel
// uses, differ from the fp64 golden by more than the precision gate's absolute bounds on a
// random handful of outputs per case, so that a correct kernel fails at random (seen: query
// and key at [-200, 200] make the softmax an argmax whose near-ties fp32 scores resolve with
// a few percent of error on mla public case 5; values at [-10000, 10000] averaged over a few
// keys cancel to 1e-5 with fp32 errors of 1e-5, 3 small-value errors against none in the
// same-precision reference). Type boundaries keep their range on every input: the softmax is
// then an argmax and y a copy of one value.
ValueRange attention_input_range(const CaseDraw& d);

// Query length against key length: prefill S = Skv; decode S = 1; multi-token prediction
// S = 2 or 4 (< Skv); cross-attention S = Skv * ratio (ratio != 1; above 1 with a causal mask,
// the first S - Skv queries see no key and give 0).
enum class AttentionPattern { prefill, decode, multi_token, cross };

struct AttentionCaseShape {
    std::int64_t batch = 1, q_len = 1, kv_len = 1;
};

struct AttentionSizing {
    AttentionPattern pattern = AttentionPattern::prefill;
    std::int64_t tokens = 2;  // multi_token's S
    double ratio = 0.5;       // cross's S / Skv
    std::int64_t kv_lo = 16, kv_hi = 2048;  // Skv's range before the budget and the cap shrink it
    std::int64_t batch_hi = 256;
    double macs_cap = 3e7;
};

// Draws Skv log-uniformly in [kv_lo, kv_hi] (odd where the draw is not aligned), derives S
// from the pattern and B from the element budget (attention_budgeted_elements), then shrinks Skv (and
// S) until the case holds at most `macs_cap` multiply-adds and B = 1 fits the budget; B then
// grows past the cap where the shape would otherwise fall below the drawn regime.
// `elements` and `macs` give a candidate shape's input elements and multiply-adds.
template <typename ElementsFn, typename MacsFn>
AttentionCaseShape size_attention_case(CaseSampler& sampler, const AttentionSizing& sizing, ElementsFn elements,
                                       MacsFn macs);

// Counts the multiply-adds of a dense attention case: allowed pairs x (Dqk + Dv) per head.
double dense_attention_macs(const AttentionGeometry& g);

std::int64_t attention_q_len(const AttentionSizing& sizing, std::int64_t kv_len);

template <typename ElementsFn, typename MacsFn>
AttentionCaseShape size_attention_case(CaseSampler& sampler, const AttentionSizing& sizing, ElementsFn elements,
                                       MacsFn macs) {
    const double target = static_cast<double>(attention_budgeted_elements(sampler));
    Rng& rng = sampler.rng();
    AttentionCaseShape c;
    const double lo = std::log(static_cast<double>(sizing.kv_lo)), hi = std::log(static_cast<double>(sizing.kv_hi));
    c.kv_len = std::max<std::int64_t>(1, std::llround(std::exp(rng.uniform(lo, hi))));
    if (!sampler.draw().aligned && c.kv_len > 2) c.kv_len |= 1;  // odd lengths: remainders in every loop
    for (int round = 0; round < 60; ++round) {
        c.q_len = attention_q_len(sizing, c.kv_len);
        AttentionCaseShape one = c;
        one.batch = 1;
        const double per_batch = elements(one);
        c.batch = std::clamp<std::int64_t>(std::llround(target / per_batch), 1, sizing.batch_hi);
        const bool too_big = per_batch > 1.15 * target;
        const bool too_much_work = macs(c) > sizing.macs_cap;
        if ((!too_big && !too_much_work) || c.kv_len <= 2) break;
        const double shrink = too_big ? std::max(0.5, target / per_batch) : 0.85;
        c.kv_len = std::max<std::int64_t>(2, static_cast<std::int64_t>(static_cast<double>(c.kv_len) * shrink));
    }
    // The drawn regime before the cap: enough batches to reach its floor.
    AttentionCaseShape one = c;
    one.batch = 1;
    const double floor = static_cast<double>(regime_floor_elements(sampler));
    if (static_cast<double>(c.batch) * elements(one) < floor)
        c.batch = static_cast<std::int64_t>(std::ceil(floor / elements(one)));
    return c;
}

}  // namespace hb
