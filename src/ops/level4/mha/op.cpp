// mha(query [B, S, N, D], key [B, Skv, N, D], value [B, Skv, N, D], scaleValue = -1,
// is_causal = false) -> y [B, S, N, D] (operators-l3-l4.md): multi-head scaled dot-product
// attention, BSND, float16 or bfloat16 throughout; the formula, golden and work model are
// ops/bsnd_attention.hpp's, shared with gqa (which takes fewer KV heads).
#include "ops/bsnd_attention.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// Ten plans, each taken twice over the twenty cases: causal prefill, decode, MTP (S = 2, 4),
// cross-attention with S < Skv and S > Skv (non-causal, and causal: its first S - Skv
// queries see nothing), the default scale from -1 and from 0, explicit scales.
const std::vector<BsndPlan>& plans() {
    static const std::vector<BsndPlan> p = {
        {AttentionPattern::prefill, 1, 1, true, -1},     {AttentionPattern::decode, 1, 1, false, -1},
        {AttentionPattern::multi_token, 2, 1, true, -1}, {AttentionPattern::cross, 1, 4, false, -1},
        {AttentionPattern::prefill, 1, 1, false, 0.08838}, {AttentionPattern::cross, 1, 0.25, false, 0},
        {AttentionPattern::cross, 1, 2, true, -1},       {AttentionPattern::multi_token, 4, 1, true, 0.125},
        {AttentionPattern::decode, 1, 1, false, 0},      {AttentionPattern::prefill, 1, 1, true, 0.05},
    };
    return p;
}

}  // namespace

class MhaOp final : public BsndAttentionOp<MhaOp, KvHeads::equal> {
  public:
    std::string name() const override { return "mha"; }
    std::string baseline_description() const override {
        return "PyTorch's math attention on oneDNN, one primitive per step: query and key copied into contiguous "
               "[B Nkv, G S, D] and [B Nkv, Skv, D] blocks (bfloat16 where oneDNN has a jit bf16 matmul, else fp32), a "
               "oneDNN matmul for the fp32 scores with the scale as an output scale, a oneDNN binary_add of the causal "
               "mask, oneDNN softmax_forward, an fp32 oneDNN matmul with value widened to fp32, y copied back and "
               "narrowed; inputs holding inf or NaN take a threaded fp32 loop (oneDNN's softmax drops NaN, and "
               "masked keys must take no part)";
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        sample_bsnd_attention_case(sampler, out, plans(), {1, 2, 4, 8, 8, 12, 16, 32}, KvHeads::equal);
    }
};

HB_REGISTER_OPERATOR(MhaOp)

}  // namespace hb
