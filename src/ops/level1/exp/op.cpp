// exp(x, base=-1, scale=1, shift=0): base <= 0: y = e^(scale*x + shift);
// base > 0: y = e^((scale*x + shift) * ln(base)).
#include <algorithm>
#include <cmath>

#include "ops/elementwise.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"
#include "ops/vector_math.hpp"

namespace hb {

class ExpOp final : public OperatorWithCompute<ExpOp> {
  public:
    std::string name() const override { return "exp"; }
    int level() const override { return 1; }
    std::string baseline_description() const override {
        return "oneDNN eltwise_exp (default attributes) or binary_add with a src0 scale and an eltwise_exp post-op "
               "(jit fp32; float16/bfloat16 converted to fp32 on CPUs without native half support)";
    }
    std::vector<ArgSpec> infer_outputs(const Problem& p) const override { return same_shape_output(p, "y"); }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const T base = static_cast<T>(p.attr_float("base"));
        const T scale = static_cast<T>(p.attr_float("scale"));
        const T shift = static_cast<T>(p.attr_float("shift"));
        const T log_base = base > T(0) ? std::log(base) : T(1);
        const auto& x = in[0].one().v;
        auto& y = out[0].one().v;
        // The exp of a block at a time (ops/vector_math.hpp).
#pragma omp parallel for schedule(static)
        for (std::size_t begin = 0; begin < x.size(); begin += kVectorMathBlock) {
            const std::size_t end = std::min(x.size(), begin + kVectorMathBlock);
            for (std::size_t i = begin; i < end; ++i) {
                const T arg = scale * x[i] + shift;
                y[i] = base > T(0) ? arg * log_base : arg;
            }
            exp_in_place(y.data() + begin, end - begin);
        }
    }
    // 2: the golden's exp from libmvec (ops/vector_math.hpp), within 4 ulp of libm's.
    int golden_version() const override { return 2; }

    WorkModel work(const Problem& p) const override {
        const double base = p.attr_float("base"), scale = p.attr_float("scale"), shift = p.attr_float("shift");
        const DType t = p.inputs.at(0).tensors.at(0).dtype;
        // cann-bench (docs/hap.md): e^(scale * x + shift), times ln(base) inside when base > 0:
        // mul, add (and mul), exp per element, attributes equal to 1 or 0 counted as written.
        const double n = static_cast<double>(p.inputs.at(0).tensors.at(0).numel());
        auto with_formula = [&](WorkModel w) {
            add_formula(w, t, FormulaMath::elementwise, n,
                        {{OpClass::mul, base > 0 ? 2.0 : 1.0}, {OpClass::add, 1}, {OpClass::exp, 1}});
            return w;
        };
        if (base <= 0 && scale == 1 && shift == 0) return with_formula(elementwise_work(p, {{OpClass::exp, 1}}));
        // An affine argument (scale*x + shift) * ln(base) folds into one fma with precomputed
        // constants. In half precision the argument would be rounded to 2^-8 relative
        // before exp amplifies it (|arg| up to ~11 gives 0.4% error, beyond the fp16 gate),
        // so a correct kernel computes it, and the exp, in fp32: one cast in, one out.
        const DType compute = (t == DType::f16 || t == DType::bf16) ? DType::f32 : t;
        return with_formula(elementwise_work_in(p, {{OpClass::fma, 1}, {OpClass::exp, 1}}, compute));
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        sample_single_tensor(sampler, out);
        const double base = sampler.pick(std::vector<double>{-1.0, -1.0, 2.0, 10.0, 0.5});
        const double scale = sampler.pick(std::vector<double>{1.0, 0.5, 1.5, 2.0, -1.0});
        const double shift = sampler.pick(std::vector<double>{0.0, 0.0, 1.0, -0.5});
        out.attrs = {{"base", AttrValue::of_float(base)}, {"scale", AttrValue::of_float(scale)},
                     {"shift", AttrValue::of_float(shift)}};
    }

    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-11, 11} : ValueRange{-88, 88};
    }
};

HB_REGISTER_OPERATOR(ExpOp)

}  // namespace hb
