// softmax(x, dim=-1): y = e^(x - max) / sum(e^(x - max)) over each slice along dim; y has
// x's shape and dtype. The max is subtracted as torch does, which also fixes the special
// values: a slice holding NaN or +inf, or only -inf, comes out all NaN (inf - inf and
// -inf - (-inf) are NaN, and the NaN reaches the sum), exactly what torch.softmax returns.
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "ops/elementwise.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"
#include "ops/axis_view.hpp"

namespace hb {

class SoftmaxOp final : public OperatorWithCompute<SoftmaxOp> {
  public:
    std::string name() const override { return "softmax"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "oneDNN softmax_forward (softmax_accurate) on x viewed as [outer, dim, inner] with the axis in the "
               "middle, float32 directly; float16/bfloat16 widened to fp32 in the workspace and narrowed back "
               "(oneDNN 2.6 has no f16/bf16 softmax without AVX-512), as a framework does";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        if (x.shape.empty()) throw Error(p.context() + "x is 0-d; softmax needs a dimension to normalize over");
        normalize_dim(p.attr_int("dim"), x.shape.size(), p.context() + "softmax dim");
        return same_shape_output(p, "y");
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one();
        const AxisView v = axis_view(x.spec.shape, normalize_dim(p.attr_int("dim"), x.spec.shape.size(), name()));
        auto& y = out[0].one().v;
#pragma omp parallel for schedule(static) if (v.outer * v.inner >= 64)
        for (std::int64_t s = 0; s < v.outer * v.inner; ++s) {
            const std::int64_t base = (s / v.inner) * v.size * v.inner + s % v.inner;
            auto at = [&](std::int64_t k) { return static_cast<std::size_t>(base + k * v.inner); };
            // NaN wins the max (std::max would drop it), so that it reaches every output.
            T max = -std::numeric_limits<T>::infinity();
            for (std::int64_t k = 0; k < v.size; ++k) {
                const T e = x.v[at(k)];
                if (std::isnan(e) || e > max) max = e;
                if (std::isnan(max)) break;
            }
            T sum = 0;
            for (std::int64_t k = 0; k < v.size; ++k) sum += (y[at(k)] = std::exp(x.v[at(k)] - max));
            const T scale = T(1) / sum;
            for (std::int64_t k = 0; k < v.size; ++k) y[at(k)] *= scale;
        }
    }

    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("x").tensors.at(0);
        const AxisView v = axis_view(x.shape, normalize_dim(p.attr_int("dim"), x.shape.size(), name()));
        const double n = static_cast<double>(x.numel());
        const double slices = static_cast<double>(v.outer * v.inner);
        WorkModel w;
        // A hardware-limited kernel reads x once and writes y once: a slice (or, along an
        // outer dim, a block of neighbouring slices) stays on chip between its three passes.
        w.bytes_read = static_cast<double>(x.bytes());
        w.bytes_written = static_cast<double>(x.bytes());
        // Half inputs are computed in fp32 as torch does (x - max feeds exp, whose argument
        // must be exact to the output's precision, and the sum is long): one cast in, one
        // out. The max alone is exact in the input dtype, so it runs there, before the cast
        // (where the vector unit has no arithmetic in that dtype, the hardware model charges
        // it at its run dtype). A reduction over a slice of `size` needs size - 1 ops.
        const DType f32 = DType::f32;
        const double reduce = n - slices;
        w.add_vector(OpClass::cmp, x.dtype, reduce);  // the max
        w.add_vector(OpClass::add, f32, n);           // x - max
        w.add_vector(OpClass::exp, f32, n);
        w.add_vector(OpClass::add, f32, reduce);      // the sum
        w.add_vector(OpClass::div, f32, slices);      // 1 / sum
        w.add_vector(OpClass::mul, f32, n);           // e * (1 / sum)
        if (x.dtype != f32) w.add_vector(OpClass::cast, f32, 2 * n);  // in and out
        // cann-bench (docs/hap.md): exp(x_i) / sum(exp(x_j)), a reduction (fp32 for half inputs):
        // per element exp, the sum's add and the division (the max shift a kernel adds for range
        // is not in the formula).
        add_formula(w, x.dtype, FormulaMath::in_fp32, n, {{OpClass::exp, 1}, {OpClass::add, 1}, {OpClass::div, 1}});
        // No row_elements: short slices are processed packed (several per vector repeat)
        // and long ones pad by under 1%, so a lower bound keeps them flat.
        w.parallel_items = slices;
        w.innermost = x.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // Every batch meets the last dim, negative non-last dims, the first dim and inner dims.
        const std::int64_t dim = sampler.cycle(std::vector<std::int64_t>{-1, 0, -2, 1, -1, 2, -3, 3});
        const int min_rank = dim < 0 ? static_cast<int>(-dim) : static_cast<int>(dim) + 1;
        const int rank = sampler.pick_rank(std::max(min_rank, 1), 5);
        out.inputs.at(0).shapes = {sampler.shape(d.target_elements, rank, d.dtype, d.aligned)};
        out.attrs = {{"dim", AttrValue::of_int(dim)}};
    }
};

HB_REGISTER_OPERATOR(SoftmaxOp)

}  // namespace hb
