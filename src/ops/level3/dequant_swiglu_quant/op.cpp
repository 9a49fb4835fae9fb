// dequant_swiglu_quant(x, weight_scale?, activation_scale?, quant_scale?, activate_left=False)
// -> (y, scale) (operators-l3-l4.md). x [T, 2H] is int32 (a matmul accumulator, dequantized)
// or float16/bfloat16 (already dequantized):
//   d = (float(x) * weight_scale) * activation_scale[:, None]   int32 x: weight_scale float32
//                                                              [1, 2H], activation_scale [T]
//   d = x                                                       float x: both absent
//   A = d[:, :H], B = d[:, H:];  s = SiLU(B) * A (activate_left false: the RIGHT half is
//   activated), s = SiLU(A) * B (true);  s *= quant_scale (float32 [1, H]) when given
//   scale = max(max|s| / 127, 1e-12) per row (divide, then clamp: the other order from
//   add_rms_norm_dynamic_quant);  y = clamp(round_half_even(s / scale), -128, 127) int8 [T, H]
// with SiLU(t) = t / (1 + e^-t). scale is float32 [T].
// Precision: the reference golden is fp32 on the int32 path and fp64-then-fp32 (row max and
// division) on the float path; hapbench's golden is fp64 throughout except that the scale is
// an fp32 value by definition (rounded before y divides by it). The same-precision reference
// is fp32 on both paths (the native run widens fp16/bf16 x to fp32). y may differ by 1.
// Special values: a NaN or infinite s in a row makes its scale NaN or +inf and its y all 0
// (NaN quotients and finite / inf quantize to 0); SiLU(-inf) is NaN (-inf / inf), SiLU(+inf)
// is +inf.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/int8_quant.hpp"
#include "ops/register.hpp"
#include "ops/suite_budget.hpp"

