// foreach_addcdiv_scalar(x1[], x2[], x3[], scalar): per list member i,
// y_i = x1_i + scalar * x2_i / x3_i (torch.addcdiv per member; y_i has x1_i's shape).
#include "core/error.hpp"
#include "ops/foreach_lists.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

class ForeachAddcdivScalarOp final : public OperatorWithCompute<ForeachAddcdivScalarOp> {
  public:
    std::string name() const override { return "foreach_addcdiv_scalar"; }
    int level() const override { return 1; }
    std::string baseline_description() const override {
        return "float32: oneDNN binary_div (x2 / x3) with post-ops eltwise_linear (times scalar) and "
               "binary_add (x1), one primitive per list member; float16/bfloat16: oneDNN 2.6 has no "
               "f16/bf16 binary on AVX2, so a fused OpenMP loop converts to fp32, computes and rounds back";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x1 = p.input("x1");
        if (x1.tensors.empty()) throw Error(name() + ": the input lists are empty; each needs at least one tensor");
        check_matching_list(name(), x1, p.input("x2"));
        check_matching_list(name(), x1, p.input("x3"));
        ArgSpec y;
        y.name = "y";
        y.is_list = true;
        y.tensors = x1.tensors;
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const T scalar = static_cast<T>(p.attr_float("scalar"));
        for (std::size_t m = 0; m < out[0].tensors.size(); ++m) {
            const auto& x1 = in[0].tensors[m].v;
            const auto& x2 = in[1].tensors[m].v;
            const auto& x3 = in[2].tensors[m].v;
            auto& y = out[0].tensors[m].v;
            // torch's CPU kernel evaluates self + (value * tensor1) / tensor2 in this order.
#pragma omp parallel for schedule(static)
            for (std::size_t i = 0; i < y.size(); ++i) y[i] = x1[i] + scalar * x2[i] / x3[i];
        }
    }

    WorkModel work(const Problem& p) const override {
        const auto& x1 = p.input("x1");
        const double n = list_elements(x1);
        WorkModel w;
        w.bytes_read = list_bytes(x1) + list_bytes(p.input("x2")) + list_bytes(p.input("x3"));
        w.bytes_written = list_bytes(p.outputs.at(0));
        const DType t = x1.tensors.at(0).dtype;
        w.add_vector(OpClass::div, t, n);  // x2 / x3
        w.add_vector(OpClass::fma, t, n);  // x1 + scalar * quotient
        w.add_vector_io(t, 3 * n);         // x1, x2, x3 loaded
        w.add_vector_io(t, n);             // the result stored
        // cann-bench (docs/hap.md): x1 + scalar * x2 / x3 = mul, div, add per element.
        add_formula(w, t, FormulaMath::elementwise, n, {{OpClass::mul, 1}, {OpClass::div, 1}, {OpClass::add, 1}});
        w.parallel_items = n;
        w.innermost = min_innermost(x1);
        return w;
    }

    // A sixteenth of the dtype's range: with |scalar| <= 3 and divisors >= 0.25 neither
    // scalar * x2, the quotient nor the sum can overflow, so the case tests large magnitudes
    // rather than which evaluation order overflows first (torch's (scalar*x2)/x3 overflows
    // fp32 where the fp64 golden stays finite).
    ValueRange boundary_range(DType dtype) const override {
        const double m = dtype_max(dtype) / 16;
        return {-m, m};
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        // Three lists of equal shapes share the element budget.
        const auto shapes = sample_list_shapes(sampler, sampler.draw().target_elements / 3);
        for (auto& input : out.inputs) input.shapes = shapes;
        // x3 is a divisor: away from zero, so the case tests the arithmetic rather than
        // division by ~0; the draw's range (special values included) stays on x1 and x2.
        static const std::vector<ValueRange> divisor_ranges = {{0.5, 1}, {1, 2},   {0.25, 4},
                                                               {-2, -0.5}, {1, 10}, {0.125, 1}};
        out.inputs.at(2).range = sampler.pick(divisor_ranges);
        const double scalar = sampler.pick(std::vector<double>{1.0, 0.5, 2.0, -1.0, 0.25, -0.5, 1.5, 3.0});
        out.attrs = {{"scalar", AttrValue::of_float(scalar)}};
    }
};

HB_REGISTER_OPERATOR(ForeachAddcdivScalarOp)

}  // namespace hb
