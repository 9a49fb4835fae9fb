// mha and gqa: scaled dot-product attention over query [B, S, Nq, D] and key, value
// [B, Skv, Nkv, D], BSND, float16 or bfloat16 throughout (operators-l3-l4.md). They differ only
// in the KV heads they take (mha: Nkv = Nq; gqa: Nkv divides Nq, and the G = Nq / Nkv
// consecutive query heads h share KV head floor(h / G)) and in the cases they draw; this is
// everything else, so that each operator's file holds only what is its own.
//   scale = scaleValue if > 0, else 1 / sqrt(D);  s[b, h, i, j] = (q[b, i, h, :] . k[b, j, h / G, :]) * scale
//   causal (bottom-right): query i sees keys j <= i + (Skv - S);  w = softmax over the allowed j
//   y[b, i, h, :] = sum over the allowed j of w[b, h, i, j] v[b, j, h / G, :]
// A masked key takes no part (its value is never multiplied); a query that sees no key
// (causal with S > Skv) gives 0. The golden is ops/attention.hpp over hb::dgemm, the
// same-precision reference the same over sgemm (fp32 accumulation).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/attention.hpp"
#include "ops/operator.hpp"

namespace hb {

enum class KvHeads { equal, dividing };

// Shapes, dtypes and attributes checked, with errors that name the input.
AttentionGeometry bsnd_attention_geometry(const Problem& p, KvHeads rule);

// One public case's problem: its query/key pattern, mask, scale and group size.
struct BsndPlan {
    AttentionPattern pattern;
    std::int64_t tokens;  // multi_token
    double ratio;         // cross
    bool causal;
    double scale;            // scaleValue as given (<= 0: the default 1/sqrt(D))
    std::int64_t group = 1;  // KvHeads::dividing: G = Nq / Nkv; 0: every query head shares one KV head (MQA)
};

// Draws one case: the next plan of `plans`, the head dim, Nq from `head_counts` (under
// KvHeads::dividing only those the plan's group divides), the sizes, then the input range.
void sample_bsnd_attention_case(CaseSampler& sampler, CaseSpec& out, const std::vector<BsndPlan>& plans,
                                const std::vector<std::int64_t>& head_counts, KvHeads rule);

std::vector<ArgSpec> bsnd_attention_outputs(const Problem& p, const AttentionGeometry& g);
WorkModel bsnd_attention_work(const Problem& p, const AttentionGeometry& g);

// What mha and gqa share as an operator; Derived gives name(), baseline_description() and
// sample_case().
template <typename Derived, KvHeads Rule>
class BsndAttentionOp : public OperatorWithCompute<Derived> {
  public:
    int level() const override { return 4; }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        return bsnd_attention_outputs(p, bsnd_attention_geometry(p, Rule));
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const AttentionGeometry g = bsnd_attention_geometry(p, Rule);
        attention_dense<T>(g, {in[0].one().v.data()}, {in[1].one().v.data()}, in[2].one().v.data(),
                           out[0].one().v.data());
    }

    WorkModel work(const Problem& p) const override { return bsnd_attention_work(p, bsnd_attention_geometry(p, Rule)); }

    // float16: its largest values (products 4.3e9 and their sums stay finite in fp32, and y is
    // a weighted mean of values); bfloat16: +-1e16, whose products' sums stay finite in the
    // fp32 every practical kernel accumulates scores in (+-3e38 would overflow them).
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e16, 1e16};
    }
};

}  // namespace hb
