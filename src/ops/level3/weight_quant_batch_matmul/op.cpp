// weight_quant_batch_matmul(x, weight, antiquantScale, antiquantOffset?, bias?): a matmul
// with int8 weights dequantized per output column (operators-l3-l4.md):
//   W'[k, n] = (weight[k, n] + antiquantOffset[n]) * antiquantScale[n]   (no offset: weight * scale)
//   y = x . W' (+ bias)
// x [M, K] float16 or bfloat16; weight int8 [K, N]; antiquantScale and antiquantOffset [N]
// or [1, N] in x's dtype; bias [N] or [1, N], float16 with a float16 x and float32 with a
// bfloat16 x; y [M, N] in x's dtype.
// The golden is the reference's oracle, full fp64 (W' and the product through OpenBLAS
// dgemm). The same-precision reference is its plain golden run natively: W' computed in x's
// dtype (weight + offset rounded to it, then times the scale rounded again), the product
// accumulated in fp32 (OpenBLAS sgemm), the bias added in fp32, y rounded to x's dtype.
// Special values follow IEEE arithmetic (0 * inf in the product is NaN).
// No input hook: the generator draws scales in the reference's [0.001, 0.1] (shrunk where
// typical results would exceed typical_result_cap, src/ops/matmul_sampling.hpp) and offsets
// in [-0.1, 0.1]; the operator is defined for any value.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/dgemm.hpp"
#include "ops/matmul_sampling.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

struct WeightQuantShape {
    std::int64_t m = 0, k = 0, n = 0;
    bool offset = false, bias = false;
    DType dtype = DType::f16;
};

void check_per_column(const Problem& p, const char* name, const TensorSpec& t, const WeightQuantShape& s) {
    if (t.shape != Shape{s.n} && t.shape != Shape{1, s.n})
        throw Error(p.context() + name + " has shape " + shape_to_string(t.shape) + "; expected [N] or [1, N] with N = " +
                    std::to_string(s.n));
}

WeightQuantShape weight_quant_shape(const Problem& p) {
    const std::string where = p.context();
    const TensorSpec& x = p.input("x").tensors.at(0);
    const TensorSpec& w = p.input("weight").tensors.at(0);
    const TensorSpec& scale = p.input("antiquantScale").tensors.at(0);
    WeightQuantShape s;
    s.dtype = x.dtype;
    if (x.dtype != DType::f16 && x.dtype != DType::bf16)
        throw Error(where + "x is " + std::string(dtype_name(x.dtype)) + "; expected float16 or bfloat16");
    if (w.dtype != DType::i8) throw Error(where + "weight is " + std::string(dtype_name(w.dtype)) + "; expected int8");
    if (x.shape.size() != 2 || w.shape.size() != 2)
        throw Error(where + "x " + shape_to_string(x.shape) + " and weight " + shape_to_string(w.shape) +
                    " must be 2-dim: [M, K] and [K, N]");
    s.m = x.shape[0];
    s.k = x.shape[1];
    s.n = w.shape[1];
    if (w.shape[0] != s.k)
        throw Error(where + "weight " + shape_to_string(w.shape) + " has K = " + std::to_string(w.shape[0]) + " but x " +
                    shape_to_string(x.shape) + " has K = " + std::to_string(s.k));
    if (s.m < 1 || s.k < 1 || s.n < 1)
        throw Error(where + "M, K and N must be at least 1 (x " + shape_to_string(x.shape) + ", weight " +
                    shape_to_string(w.shape) + ")");
    if (scale.dtype != x.dtype)
        throw Error(where + "antiquantScale is " + std::string(dtype_name(scale.dtype)) + "; it must be x's dtype, " +
                    std::string(dtype_name(x.dtype)));
    check_per_column(p, "antiquantScale", scale, s);
    if (const auto& offset = p.input("antiquantOffset"); offset.present) {
        const TensorSpec& o = offset.tensors.at(0);
        if (o.dtype != x.dtype)
            throw Error(where + "antiquantOffset is " + std::string(dtype_name(o.dtype)) + "; it must be x's dtype, " +
                        std::string(dtype_name(x.dtype)));
        check_per_column(p, "antiquantOffset", o, s);
        s.offset = true;
    }
    if (const auto& bias = p.input("bias"); bias.present) {
        const TensorSpec& b = bias.tensors.at(0);
        const DType want = x.dtype == DType::f16 ? DType::f16 : DType::f32;
        if (b.dtype != want)
            throw Error(where + "bias is " + std::string(dtype_name(b.dtype)) + "; with a " + std::string(dtype_name(x.dtype)) +
                        " x it must be " + std::string(dtype_name(want)));
        check_per_column(p, "bias", b, s);
        s.bias = true;
    }
    return s;
}

