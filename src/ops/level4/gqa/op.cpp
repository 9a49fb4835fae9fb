// gqa(query [B, S, Nq, D], key [B, Skv, Nkv, D], value [B, Skv, Nkv, D], scaleValue = -1,
// is_causal = false) -> y [B, S, Nq, D] (operators-l3-l4.md): grouped-query attention, BSND,
// float16 or bfloat16 throughout. Nkv divides Nq; G = Nq / Nkv consecutive query heads share
// a KV head: query head h reads KV head floor(h / G). The formula, golden and work model are
// ops/bsnd_attention.hpp's, shared with mha (G = 1).
#include "ops/bsnd_attention.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// Ten plans, each taken twice over the twenty cases: causal prefill, decode, MTP (S = 2, 4),
// cross-attention with S < Skv and S > Skv (causal: its first S - Skv queries see nothing),
// the default scale from -1 and from 0, explicit scales; group sizes 1 (MHA), 2, 4, 8 and
// all heads (MQA), each with and without the causal mask.
const std::vector<BsndPlan>& plans() {
    static const std::vector<BsndPlan> p = {
        {AttentionPattern::prefill, 1, 1, true, -1, 4},       {AttentionPattern::decode, 1, 1, false, -1, 0},
        {AttentionPattern::multi_token, 2, 1, true, -1, 8},   {AttentionPattern::cross, 1, 4, false, -1, 2},
        {AttentionPattern::prefill, 1, 1, false, 0.08838, 1}, {AttentionPattern::cross, 1, 0.25, false, 0, 4},
        {AttentionPattern::cross, 1, 2, true, -1, 0},         {AttentionPattern::multi_token, 4, 1, true, 0.125, 1},
        {AttentionPattern::decode, 1, 1, false, 0, 8},        {AttentionPattern::prefill, 1, 1, true, 0.05, 2},
    };
    return p;
}

}  // namespace

class GqaOp final : public BsndAttentionOp<GqaOp, KvHeads::dividing> {
  public:
    std::string name() const override { return "gqa"; }
    std::string baseline_description() const override {
        return "PyTorch's math attention on oneDNN, one primitive per step: query and key copied into contiguous "
               "[B Nkv, G S, D] and [B Nkv, Skv, D] blocks (bfloat16 where oneDNN has a jit bf16 matmul, else fp32), a "
               "oneDNN matmul for the fp32 scores with the scale as an output scale, a oneDNN binary_add of the causal "
               "mask, oneDNN softmax_forward, an fp32 oneDNN matmul with value widened to fp32, y copied back and "
               "narrowed (the G query heads of a KV head form one block); inputs holding inf or NaN take a threaded fp32 loop (oneDNN's softmax drops NaN, and "
               "masked keys must take no part)";
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        sample_bsnd_attention_case(sampler, out, plans(), {4, 8, 8, 12, 16, 32}, KvHeads::dividing);
    }
};

HB_REGISTER_OPERATOR(GqaOp)

}  // namespace hb