namespace hb {

namespace {

template <typename T>
T silu(T t) {
    return t / (T(1) + std::exp(-t));
}

std::string dtype_shape(const TensorSpec& t) {
    return std::string(dtype_name(t.dtype)) + " " + shape_to_string(t.shape);
}

}  // namespace

class DequantSwigluQuantOp final : public OperatorWithCompute<DequantSwigluQuantOp> {
  public:
    std::string name() const override { return "dequant_swiglu_quant"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "threaded C++ (OpenMP over rows; per row one fp32 pass dequantizing, applying SiLU and the gating "
               "multiply and quant_scale into a row buffer while taking max|s|, one quantizing pass): oneDNN 2.6 has "
               "no dynamic quantization and no SwiGLU on split halves (its swish eltwise and binary_mul run on "
               "strided half-row views only in ref:any), so a primitive chain would also write and re-read s";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const TensorSpec& x = p.input("x").tensors.at(0);
        const ArgSpec& ws = p.input("weight_scale");
        const ArgSpec& as = p.input("activation_scale");
        const ArgSpec& qs = p.input("quant_scale");
        if (x.shape.size() != 2 || x.shape[1] % 2 != 0 || x.shape[1] == 0)
            throw Error(p.context() + "x has shape " + shape_to_string(x.shape) +
                        "; it must be [T, 2H] with an even, non-zero last dim");
        const std::int64_t tokens = x.shape[0], half = x.shape[1] / 2;
        if (x.dtype == DType::i32) {
            if (!ws.present || !as.present)
                throw Error(p.context() + "an int32 x needs weight_scale float32 [1, " + std::to_string(2 * half) +
                            "] and activation_scale float32 [" + std::to_string(tokens) + "] to dequantize it");
            const TensorSpec& w = ws.tensors.at(0);
            const TensorSpec& a = as.tensors.at(0);
            if (w.dtype != DType::f32 || w.shape != Shape{1, 2 * half})
                throw Error(p.context() + "weight_scale is " + dtype_shape(w) + "; expected float32 [1, " +
                            std::to_string(2 * half) + "]");
            if (a.dtype != DType::f32 || a.shape != Shape{tokens})
                throw Error(p.context() + "activation_scale is " + dtype_shape(a) + "; expected float32 [" +
                            std::to_string(tokens) + "]");
        } else if (x.dtype == DType::f16 || x.dtype == DType::bf16) {
            if (ws.present || as.present)
                throw Error(p.context() + "a " + std::string(dtype_name(x.dtype)) +
                            " x is already dequantized; weight_scale and activation_scale must be absent");
        } else {
            throw Error(p.context() + "x is " + std::string(dtype_name(x.dtype)) +
                        "; expected int32, float16 or bfloat16");
        }
        if (qs.present) {
            const TensorSpec& q = qs.tensors.at(0);
            if (q.dtype != DType::f32 || q.shape != Shape{1, half})
                throw Error(p.context() + "quant_scale is " + dtype_shape(q) + "; expected float32 [1, " +
                            std::to_string(half) + "]");
        }
        ArgSpec y, scale;
        y.name = "y";
        y.tensors.push_back(TensorSpec{DType::i8, {tokens, half}});
        scale.name = "scale";
        scale.tensors.push_back(TensorSpec{DType::f32, {tokens}});
        return {y, scale};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one();
        const bool dequantize = x.spec.dtype == DType::i32;
        const T* ws = dequantize ? in[1].one().v.data() : nullptr;
        const T* as = dequantize ? in[2].one().v.data() : nullptr;
        const T* qs = in[3].present ? in[3].one().v.data() : nullptr;
        const bool activate_left = p.attr_bool("activate_left");
        const std::int64_t tokens = x.spec.shape[0], half = x.spec.shape[1] / 2;
        auto& y = out[0].one().v;
        auto& scale = out[1].one().v;
#pragma omp parallel if (tokens * half >= 16384)
        {
            std::vector<T> s(static_cast<std::size_t>(half));
#pragma omp for schedule(static)
            for (std::int64_t t = 0; t < tokens; ++t) {
                const T* xr = x.v.data() + t * 2 * half;
                auto d = [&](std::int64_t j) { return dequantize ? (xr[j] * ws[j]) * as[t] : xr[j]; };
                T max_abs = 0;
                for (std::int64_t h = 0; h < half; ++h) {
                    const T a = d(h), b = d(half + h);
                    T v = activate_left ? silu(a) * b : silu(b) * a;
                    if (qs) v *= qs[h];
                    s[static_cast<std::size_t>(h)] = v;
                    max_abs = nan_max(max_abs, std::fabs(v));
                }
                const T sc = as_fp32_scale(nan_max(max_abs / T(127), T(1e-12)));
                scale[static_cast<std::size_t>(t)] = sc;
                for (std::int64_t h = 0; h < half; ++h)
                    y[static_cast<std::size_t>(t * half + h)] = quantize_to_int8(s[static_cast<std::size_t>(h)] / sc);
            }
        }
    }