// W' = (weight + offset) * scale in T; `round` rounds each step to x's dtype (the native
// run of the plain golden) or not (the fp64 oracle).
template <typename T>
std::vector<T> dequantized_weight(const WeightQuantShape& s, const ValueArgs<double>& in, bool round) {
    const std::vector<double>& w = in[1].one().v;
    const std::vector<double>& scale = in[2].one().v;
    const std::vector<double>* offset = in[3].present ? &in[3].one().v : nullptr;
    auto narrow = [&](double v) { return round ? round_to_dtype(v, s.dtype) : v; };
    std::vector<T> out(w.size());
    for (std::int64_t r = 0; r < s.k; ++r)
        for (std::int64_t j = 0; j < s.n; ++j) {
            const auto at = static_cast<std::size_t>(r * s.n + j);
            double v = w[at];
            if (offset) v = narrow(v + (*offset)[static_cast<std::size_t>(j)]);
            out[at] = static_cast<T>(narrow(v * scale[static_cast<std::size_t>(j)]));
        }
    return out;
}

template <typename T>
void product(const WeightQuantShape& s, const ValueArgs<double>& in, bool round, std::vector<double>& y) {
    const std::vector<T> weight = dequantized_weight<T>(s, in, round);
    const std::vector<T> x(in[0].one().v.begin(), in[0].one().v.end());
    std::vector<T> out(static_cast<std::size_t>(s.m * s.n));
    gemm(false, false, s.m, s.n, s.k, x.data(), s.k, weight.data(), s.n, out.data(), s.n);
    if (s.bias) {
        const std::vector<double>& bias = in[4].one().v;
        for (std::int64_t i = 0; i < s.m; ++i)
            for (std::int64_t j = 0; j < s.n; ++j)
                out[static_cast<std::size_t>(i * s.n + j)] += static_cast<T>(bias[static_cast<std::size_t>(j)]);
    }
    y.assign(out.begin(), out.end());
}

}  // namespace

