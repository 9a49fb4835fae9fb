// apply_adam_w(var, grad, m, v, lr, beta1, beta2, weight_decay, epsilon=1e-8, step=1,
// maximize=false): one AdamW step as operators.md states it:
//   m' = b1*m + (1-b1)*g;  v' = b2*v + (1-b2)*g^2;  mh = m'/(1-b1^step);  vh = v'/(1-b2^step)
//   u = mh/(sqrt(vh)+eps) (+ var*weight_decay when weight_decay != 0);  y = var -+ lr*u
// with + when maximize. Only y is an output (m' and v' are not returned), as in the
// reference interface. maximize flips the sign of the whole update, decay included (the
// operators.md rule), not the gradient as torch.optim.AdamW(maximize=True) does.
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

// The attribute sets the cases cycle through: default-style Adam steps, no decay and strong
// decay, beta1 = 0 (no momentum), short-memory betas, epsilon 0 and large, later steps
// (bias corrections near 1) and maximize with and without decay.
struct AdamAttrs {
    double lr, beta1, beta2, weight_decay, epsilon;
    std::int64_t step;
    bool maximize;
};
const std::vector<AdamAttrs> adam_attr_sets = {
    {1e-3, 0.9, 0.999, 0.0, 1e-8, 1, false},   {1e-2, 0.9, 0.999, 0.01, 1e-8, 1, false},
    {1e-4, 0.9, 0.999, 0.1, 1e-8, 10, false},  {0.1, 0.5, 0.9, 0.5, 1e-8, 3, false},
    {1e-4, 0.99, 0.99, 0.0, 1e-6, 100, false}, {1e-2, 0.0, 0.5, 0.5, 1e-8, 1, false},
    {1e-3, 0.9, 0.999, 0.01, 1e-8, 1, true},   {1e-3, 0.9, 0.999, 0.0, 0.0, 2, false},
    {1e-3, 0.9, 0.999, 0.0, 1e-4, 1000, true}, {0.1, 0.9, 0.999, 0.1, 1e-8, 100000, false},
};

}  // namespace

