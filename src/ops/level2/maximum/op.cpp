// maximum(x1, x2): elementwise max with NumPy/PyTorch broadcasting, as torch.maximum: a NaN
// in either input gives NaN. Both inputs have one dtype (float16, bfloat16, float32, int8,
// int32, int64), which the output keeps; hapbench does not promote mixed dtypes.
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "ops/broadcast.hpp"
#include "ops/broadcast_sampling.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

class MaximumOp final : public OperatorWithCompute<MaximumOp> {
  public:
    std::string name() const override { return "maximum"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "oneDNN binary_max where oneDNN 2.6 has a jit kernel for the dtype and broadcast (the full-size "
               "input as src0, the other broadcast as src1; asked per case); int64 (no oneDNN type), dtypes and "
               "broadcasts oneDNN runs only in ref:any, and broadcasts in both directions (oneDNN broadcasts src1 "
               "only): a threaded C++ loop. The jit max keeps oneDNN's NaN rule (a NaN in src0 is lost)";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        return {broadcast_binary_output(p, "maximum")};
    }

    template <typename T>
    void compute(const Problem&, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x1 = in[0].one();
        const auto& x2 = in[1].one();
        T* y = out[0].one().v.data();
        const BroadcastPlan plan(x1.spec.shape, x2.spec.shape);
        const std::int64_t sa = plan.inner_stride_a(), sb = plan.inner_stride_b();
        for_each_broadcast_piece(plan, [&](std::int64_t o, std::int64_t a, std::int64_t b, std::int64_t n) {
            for (std::int64_t i = 0; i < n; ++i) {
                const T u = x1.v[static_cast<std::size_t>(a + i * sa)], w = x2.v[static_cast<std::size_t>(b + i * sb)];
                // torch.maximum: NaN wins over any number (integers are never NaN).
                y[o + i] = std::isnan(u) || std::isnan(w) ? std::numeric_limits<T>::quiet_NaN() : (u < w ? w : u);
            }
        });
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& x1 = p.input("x1").tensors.at(0);
        const TensorSpec& x2 = p.input("x2").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        const double n = static_cast<double>(y.numel());
        WorkModel w;
        // Each input is read once however often broadcasting reuses it (the reused part
        // stays on chip); the output is written once.
        w.bytes_read = static_cast<double>(x1.bytes() + x2.bytes());
        w.bytes_written = static_cast<double>(y.bytes());
        // One max per element. Floats add the NaN rule: an unordered compare and a select
        // (a hardware max returns one operand for NaN). int64 has no vector max on AVX2:
        // a compare and a select.
        w.add_vector(OpClass::cmp, y.dtype, n);
        if (is_floating(y.dtype)) {
            w.add_vector(OpClass::cmp, y.dtype, n);
            w.add_vector(OpClass::select, y.dtype, n);
        } else if (y.dtype == DType::i64) {
            w.add_vector(OpClass::select, y.dtype, n);
        }
        // cann-bench (docs/hap.md): one max per output element.
        add_formula(w, y.dtype, FormulaMath::compare, n, {{OpClass::cmp, 1}});
        w.parallel_items = n;
        w.innermost = y.shape.empty() ? 1 : y.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const BroadcastPattern pattern = sampler.cycle(all_broadcast_patterns);
        Shape x1, x2;
        sample_broadcast_shapes(sampler, pattern, d.target_elements, d.dtype, d.aligned, x1, x2);
        out.inputs.at(0).shapes = {x1};
        out.inputs.at(1).shapes = {x2};
    }

    // int64 values travel through fp64 in the input generator; +-2^62 is the widest range
    // it converts exactly (2^63 itself overflows int64), and still spans the type.
    ValueRange boundary_range(DType dtype) const override {
        if (dtype == DType::i64) return {-4611686018427387904.0, 4611686018427387904.0};
        return Operator::boundary_range(dtype);
    }
};

HB_REGISTER_OPERATOR(MaximumOp)

}  // namespace hb
