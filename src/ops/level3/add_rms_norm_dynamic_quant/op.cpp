// add_rms_norm_dynamic_quant(x1, x2, gamma, epsilon=1e-6) -> (y, xOut, scaleOut)
// (operators-l3-l4.md). x1, x2 [..., N] of one dtype (float16 or bfloat16), gamma [N] of the
// same dtype. Per row of the last dim:
//   s = x1 + x2;  r = sqrt(mean(s^2) + epsilon);  u = (s / r) * gamma   (divide, then multiply)
//   scale = max(max|u|, 1e-12) / 127                                       (clamp before /127)
//   y = clamp(round_half_even(u / scale), -128, 127) as int8
// Outputs: y int8 [..., N]; xOut = s in the input dtype; scaleOut = scale, float32 [...].
// Precision: the reference golden is fp32-pinned; hapbench's golden is fp64 except that the
// scale is an fp32 value by definition (rounded to fp32 before y divides by it); the
// same-precision reference is the fp32 computation. y may differ by 1 (proto int8: 1).
// Special values: a NaN or an infinity in s makes the row's u NaN somewhere (inf / inf), so
// its scale is NaN and every y is 0 (a NaN quotient quantizes to 0); a finite row times an
// infinite gamma gives u = +-inf, scale = +inf and y = 0 (inf / inf is NaN, finite / inf 0);
// an all-zero row gives scale = 1e-12 / 127 and y = 0.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/int8_quant.hpp"
#include "ops/register.hpp"
#include "ops/suite_budget.hpp"