class WeightQuantBatchMatmulOp final : public Operator {
  public:
    std::string name() const override { return "weight_quant_batch_matmul"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "threaded C++ dequantization of the int8 weight into x's compute type, then one oneDNN matmul with the "
               "bias: bfloat16 in bf16 (brgemm, AMX or AVX512-BF16 where present, into an fp32 destination), float16 "
               "(and bfloat16 below AVX-512) in fp32 (x widened, the weight dequantized to fp32, the result rounded), "
               "since oneDNN 2.6 has no f16 matmul and no int8-weight dequantization of its own";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const WeightQuantShape s = weight_quant_shape(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{s.dtype, Shape{s.m, s.n}});
        return {y};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        product<double>(weight_quant_shape(p), in, false, out[0].one().v);
    }

    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const WeightQuantShape s = weight_quant_shape(p);
        product<float>(s, in, true, out[0].one().v);
        round_values_to_dtype(out[0].one().v, s.dtype);
    }

    WorkModel work(const Problem& p) const override {
        const WeightQuantShape s = weight_quant_shape(p);
        WorkModel w;
        for (const auto& arg : p.inputs)
            if (arg.present)
                for (const auto& t : arg.tensors) w.bytes_read += static_cast<double>(t.bytes());
        const double outputs = static_cast<double>(s.m * s.n);
        const double weights = static_cast<double>(s.k * s.n);
        w.bytes_written = outputs * static_cast<double>(dtype_size(s.dtype));
        // Dequantization per weight element: int8 -> compute type, the offset add, the scale
        // multiply (formula-literal count per weight element: cast 1, add 1, mul 1); per output
        // element 2K for the product and 1 for the bias.
        w.add_vector(OpClass::cast, DType::f32, weights);
        if (s.offset) w.add_vector(OpClass::add, DType::f32, weights);
        w.add_vector(OpClass::mul, DType::f32, weights);
        if (s.bias) w.add_vector(OpClass::add, DType::f32, outputs);
        w.add_vector_io(s.dtype, outputs + static_cast<double>(s.m * s.k));
        Contraction c;
        c.dtype = s.dtype;
        c.out_dtype = s.dtype;
        c.m = s.m;
        c.n = s.n;
        c.k = s.k;
        c.vector_ok = s.m < 16;
        w.contractions.push_back(c);
        // Where the cube path is the one that counts (16 rows and more), the dequantized
        // weight crosses from the vector stage to the matrix stage (through global memory on
        // the Ascend 910B, whose cube cannot read int8 weights against fp16 activations).
        // Below 16 rows the vector path needs no crossing, and charging the cube path for it
        // there would not change the bound.
        if (!c.vector_ok) w.cube_vector_bytes = weights * static_cast<double>(dtype_size(s.dtype));
        w.parallel_items = std::max(1.0, std::ceil(static_cast<double>(s.m) / 16) * std::ceil(static_cast<double>(s.n) / 16));
        w.innermost = s.k;
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const double total = static_cast<double>(d.target_elements);
        const bool offset = sampler.cycle(std::vector<int>{1, 1, 0, 1, 1}) != 0;
        const bool bias = sampler.cycle(std::vector<int>{1, 0, 1}) != 0;
        const bool row_vectors = sampler.cycle(std::vector<int>{0, 0, 1, 0}) != 0;  // [1, N] instead of [N]
        // Decode-like rows: M from 1 to 128 (the reference's), within the MAC cap.
        const double m_hi = std::clamp(cpu_case_mac_cap / total, 1.0, 128.0);
        auto m = static_cast<std::int64_t>(std::llround(log_uniform(sampler, 1.0, m_hi)));
        const double k_hi = std::clamp(total / (static_cast<double>(m) + 64), 16.0, 16384.0);
        const std::int64_t k = matmul_extent(sampler, log_uniform(sampler, std::min(256.0, k_hi), k_hi), 16, 32768,
                                             d.aligned, d.dtype);
        // weight [K, N] is int8: aligned N is a multiple of 512.
        const double n_target = std::max(16.0, total / static_cast<double>(k) - static_cast<double>(m));
        const std::int64_t n = matmul_extent(sampler, n_target, 16, 32768, d.aligned, DType::i8);
        // Rounding K and N to the alignment unit can inflate the product: the cap holds anyway.
        m = std::clamp<std::int64_t>(static_cast<std::int64_t>(cpu_case_mac_cap / static_cast<double>(k * n)), 1, m);

        // x takes the draw's range (special values included). The int8 weight covers its full
        // range except in the zero group, where it is 0 too; scales and offsets stay in the
        // reference's ranges, the scale smaller where typical results would exceed what the
        // half-precision output resolves after fp32 accumulation (typical_result_cap).
        const auto& r = d.range;
        const bool special = std::isnan(r.lo) || std::isinf(r.lo) || std::isinf(r.hi);
        const ValueRange finite_part = special ? ValueRange{-1, 1} : r;
        ValueRange scale{0.001, 0.1};
        if (finite_part.lo != finite_part.hi) {
            // W' = weight x scale: the int8 weight's mean -0.5 and rms 74 times the scale's.
            const ValueMoments s = uniform_moments(scale);
            const double typical = typical_dot(uniform_moments(finite_part), {-0.5 * s.mean, 74 * s.rms}, k);
            if (const double shrink = range_shrink(typical, typical_result_cap(d.dtype, k)); shrink < 1)
                scale = scaled_range(scale, shrink);
        }
        auto set = [&](std::size_t index, DType dtype, Shape shape, ValueRange range) {
            CaseInput& in = out.inputs.at(index);
            in.present = true;
            in.dtype = dtype;
            in.shapes = {std::move(shape)};
            in.range = range;
        };
        const Shape column = row_vectors ? Shape{1, n} : Shape{n};
        set(0, d.dtype, Shape{m, k}, r);
        set(1, DType::i8, Shape{k, n}, r.lo == 0 && r.hi == 0 ? ValueRange{0, 0} : ValueRange{-128, 127});
        set(2, d.dtype, column, scale);
        out.inputs.at(3).present = out.inputs.at(4).present = false;
        if (offset) set(3, d.dtype, column, ValueRange{-0.1, 0.1});
        if (bias) set(4, d.dtype == DType::f16 ? DType::f16 : DType::f32, column, ValueRange{-0.1, 0.1});
    }

    // fp16 keeps its limit (with the smaller scale above, x . W' stays in range); bf16's
    // would overflow fp32 accumulators, so its boundary is +-1e16 (far outside fp16).
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e16, 1e16};
    }
};

HB_REGISTER_OPERATOR(WeightQuantBatchMatmulOp)

}  // namespace hb
