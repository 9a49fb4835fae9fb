// mish(x): y = x * tanh(softplus(x)), softplus(x) = log(1 + e^x).
// At -inf the golden returns the limit, -0 (the formula as written gives -inf * tanh(0) = NaN).
#include <cmath>
#include <limits>

#include "ops/elementwise.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

class MishOp final : public OperatorWithCompute<MishOp> {
  public:
    std::string name() const override { return "mish"; }
    int level() const override { return 1; }
    std::string baseline_description() const override {
        return "oneDNN eltwise_mish (jit f32; fp16 and bf16 are unimplemented on AVX2, so they are "
               "converted to fp32 around the primitive, as a framework does)";
    }
    std::vector<ArgSpec> infer_outputs(const Problem& p) const override { return same_shape_output(p, "y"); }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one().v;
        auto& y = out[0].one().v;
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < x.size(); ++i) {
            // torch's softplus threshold: above 20, log1p(e^x) equals x to working precision
            // and e^x would overflow fp32 past 88.7.
            const T softplus = x[i] > T(20) ? x[i] : std::log1p(std::exp(x[i]));
            y[i] = x[i] * std::tanh(softplus);
            // The limit at -inf is -0; the formula's -inf * tanh(0) = NaN is an artifact
            // (docs/methodology.md "Limits at infinity").
            if (x[i] == -std::numeric_limits<T>::infinity()) y[i] = -T(0);
        }
    }

    WorkModel work(const Problem& p) const override {
        // The cheapest form: tanh(log(1+e)) = n/(n+2) with n = e*(e+2), e = e^x; y = x*n/(n+2),
        // plus the compare and select that return x where e*(e+2) would overflow.
        WorkModel w = elementwise_work(p, {{OpClass::exp, 1}, {OpClass::add, 2}, {OpClass::mul, 2},
                                           {OpClass::div, 1}, {OpClass::cmp, 1}, {OpClass::select, 1}});
        // cann-bench (docs/hap.md): x * tanh(ln(1 + e^x)): mul, tanh, log, add, exp.
        const TensorSpec& x = p.inputs.at(0).tensors.at(0);
        add_formula(w, x.dtype, FormulaMath::elementwise, static_cast<double>(x.numel()),
                    {{OpClass::mul, 1}, {OpClass::tanh, 1}, {OpClass::log, 1}, {OpClass::add, 1}, {OpClass::exp, 1}});
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override { sample_single_tensor(sampler, out); }

    // +-90 for every dtype: e^x overflows fp32 (the compute type of every dtype) above 88.72
    // and e^2x already above 44, where the rational form n/(n+2) gives inf/inf = NaN unless
    // guarded; large negative x drives the output through fp32 and fp16 underflow. The full
    // fp16 or fp32 range would put nearly every element on the saturated y = x or y = 0 sides.
    ValueRange boundary_range(DType) const override { return {-90.0, 90.0}; }
};

HB_REGISTER_OPERATOR(MishOp)

}  // namespace hb
