// dynamic_quant(x): per-token symmetric int8 quantization over the last dim (operators.md):
//   s = max(max|x| over the row, 1e-12) / 127;  y = clamp(round_half_even(x / s), -128, 127)
// y is int8 with x's shape; scale is s in fp32 with x's shape less its last dim. x is
// float16 or bfloat16 of rank >= 2 (the reference interface's range, 2 to 8 dims).
// Special values: a NaN in a row makes its s NaN (the max propagates NaN, as torch.amax), an
// infinity makes it inf; a quotient x / s that is NaN (NaN/s, inf/inf) quantizes to 0, so
// such rows come out as all zeros.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

class DynamicQuantOp final : public OperatorWithCompute<DynamicQuantOp> {
  public:
    std::string name() const override { return "dynamic_quant"; }
    int level() const override { return 2; }
    std::string baseline_description() const override {
        return "threaded C++ (OpenMP over rows: an fp32 max|x| pass and a quantize pass per row, the row "
               "cached between them): oneDNN 2.6 has no dynamic per-row quantization (its reorder takes "
               "given scales, its reduction would add a second pass over memory and a separate reorder per row)";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const TensorSpec& x = p.input("x").tensors.at(0);
        if (x.shape.size() < 2)
            throw Error(p.context() + "x has shape " + shape_to_string(x.shape) +
                        "; dynamic_quant needs at least 2 dims (rows of the last dim, as the reference interface)");
        if (x.dtype != DType::f16 && x.dtype != DType::bf16)
            throw Error(p.context() + "x is " + std::string(dtype_name(x.dtype)) + "; expected float16 or bfloat16");
        ArgSpec y, scale;
        y.name = "y";
        y.tensors.push_back(TensorSpec{DType::i8, x.shape});
        scale.name = "scale";
        scale.tensors.push_back(TensorSpec{DType::f32, Shape(x.shape.begin(), x.shape.end() - 1)});
        return {y, scale};
    }

    template <typename T>
    void compute(const Problem&, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one();
        auto& y = out[0].one().v;
        auto& scale = out[1].one().v;
        const auto row = static_cast<std::size_t>(x.spec.shape.back());
        const std::size_t rows = row == 0 ? 0 : x.v.size() / row;
#pragma omp parallel for schedule(static)
        for (std::size_t r = 0; r < rows; ++r) {
            const T* xr = x.v.data() + r * row;
            T max_abs = 0;
            for (std::size_t i = 0; i < row; ++i) {
                const T a = std::fabs(xr[i]);
                if (std::isnan(a) || a > max_abs) max_abs = std::isnan(max_abs) ? max_abs : a;
            }
            // The clamp at 1e-12 keeps an all-zero row from dividing by zero.
            const T s = (std::isnan(max_abs) ? max_abs : std::max(max_abs, T(1e-12))) / T(127);
            scale[r] = s;
            for (std::size_t i = 0; i < row; ++i) {
                const T q = xr[i] / s;
                y[r * row + i] = std::isnan(q) ? T(0) : std::clamp(std::nearbyint(q), T(-128), T(127));
            }
        }
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& x = p.input("x").tensors.at(0);
        const double n = static_cast<double>(x.numel());
        const double rows = static_cast<double>(x.shape.back() == 0 ? 0 : x.numel() / x.shape.back());
        WorkModel w;
        // x is read once (a row stays on chip between its max pass and its quantize pass);
        // y and one fp32 scale per row are written.
        w.bytes_read = static_cast<double>(x.bytes());
        w.bytes_written = n + 4 * rows;
        // Per element: widen to fp32, |x|, the running max, x * (1/s), round and narrow to
        // int8 (two conversions). Per row: one divide for 1/s (and s itself).
        w.add_vector(OpClass::cast, DType::f32, 3 * n);
        w.add_vector(OpClass::abs, DType::f32, n);
        w.add_vector(OpClass::cmp, DType::f32, n);
        w.add_vector(OpClass::mul, DType::f32, n);
        w.add_vector(OpClass::div, DType::f32, 2 * rows);
        // cann-bench (docs/hap.md): scale = row_max(|x|) / 127, y = round(x / scale), a reduction
        // (fp32 for half inputs): per element abs, the max, a division and the rounding.
        add_formula(w, x.dtype, FormulaMath::in_fp32, n,
                    {{OpClass::abs, 1}, {OpClass::cmp, 1}, {OpClass::div, 1}, {OpClass::cast, 1}});
        // A row is held whole between its max pass and its quantize pass.
        w.row_elements = x.shape.back();
        w.parallel_items = rows;
        w.innermost = x.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        out.inputs.at(0).shapes = {sampler.shape(d.target_elements, sampler.pick_rank(2, 5), d.dtype, d.aligned)};
    }
};

HB_REGISTER_OPERATOR(DynamicQuantOp)

}  // namespace hb