namespace hb {

namespace {

// x1 as [rows, row] with row its last dim.
struct Rows {
    std::int64_t rows = 0, row = 0;
};

Rows rows_of(const Shape& x) {
    Rows v;
    v.row = x.back();
    v.rows = v.row == 0 ? 0 : numel(x) / v.row;
    return v;
}

// Sum of squares in T: sequential within blocks of 256, block sums added after, the order
// of a vectorized kernel (a plain sequential fp32 sum over 16384 terms would make the
// same-precision reference worse than the kernels it judges).
template <typename T>
T sum_of_squares(const T* s, std::int64_t n) {
    T total = 0;
    for (std::int64_t begin = 0; begin < n; begin += 256) {
        T block = 0;
        const std::int64_t end = std::min(n, begin + 256);
        for (std::int64_t i = begin; i < end; ++i) block += s[i] * s[i];
        total += block;
    }
    return total;
}

}  // namespace

class AddRmsNormDynamicQuantOp final : public OperatorWithCompute<AddRmsNormDynamicQuantOp> {
  public:
    std::string name() const override { return "add_rms_norm_dynamic_quant"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "threaded C++ (OpenMP over rows; per row one pass adding x1 + x2 in fp32, writing xOut and summing "
               "squares, one pass for u and max|u| with the row in cache, one quantizing pass): oneDNN 2.6 has no RMS "
               "normalization (its layer_normalization subtracts the mean) and no dynamic quantization (its reorder "
               "takes scales given in advance), so a primitive chain would pass over memory four times";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const TensorSpec& x1 = p.input("x1").tensors.at(0);
        const TensorSpec& x2 = p.input("x2").tensors.at(0);
        const TensorSpec& gamma = p.input("gamma").tensors.at(0);
        if (x1.dtype != DType::f16 && x1.dtype != DType::bf16)
            throw Error(p.context() + "x1 is " + std::string(dtype_name(x1.dtype)) + "; expected float16 or bfloat16");
        if (x1.shape.empty())
            throw Error(p.context() + "x1 is 0-d; it must be [..., N] with rows along the last dim");
        if (x2.shape != x1.shape || x2.dtype != x1.dtype)
            throw Error(p.context() + "x2 is " + std::string(dtype_name(x2.dtype)) + " " + shape_to_string(x2.shape) +
                        "; it must have x1's shape and dtype (" + std::string(dtype_name(x1.dtype)) + " " +
                        shape_to_string(x1.shape) + ")");
        if (gamma.shape != Shape{x1.shape.back()} || gamma.dtype != x1.dtype)
            throw Error(p.context() + "gamma is " + std::string(dtype_name(gamma.dtype)) + " " +
                        shape_to_string(gamma.shape) + "; it must be " + std::string(dtype_name(x1.dtype)) + " [" +
                        std::to_string(x1.shape.back()) + "] (x1's dtype and last dim)");
        const double epsilon = p.attr_float("epsilon");
        if (!(epsilon >= 0) || !std::isfinite(epsilon))
            throw Error(p.context() + "epsilon is " + std::to_string(epsilon) + "; it must be finite and >= 0");
        ArgSpec y, x_out, scale;
        y.name = "y";
        y.tensors.push_back(TensorSpec{DType::i8, x1.shape});
        x_out.name = "xOut";
        x_out.tensors.push_back(TensorSpec{x1.dtype, x1.shape});
        scale.name = "scaleOut";
        scale.tensors.push_back(TensorSpec{DType::f32, Shape(x1.shape.begin(), x1.shape.end() - 1)});
        return {y, x_out, scale};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x1 = in[0].one().v;
        const auto& x2 = in[1].one().v;
        const auto& gamma = in[2].one().v;
        const Rows v = rows_of(in[0].one().spec.shape);
        const T epsilon = static_cast<T>(p.attr_float("epsilon"));
        auto& y = out[0].one().v;
        auto& s = out[1].one().v;  // xOut holds s; the comparator rounds it to the dtype
        auto& scale = out[2].one().v;
#pragma omp parallel for schedule(static) if (v.rows * v.row >= 32768)
        for (std::int64_t r = 0; r < v.rows; ++r) {
            const std::size_t base = static_cast<std::size_t>(r * v.row);
            for (std::int64_t i = 0; i < v.row; ++i) s[base + i] = x1[base + i] + x2[base + i];
            const T rms = std::sqrt(sum_of_squares(s.data() + base, v.row) / static_cast<T>(v.row) + epsilon);
            T max_abs = 0;
            for (std::int64_t i = 0; i < v.row; ++i)
                max_abs = nan_max(max_abs, std::fabs((s[base + i] / rms) * gamma[static_cast<std::size_t>(i)]));
            const T sc = as_fp32_scale(nan_max(max_abs, T(1e-12)) / T(127));
            scale[static_cast<std::size_t>(r)] = sc;
            for (std::int64_t i = 0; i < v.row; ++i)
                y[base + i] = quantize_to_int8(((s[base + i] / rms) * gamma[static_cast<std::size_t>(i)]) / sc);
        }
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& x1 = p.input("x1").tensors.at(0);
        const TensorSpec& gamma = p.input("gamma").tensors.at(0);
        const Rows v = rows_of(x1.shape);
        const double n = static_cast<double>(x1.numel());
        const double rows = static_cast<double>(v.rows);
        WorkModel w;
        // x1 and x2 once (a row stays on chip for its three passes), gamma once (reused by
        // every row from cache); y (1 byte), xOut and one fp32 scale per row written.
        w.bytes_read = 2.0 * static_cast<double>(x1.bytes()) + static_cast<double>(gamma.bytes());
        w.bytes_written = n + static_cast<double>(x1.bytes()) + 4 * rows;
        // In fp32 (the definition is fp32): per element, widen x1 and x2 (2 casts), s = x1 + x2,
        // narrow s for xOut (cast), s^2 summed (fma), s * (1/r) * gamma (2 mul), |u| (abs), the
        // running max (cmp), u * (1/scale) (mul), round and narrow to int8 (2 casts); gamma
        // widened once. Per row: mean + epsilon (add), sqrt, 1/r, scale and 1/scale (3 div).
        // Formula-literal count (cann-bench convention: elementary op or cast 1, division 4)
        // per element of x1: 2 casts + add + cast + mul + add (the sum) + div + mul (s/r*gamma)
        // + abs + max + div + round + clamp + cast = 19, plus per row add + sqrt + 2 div.
        w.add_vector(OpClass::cast, DType::f32, 5 * n + static_cast<double>(gamma.numel()));
        w.add_vector(OpClass::add, DType::f32, n + rows);
        w.add_vector(OpClass::fma, DType::f32, n);
        w.add_vector(OpClass::mul, DType::f32, 3 * n);
        w.add_vector(OpClass::abs, DType::f32, n);
        w.add_vector(OpClass::cmp, DType::f32, n);
        w.add_vector(OpClass::sqrt, DType::f32, rows);
        w.add_vector(OpClass::div, DType::f32, 3 * rows);
        add_formula(w, x1.dtype, FormulaMath::in_fp32, n,
                    {{OpClass::add, 2}, {OpClass::mul, 3}, {OpClass::abs, 1}, {OpClass::cmp, 1}, {OpClass::div, 1},
                     {OpClass::cast, 1}});
        // A row is held whole between its passes.
        w.row_elements = v.row;
        w.parallel_items = rows;
        w.innermost = v.row;
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // Mostly the [M, N] of the reference's cases, also 3-D and 4-D token batches.
        const int rank = sampler.cycle(std::vector<int>{2, 3, 2, 4, 2});
        const Shape x = sampler.shape(budgeted_elements(sampler) / 2, rank, d.dtype, d.aligned);
        out.inputs.at(0).shapes = {x};
        out.inputs.at(1).shapes = {x};
        out.inputs.at(2).shapes = {{x.back()}};
        // gamma stays in [-1, 1] (a norm weight) except in the infinity cases, where its own
        // infinite columns give the rows of finite s the u = +-inf path.
        if (d.range_group != RangeGroup::special_inf) out.inputs.at(2).range = ValueRange{-1, 1};
        const double epsilon = sampler.cycle(std::vector<double>{1e-6, 1e-5, 1e-3, 1e-8, 1e-6, 1e-5, 1e-3});
        out.attrs = {{"epsilon", AttrValue::of_float(epsilon)}};
    }

    // fp16 keeps its finite limit (s^2 fits fp32 easily). bfloat16's +-3e38 would overflow s
    // and s^2 in the fp32 arithmetic the definition fixes, testing only overflow; +-1e16
    // keeps the sum of up to 1e6 squares of s finite in fp32, far past any fp16 value.
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(AddRmsNormDynamicQuantOp)

}  // namespace hb
