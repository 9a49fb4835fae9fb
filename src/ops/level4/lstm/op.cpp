// lstm(x, weight_ih[], weight_hh[], inputSize, hiddenSize, numLayers=1, bias=True,
// batchFirst=False, dropout=0.0, bidirectional=False, projSize=0, bias_ih[]?, bias_hh[]?,
// weight_hr[]?, h0?, c0?) -> (y, hn, cn) (operators-l3-l4.md): torch.nn.LSTM in eval mode. Per
// layer, direction and step, with the 4H rows of each weight in PyTorch's order (i, f, g, o):
//   i = sigmoid(.), f = sigmoid(.), g = tanh(.), o = sigmoid(.),  . = W_i* x + b_i* + W_h* h + b_h*
//   c' = f c + i g     h' = o tanh(c'),  then h' = W_hr h' when projSize P > 0
// With a projection the state h (hn, W_hh's columns, the next layer's input and y's width per
// direction) has P elements; c (cn) always H. The reference golden is fp32-pinned; hapbench's
// is fp64 and its same-precision reference fp32. Shapes, lists, layouts, states and the
// golden: ops/recurrence.hpp. bias true without bias lists means zero biases (PyTorch would
// keep its random initial biases); dropout is never applied.
#include "core/error.hpp"
#include "ops/recurrence.hpp"
#include "ops/register.hpp"

namespace hb {

class LstmOp final : public OperatorWithCompute<LstmOp> {
  public:
    std::string name() const override { return "lstm"; }
    int level() const override { return 4; }
    std::string baseline_description() const override {
        return "oneDNN lstm_forward (with its projection where projSize > 0), one primitive per layer and direction as "
               "PyTorch's oneDNN path calls it, the reverse direction as right2left, writing its half of y in place; "
               "per call the weights are reordered from PyTorch's [4H, in] rows (the gate order i, f, g, o is "
               "oneDNN's) and b_ih + b_hh summed; float16 through fp32 copies (oneDNN 2.6 has no f16 RNN), bfloat16 "
               "natively where oneDNN has a bf16 RNN (AVX-512) and through fp32 otherwise and with a projection "
               "(oneDNN 2.6's bf16 projection gives wrong outputs with AVX512-BF16/AMX and crashes at AVX512_CORE)";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        return recurrence_outputs(recurrence_config(p, RecurrentCell::lstm));
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        run_recurrence<T>(p, recurrence_config(p, RecurrentCell::lstm), in, out);
    }

    WorkModel work(const Problem& p) const override { return recurrence_work(p, recurrence_config(p, RecurrentCell::lstm)); }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        sample_recurrence_case(sampler, out, RecurrentCell::lstm);
    }

    // As gru: float16 its finite limit, float32 and bfloat16 +-1e30 (products and sums finite
    // in fp32; c grows by at most 1 a step, so tanh(c) saturates but never overflows).
    // Aligned cases need every input's last dim at 512 bytes: H >= 256 for half dtypes
    // (weight_hh's columns), whose weights alone exceed the small regime; every case is
    // drawn non-aligned (at least half must be, methodology section 2).
    bool can_align() const override { return false; }

    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e30, 1e30};
    }
};

HB_REGISTER_OPERATOR(LstmOp)

}  // namespace hb