    WorkModel work(const Problem& p) const override {
        const TensorSpec& x = p.input("x").tensors.at(0);
        const std::int64_t tokens = x.shape[0], half = x.shape[1] / 2;
        const double n_in = static_cast<double>(x.numel()), n_out = static_cast<double>(tokens * half);
        const bool dequantize = x.dtype == DType::i32;
        const bool quant_scale = p.input("quant_scale").present;
        WorkModel w;
        // x, the scale vectors (each reused from cache) once; y and one fp32 scale per row.
        w.bytes_read = static_cast<double>(x.bytes());
        for (const char* name : {"weight_scale", "activation_scale", "quant_scale"})
            if (p.input(name).present) w.bytes_read += static_cast<double>(p.input(name).tensors.at(0).bytes());
        w.bytes_written = n_out + 4.0 * static_cast<double>(tokens);
        // In fp32: widen x (cast; int32 x also times weight_scale and activation_scale, 2 mul),
        // per output SiLU (exp of -t, add, div), the gating mul, the quant_scale mul, |s| (abs),
        // the running max (cmp), s * (1/scale) (mul), round and narrow to int8 (2 casts); per
        // row the scale and its reciprocal (2 div).
        // Formula-literal count (cann-bench convention: elementary op or cast 1, exp 2,
        // division 4) per output element: dequant 2 x (cast + 2 mul) = 6 for int32 x (2
        // casts for float x), SiLU neg + exp + add + div + mul = 9, gating mul 1, quant_scale
        // mul 1 when given, abs + max 2, division 4, round + clamp + cast 3: 26 (int32, with
        // quant_scale), 21 (float, without); plus 2 per row (clamp, /127).
        w.add_vector(OpClass::cast, DType::f32, n_in + 2 * n_out);
        if (dequantize) w.add_vector(OpClass::mul, DType::f32, 2 * n_in);
        w.add_vector(OpClass::exp, DType::f32, n_out);
        w.add_vector(OpClass::add, DType::f32, n_out);
        w.add_vector(OpClass::div, DType::f32, n_out + 2.0 * static_cast<double>(tokens));
        w.add_vector(OpClass::mul, DType::f32, (quant_scale ? 3 : 2) * n_out);
        w.add_vector(OpClass::abs, DType::f32, n_out);
        w.add_vector(OpClass::cmp, DType::f32, n_out);
        const double scale_mul = quant_scale ? 1 : 0;
        if (dequantize)
            add_formula(w, DType::f32, FormulaMath::in_fp32, n_out,
                        {{OpClass::cast, 3}, {OpClass::mul, 6 + scale_mul}, {OpClass::add, 2}, {OpClass::exp, 1},
                         {OpClass::div, 2}, {OpClass::abs, 1}, {OpClass::cmp, 1}});
        else
            add_formula(w, x.dtype, FormulaMath::in_fp32, n_out,
                        {{OpClass::mul, 2 + scale_mul}, {OpClass::add, 2}, {OpClass::exp, 1}, {OpClass::div, 2},
                         {OpClass::abs, 1}, {OpClass::cmp, 1}, {OpClass::cast, 1}});
        // The row of s is held whole between its max pass and its quantizing pass.
        w.row_elements = half;
        w.parallel_items = static_cast<double>(tokens);
        w.innermost = x.shape[1];
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // Every combination of activate_left and quant_scale within four cases.
        const int choice = sampler.cycle(std::vector<int>{0, 1, 2, 3});
        const bool activate_left = choice & 1, with_quant_scale = choice & 2;
        const bool dequantize = d.dtype == DType::i32;
        const std::int64_t budget = budgeted_elements(sampler);
        // An aligned case needs every input's last dim at 512 bytes: H (quant_scale's) a
        // multiple of 128, and for int32 x also T (activation_scale's).
        Shape x = sampler.shape(budget, 2, d.dtype, d.aligned, d.aligned ? 256 : 2);
        if (d.aligned && dequantize) x[0] = std::max<std::int64_t>(128, (x[0] + 64) / 128 * 128);
        const std::int64_t tokens = x[0], half = x[1] / 2;
        auto& in = out.inputs;
        in.at(0).shapes = {x};
        in.at(3).present = with_quant_scale;
        if (with_quant_scale) {
            in.at(3).shapes = {{1, half}};
            in.at(3).dtype = DType::f32;
            in.at(3).range = ValueRange{-1, 1};
        }
        if (dequantize) {
            // A matmul's int32 accumulator: x in the int8 product range (the type-boundary
            // group: all of int32), signed per-column weight scales, per-token activation
            // scales. The case's value-range group goes to activation_scale (NaN, infinity,
            // zero and the magnitudes live there), except the type boundary, which is x's.
            in.at(1).present = in.at(2).present = true;
            in.at(1).shapes = {{1, 2 * half}};
            in.at(2).shapes = {{tokens}};
            in.at(1).dtype = in.at(2).dtype = DType::f32;
            in.at(1).range = ValueRange{-0.1, 0.1};
            if (d.range_group == RangeGroup::type_boundary) {
                in.at(2).range = ValueRange{-0.5, 0.5};
            } else {
                in.at(0).range = ValueRange{-128, 127};
                in.at(2).range = d.range;
            }
        } else {
            in.at(1).present = in.at(2).present = false;
        }
        out.attrs = {{"activate_left", AttrValue::of_bool(activate_left)}};
    }

    // fp16 keeps its finite limit; bfloat16 uses +-1e16, where SiLU(B) * A (up to 1e32) stays
    // finite in the fp32 arithmetic of every practical kernel, instead of +-3e38, whose
    // products overflow fp32 and test only that; int32 keeps its whole range.
    ValueRange boundary_range(DType dtype) const override {
        if (dtype == DType::f16) return {-65504, 65504};
        if (dtype == DType::bf16) return {-1e16, 1e16};
        return Operator::boundary_range(dtype);
    }
};

HB_REGISTER_OPERATOR(DequantSwigluQuantOp)

}  // namespace hb
