// gru(x, weight_ih[], weight_hh[], inputSize, hiddenSize, numLayers=1, bias=True,
// batchFirst=False, dropout=0.0, bidirectional=False, bias_ih[]?, bias_hh[]?, h0?) -> (y, hn)
// (operators-l3-l4.md): torch.nn.GRU in eval mode. Per layer, direction and step, with the
// 3H rows of each weight in PyTorch's order (r, z, n):
//   r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)    z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
//   n = tanh(W_in x + b_in + r (W_hn h + b_hn))   h' = (1 - z) n + z h
// (the reset gate scales the recurrent n term with its bias: the linear-before-reset form).
// The proto's formula lists z first; the rows are r, z, n as PyTorch lays them out.
// Shapes, the layer/direction lists, batch-first, bias forms, h0 and the golden: see
// ops/recurrence.hpp. Dropout is never applied; bias true without bias lists means zero
// biases; weights must have exactly their shapes (the reference golden crops larger ones).
#include "core/error.hpp"
#include "ops/recurrence.hpp"
#include "ops/register.hpp"

namespace hb {

class GruOp final : public OperatorWithCompute<GruOp> {
  public:
    std::string name() const override { return "gru"; }
    int level() const override { return 4; }
    std::string baseline_description() const override {
        return "oneDNN lbr_gru_forward (linear-before-reset GRU, PyTorch's semantics), one primitive per layer and "
               "direction as PyTorch's oneDNN path calls it, the reverse direction as right2left, writing its half of y "
               "in place; per call the weights are shuffled from PyTorch's (r, z, n) rows to oneDNN's (z, r, n) gates "
               "and the four-gate bias [b_z, b_r, b_in, b_hn] is built, as PyTorch does; float16 through fp32 copies "
               "(oneDNN 2.6 has no f16 RNN), bfloat16 natively where oneDNN has a bf16 RNN (AVX-512) and through fp32 "
               "otherwise";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        return recurrence_outputs(recurrence_config(p, RecurrentCell::gru));
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        run_recurrence<T>(p, recurrence_config(p, RecurrentCell::gru), in, out);
    }

    WorkModel work(const Problem& p) const override { return recurrence_work(p, recurrence_config(p, RecurrentCell::gru)); }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        sample_recurrence_case(sampler, out, RecurrentCell::gru);
    }

    // float16 keeps its finite limit; float32 and bfloat16 use +-1e30, where the products of
    // x (or h0) with the weights and their sums stay finite in fp32 (every gate saturates);
    // +-3e38 would overflow the sums and test only that.
    // Aligned cases need every input's last dim at 512 bytes: H >= 256 for half dtypes
    // (weight_hh's columns), whose weights alone exceed the small regime; every case is
    // drawn non-aligned (at least half must be, methodology section 2).
    bool can_align() const override { return false; }

    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e30, 1e30};
    }
};

HB_REGISTER_OPERATOR(GruOp)

}  // namespace hb