class ApplyAdamWOp final : public OperatorWithCompute<ApplyAdamWOp> {
  public:
    std::string name() const override { return "apply_adam_w"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "threaded C++ (OpenMP, fp32 math, one pass over the four inputs): oneDNN has no optimizer "
               "primitive, and a chain of its eltwise/binary primitives would take about ten passes over memory";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const TensorSpec& var = p.input("var").tensors.at(0);
        for (const char* input : {"grad", "m", "v"}) {
            const TensorSpec& t = p.input(input).tensors.at(0);
            if (t.shape != var.shape || t.dtype != var.dtype)
                throw Error(p.context() + input + " is " + std::string(dtype_name(t.dtype)) + " " +
                            shape_to_string(t.shape) + " but var is " + std::string(dtype_name(var.dtype)) + " " +
                            shape_to_string(var.shape) + "; all four inputs must have one shape and dtype");
        }
        const double beta1 = p.attr_float("beta1"), beta2 = p.attr_float("beta2");
        if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
            throw Error(p.context() + "beta1 = " + std::to_string(beta1) + " and beta2 = " + std::to_string(beta2) +
                        " must lie in [0, 1) (the bias corrections divide by 1 - beta^step)");
        if (p.attr_int("step") < 1)
            throw Error(p.context() + "step = " + std::to_string(p.attr_int("step")) + " must be at least 1");
        if (!(p.attr_float("lr") >= 0) || !(p.attr_float("epsilon") >= 0))
            throw Error(p.context() + "lr and epsilon must be non-negative (lr " + std::to_string(p.attr_float("lr")) +
                        ", epsilon " + std::to_string(p.attr_float("epsilon")) + ")");
        ArgSpec out;
        out.name = "y";
        out.tensors.push_back(var);
        return {out};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const T lr = static_cast<T>(p.attr_float("lr")), b1 = static_cast<T>(p.attr_float("beta1")),
                b2 = static_cast<T>(p.attr_float("beta2")), wd = static_cast<T>(p.attr_float("weight_decay")),
                eps = static_cast<T>(p.attr_float("epsilon"));
        const T step = static_cast<T>(p.attr_int("step"));
        const bool maximize = p.attr_bool("maximize");
        const T correction1 = T(1) - std::pow(b1, step), correction2 = T(1) - std::pow(b2, step);
        const auto& var = in[0].one().v;
        const auto& grad = in[1].one().v;
        const auto& m = in[2].one().v;
        const auto& v = in[3].one().v;
        auto& y = out[0].one().v;
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < var.size(); ++i) {
            const T g = grad[i];
            const T m_new = b1 * m[i] + (T(1) - b1) * g;
            const T v_new = b2 * v[i] + (T(1) - b2) * g * g;
            T u = (m_new / correction1) / (std::sqrt(v_new / correction2) + eps);
            if (wd != T(0)) u += var[i] * wd;
            y[i] = maximize ? var[i] + lr * u : var[i] - lr * u;
        }
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& var = p.input("var").tensors.at(0);
        const double n = static_cast<double>(var.numel());
        WorkModel w;
        w.bytes_read = 4.0 * static_cast<double>(var.bytes());  // var, grad, m, v
        w.bytes_written = static_cast<double>(var.bytes());
        // Per element, with the bias corrections folded into two per-case constants:
        // m': mul + fma; v': g*g, mul, fma; mh, vh: two muls; sqrt, + eps, one divide;
        // y: one fma, and one more for the decay term when weight_decay != 0.
        // fp16/bf16 math runs in fp32.
        const DType math = DType::f32;
        w.add_vector(OpClass::mul, math, 5 * n);
        w.add_vector(OpClass::fma, math, (p.attr_float("weight_decay") != 0 ? 4 : 3) * n);
        w.add_vector(OpClass::sqrt, math, n);
        w.add_vector(OpClass::add, math, n);
        w.add_vector(OpClass::div, math, n);
        if (var.dtype != DType::f32) w.add_vector(OpClass::cast, math, 5 * n);  // 4 loads, 1 store
        // cann-bench (docs/hap.md), the formula as written per element: m' (2 mul, add), v' (3
        // mul with g^2, add), the two bias corrections (a multiply each: constant divisors), then
        // var - lr * (mh / (sqrt(vh) + eps) + wd * var): sqrt, add, div, 2 mul, 2 add.
        add_formula(w, var.dtype, FormulaMath::elementwise, n,
                    {{OpClass::mul, 9}, {OpClass::add, 5}, {OpClass::sqrt, 1}, {OpClass::div, 1}});
        w.parallel_items = n;
        w.innermost = var.shape.empty() ? 1 : var.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const Shape shape = sampler.shape(d.target_elements / 4, sampler.pick_rank(1, 5), d.dtype, d.aligned);
        for (auto& in : out.inputs) in.shapes = {shape};
        // Moments as the reference draws them: m at a tenth of var's and grad's range, v in
        // [0, a tenth of its top]; special groups (inf, NaN, zero) keep their range for all.
        const ValueRange r = d.range;
        if (std::isfinite(r.lo) && std::isfinite(r.hi) && r.lo != r.hi) {
            out.inputs.at(2).range = ValueRange{r.lo / 10, r.hi / 10};
            out.inputs.at(3).range = ValueRange{0, std::max(std::fabs(r.lo), std::fabs(r.hi)) / 10};
        }
        const AdamAttrs& a = sampler.cycle(adam_attr_sets);
        out.attrs = {{"lr", AttrValue::of_float(a.lr)},           {"beta1", AttrValue::of_float(a.beta1)},
                     {"beta2", AttrValue::of_float(a.beta2)},     {"weight_decay", AttrValue::of_float(a.weight_decay)},
                     {"epsilon", AttrValue::of_float(a.epsilon)}, {"step", AttrValue::of_int(a.step)},
                     {"maximize", AttrValue::of_bool(a.maximize)}};
    }

    // fp32/bf16: the largest |g| whose square stays finite in fp32 (1.8e19), so the boundary
    // tests the moments at the edge of the range rather than g^2 = inf everywhere; fp16 keeps
    // its own limit (the math runs in fp32).
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1.8e19, 1.8e19};
    }

    // v is a second moment: non-negative (a generated range may reach below 0, e.g. +-inf).
    void fix_inputs(const Problem&, std::vector<Arg>& inputs, Rng&) const override {
        Tensor& v = inputs.at(3).tensors.at(0);
        const auto n = static_cast<std::size_t>(v.numel());
        for (std::size_t i = 0; i < n; ++i) {
            const double value = v.get(i);
            if (value < 0) v.set(i, -value);
        }
    }
};

HB_REGISTER_OPERATOR(ApplyAdamWOp)

}  // namespace hb
