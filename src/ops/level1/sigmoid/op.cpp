// sigmoid(x): y = 1 / (1 + e^-x).
#include <algorithm>
#include <cmath>

#include "ops/elementwise.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"
#include "ops/vector_math.hpp"

namespace hb {

class SigmoidOp final : public OperatorWithCompute<SigmoidOp> {
  public:
    std::string name() const override { return "sigmoid"; }
    int level() const override { return 1; }
    std::string baseline_description() const override {
        return "oneDNN eltwise_logistic (jit f32; fp16 and bf16 are unimplemented on AVX2, so they are "
               "converted to fp32 around the primitive, as a framework does)";
    }
    std::vector<ArgSpec> infer_outputs(const Problem& p) const override { return same_shape_output(p, "y"); }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one().v;
        auto& y = out[0].one().v;
        // y = 1 / (1 + e^-x), the exp of a block at a time (ops/vector_math.hpp).
#pragma omp parallel for schedule(static)
        for (std::size_t begin = 0; begin < x.size(); begin += kVectorMathBlock) {
            const std::size_t end = std::min(x.size(), begin + kVectorMathBlock);
            for (std::size_t i = begin; i < end; ++i) y[i] = -x[i];
            exp_in_place(y.data() + begin, end - begin);
            for (std::size_t i = begin; i < end; ++i) y[i] = T(1) / (T(1) + y[i]);
        }
    }
    // 2: the golden's exp from libmvec (ops/vector_math.hpp), within 4 ulp of libm's.
    int golden_version() const override { return 2; }

    WorkModel work(const Problem& p) const override {
        WorkModel w = elementwise_work(p, {{OpClass::exp, 1}, {OpClass::add, 1}, {OpClass::div, 1}});
        // cann-bench (docs/hap.md): 1 / (1 + e^-x): negate and add (2 add), exp, div.
        const TensorSpec& x = p.inputs.at(0).tensors.at(0);
        add_formula(w, x.dtype, FormulaMath::elementwise, static_cast<double>(x.numel()),
                    {{OpClass::add, 2}, {OpClass::exp, 1}, {OpClass::div, 1}});
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override { sample_single_tensor(sampler, out); }

    // +-90 for every dtype: e^-x overflows fp32 (the compute type of every dtype) below
    // x = -88.72, where 1/(1+e^-x) must give 0 and e^x/(1+e^x) gives inf/inf = NaN; the
    // outputs also pass through fp32 subnormals (x < -87.3) and the fp16 flush region
    // (x < -16.6). The full fp16 range would sample that transition in 1 of 2000 elements.
    ValueRange boundary_range(DType) const override { return {-90.0, 90.0}; }
};

HB_REGISTER_OPERATOR(SigmoidOp)

}  // namespace hb
