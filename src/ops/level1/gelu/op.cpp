// gelu(x, approximate="none"|"tanh"): torch.nn.functional.gelu.
//   none: y = 0.5 * x * (1 + erf(x / sqrt(2)))
//   tanh: y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
// At -inf the golden returns the limit, -0 (the formula as written gives -inf * 0 = NaN).
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "core/error.hpp"
#include "ops/elementwise.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

class GeluOp final : public OperatorWithCompute<GeluOp> {
  public:
    std::string name() const override { return "gelu"; }
    int level() const override { return 1; }
    std::string baseline_description() const override {
        return "oneDNN eltwise_gelu_erf / eltwise_gelu_tanh (jit f32; fp16 and bf16 are unimplemented on "
               "AVX2, so they are converted to fp32 around the primitive, as a framework does)";
    }
    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        approximate_is_tanh(p);  // rejects unknown modes before anything runs
        return same_shape_output(p, "y");
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one().v;
        auto& y = out[0].one().v;
        if (approximate_is_tanh(p)) {
            const T beta = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
            const T kappa = static_cast<T>(0.044715);
#pragma omp parallel for schedule(static)
            for (std::size_t i = 0; i < x.size(); ++i) {
                const T inner = beta * (x[i] + kappa * x[i] * x[i] * x[i]);
                y[i] = T(0.5) * x[i] * (T(1) + std::tanh(inner));
                if (x[i] == -std::numeric_limits<T>::infinity()) y[i] = -T(0);  // the limit, not inf*0
            }
        } else {
            const T inv_sqrt2 = static_cast<T>(1.0 / std::numbers::sqrt2);
#pragma omp parallel for schedule(static)
            for (std::size_t i = 0; i < x.size(); ++i) {
                // The golden uses erfc, exact in relative terms far into the negative tail where
                // 1 + erf(x/sqrt2) cancels (x < -6); the same-precision reference keeps
                // torch's fp32 formula.
                if constexpr (std::is_same_v<T, double>)
                    y[i] = x[i] * T(0.5) * std::erfc(-x[i] * inv_sqrt2);
                else
                    y[i] = x[i] * T(0.5) * (T(1) + std::erf(x[i] * inv_sqrt2));
                // gelu is continuous at -inf with limit -0; the formula's -inf * 0 = NaN is an
                // artifact of evaluating it there (hapbench judges the function, see
                // docs/methodology.md "Limits at infinity").
                if (x[i] == -std::numeric_limits<T>::infinity()) y[i] = -T(0);
            }
        }
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& x = p.inputs.at(0).tensors.at(0);
        const double n = static_cast<double>(x.numel());
        if (approximate_is_tanh(p)) {
            // The cheapest form: 0.5*(1 + tanh(z)) = 1/(1 + e^(-2z)), so y = x / (1 + e^(-2z)) with
            // z = x*(c1 + c2*x^2): x*x, fma, x*q, exp, 1+e, divide.
            WorkModel w = elementwise_work(p, {{OpClass::mul, 2}, {OpClass::fma, 1}, {OpClass::exp, 1},
                                               {OpClass::add, 1}, {OpClass::div, 1}});
            // cann-bench (docs/hap.md): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))):
            // 6 mul (x^3 is two), 2 add, tanh.
            add_formula(w, x.dtype, FormulaMath::elementwise, n, {{OpClass::mul, 6}, {OpClass::add, 2}, {OpClass::tanh, 1}});
            return w;
        }
        // erf has no cheaper equivalent: x/sqrt2, erf, h = 0.5x, y = h*erf + h.
        WorkModel w = elementwise_work(p, {{OpClass::mul, 2}, {OpClass::erf, 1}, {OpClass::fma, 1}});
        // cann-bench: 0.5 * x * (1 + erf(x / sqrt(2))): 3 mul (the division by a constant is
        // one), add, erf.
        add_formula(w, x.dtype, FormulaMath::elementwise, n, {{OpClass::mul, 3}, {OpClass::add, 1}, {OpClass::erf, 1}});
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        sample_single_tensor(sampler, out);
        const std::string mode = sampler.pick(std::vector<std::string>{"none", "tanh"});
        out.attrs = {{"approximate", AttrValue::of_string(mode)}};
    }

    // The dtype's full finite range: erf and tanh saturate there, and x^3 overflows (fp32 from
    // |x| ~ 7e12, fp16 in fp16 math from |x| ~ 40), which a rational tanh/erf approximation
    // has to survive without producing inf/inf = NaN.
    ValueRange boundary_range(DType dtype) const override { return Operator::boundary_range(dtype); }

  private:
    static bool approximate_is_tanh(const Problem& p) {
        const std::string mode = p.attr_string("approximate");
        if (mode != "none" && mode != "tanh")
            throw Error(p.context() + "approximate is \"" + mode + "\", expected \"none\" or \"tanh\"");
        return mode == "tanh";
    }
};

HB_REGISTER_OPERATOR(GeluOp)

}  // namespace hb
