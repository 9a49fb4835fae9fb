// quant_matmul(x1, x2, scale, offset?, pertoken_scale?, bias?, output_dtype): the int8
// matmul with a dequantizing epilogue (operators-l3-l4.md). x1 int8 [..., m, k] and x2 int8
// [..., k, n] (2 to 6 dims, batch dims broadcast); acc = x1 . x2 exactly in integers; an
// int32 bias [n] / [1, n] / [batch, 1, n] is added to acc before scaling; then
//   y = acc * scale  (+ offset)  (* pertoken_scale[row])  (+ floating bias)
// with scale [t] float32 or bfloat16 and offset [t] float32 (t = 1 per tensor, n per
// channel), pertoken_scale [m] float32, the floating bias float16, bfloat16 or float32.
// The offset is added before the per-token scale, so it is scaled too (the reference's
// order). out has x1 and x2's broadcast batch dims and [m, n], in output_dtype
// ("float16", the default when it is none, or "bfloat16"); the golden rounds to it itself.
// Golden: acc through OpenBLAS dgemm, exact (every partial sum of int8 products is an
// integer below 2^53), the epilogue in fp64. Same-precision reference: the same exact acc,
// the epilogue in fp32 (what a CPU framework's int32-accumulating kernel does), rounded
// to output_dtype. NaN or infinite scales, offsets and biases propagate by IEEE rules.
// No input hook: the generator draws scales in the reference's [0.001, 0.01] unless a case
// tests special values there, and the operator is defined for any value.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/broadcast.hpp"
#include "ops/dgemm.hpp"
#include "ops/matmul_sampling.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

enum class BiasKind { none, int32, floating };

struct QuantShape {
    std::int64_t m = 0, k = 0, n = 0;
    Shape x1_batch, x2_batch, out_batch;
    std::int64_t batch = 1;  // output batch entries
    std::int64_t scale_count = 1, offset_count = 0;
    bool pertoken = false;
    BiasKind bias = BiasKind::none;
    std::int64_t bias_batch = 1;  // bias [batch, 1, n]: one row per output batch entry
    DType out_dtype = DType::f16;
};

DType output_dtype_of(const Problem& p) {
    const AttrValue& a = p.attr("output_dtype");
    if (a.type == AttrType::none) return DType::f16;
    if (a.type != AttrType::s)
        throw Error(p.context() + "output_dtype must be a string: \"float16\" or \"bfloat16\"");
    if (a.s == "float16") return DType::f16;
    if (a.s == "bfloat16") return DType::bf16;
    throw Error(p.context() + "output_dtype is \"" + a.s + "\"; expected \"float16\" or \"bfloat16\"");
}

QuantShape quant_shape(const Problem& p) {
    const std::string where = p.context();
    const TensorSpec& x1 = p.input("x1").tensors.at(0);
    const TensorSpec& x2 = p.input("x2").tensors.at(0);
    if (x1.dtype != DType::i8 || x2.dtype != DType::i8)
        throw Error(where + "x1 is " + std::string(dtype_name(x1.dtype)) + " and x2 " + std::string(dtype_name(x2.dtype)) +
                    "; both must be int8");
    for (const auto* t : {&x1, &x2})
        if (t->shape.size() < 2 || t->shape.size() > 6)
            throw Error(where + (t == &x1 ? "x1" : "x2") + " has shape " + shape_to_string(t->shape) +
                        "; expected 2 to 6 dims ([..., m, k] and [..., k, n])");
    QuantShape s;
    s.m = x1.shape[x1.shape.size() - 2];
    s.k = x1.shape.back();
    s.n = x2.shape.back();
    const std::int64_t k2 = x2.shape[x2.shape.size() - 2];
    if (k2 != s.k)
        throw Error(where + "x1 " + shape_to_string(x1.shape) + " has k = " + std::to_string(s.k) + " but x2 " +
                    shape_to_string(x2.shape) + " has k = " + std::to_string(k2) + " (its second-to-last dim)");
    if (s.m < 1 || s.k < 1 || s.n < 1)
        throw Error(where + "m, k and n must be at least 1 (x1 " + shape_to_string(x1.shape) + ", x2 " +
                    shape_to_string(x2.shape) + ")");
    s.x1_batch.assign(x1.shape.begin(), x1.shape.end() - 2);
    s.x2_batch.assign(x2.shape.begin(), x2.shape.end() - 2);
    s.out_batch = broadcast_shapes(s.x1_batch, s.x2_batch, where + "the batch dims of x1 and x2: ");
    s.batch = numel(s.out_batch);
    if (s.batch < 1) throw Error(where + "a batch dim of x1 " + shape_to_string(x1.shape) + " or x2 is 0");

    const TensorSpec& scale = p.input("scale").tensors.at(0);
    if (scale.dtype != DType::f32 && scale.dtype != DType::bf16)
        throw Error(where + "scale is " + std::string(dtype_name(scale.dtype)) + "; expected float32 or bfloat16");
    if (scale.shape.size() != 1 || (scale.shape[0] != 1 && scale.shape[0] != s.n))
        throw Error(where + "scale has shape " + shape_to_string(scale.shape) + "; expected [1] (per tensor) or [n] = [" +
                    std::to_string(s.n) + "] (per channel)");
    s.scale_count = scale.shape[0];
    if (const auto& offset = p.input("offset"); offset.present) {
        const TensorSpec& o = offset.tensors.at(0);
        if (o.dtype != DType::f32)
            throw Error(where + "offset is " + std::string(dtype_name(o.dtype)) + "; expected float32");
        if (o.shape.size() != 1 || (o.shape[0] != 1 && o.shape[0] != s.n))
            throw Error(where + "offset has shape " + shape_to_string(o.shape) + "; expected [1] or [n] = [" +
                        std::to_string(s.n) + "]");
        s.offset_count = o.shape[0];
    }
    if (const auto& pt = p.input("pertoken_scale"); pt.present) {
        const TensorSpec& t = pt.tensors.at(0);
        if (t.dtype != DType::f32)
            throw Error(where + "pertoken_scale is " + std::string(dtype_name(t.dtype)) + "; expected float32");
        if (t.shape != Shape{s.m})
            throw Error(where + "pertoken_scale has shape " + shape_to_string(t.shape) + "; expected [m] = [" +
                        std::to_string(s.m) + "]");
        s.pertoken = true;
    }
    if (const auto& bias = p.input("bias"); bias.present) {
        const TensorSpec& b = bias.tensors.at(0);
        if (b.dtype == DType::i32) s.bias = BiasKind::int32;
        else if (b.dtype == DType::f16 || b.dtype == DType::bf16 || b.dtype == DType::f32) s.bias = BiasKind::floating;
        else
            throw Error(where + "bias is " + std::string(dtype_name(b.dtype)) + "; expected int32, float16, bfloat16 or float32");
        const bool row = b.shape == Shape{s.n} || b.shape == Shape{1, s.n};
        const bool batched = s.out_batch.size() == 1 && b.shape == Shape{s.out_batch[0], 1, s.n};
        if (!row && !batched)
            throw Error(where + "bias has shape " + shape_to_string(b.shape) + "; expected [n], [1, n] or, for a 3-dim output, [batch, 1, n] (n = " +
                        std::to_string(s.n) + ")");
        s.bias_batch = batched ? s.out_batch[0] : 1;
    }
    s.out_dtype = output_dtype_of(p);
    return s;
}

// acc[b, i, j] = sum_k x1 . x2 for every output batch entry b, exact in fp64.
std::vector<double> exact_accumulators(const QuantShape& s, const std::vector<double>& x1, const std::vector<double>& x2) {
    std::vector<double> acc(static_cast<std::size_t>(s.batch * s.m * s.n));
    const BroadcastPlan plan(s.x1_batch, s.x2_batch);
    for (std::int64_t r = 0; r < plan.rows(); ++r) {
        std::int64_t a, b;
        plan.row_offsets(r, a, b);
        for (std::int64_t i = 0; i < plan.row_length(); ++i) {
            const std::int64_t out = r * plan.row_length() + i;
            dgemm(false, false, s.m, s.n, s.k, 1.0, x1.data() + (a + i * plan.inner_stride_a()) * s.m * s.k, s.k,
                  x2.data() + (b + i * plan.inner_stride_b()) * s.k * s.n, s.n, 0.0, acc.data() + out * s.m * s.n, s.n);
        }
    }
    return acc;
}

// The epilogue in T (fp64 for the golden, fp32 for the same-precision reference), in the
// reference's order, rounded to the output dtype.
template <typename T>
void epilogue(const QuantShape& s, const std::vector<double>& acc, const ValueArgs<double>& in, std::vector<double>& out) {
    const std::vector<double>& scale = in[2].one().v;
    const std::vector<double>* offset = in[3].present ? &in[3].one().v : nullptr;
    const std::vector<double>* pertoken = in[4].present ? &in[4].one().v : nullptr;
    const std::vector<double>* bias = in[5].present ? &in[5].one().v : nullptr;
    for (std::int64_t b = 0; b < s.batch; ++b)
        for (std::int64_t i = 0; i < s.m; ++i)
            for (std::int64_t j = 0; j < s.n; ++j) {
                const std::size_t at = static_cast<std::size_t>((b * s.m + i) * s.n + j);
                const std::size_t bias_at = static_cast<std::size_t>((s.bias_batch > 1 ? b * s.n : 0) + j);
                double integer = acc[at];
                if (s.bias == BiasKind::int32) integer += (*bias)[bias_at];  // exact: int32 range
                T y = static_cast<T>(integer) * static_cast<T>(scale[static_cast<std::size_t>(s.scale_count > 1 ? j : 0)]);
                if (offset) y += static_cast<T>((*offset)[static_cast<std::size_t>(s.offset_count > 1 ? j : 0)]);
                if (pertoken) y *= static_cast<T>((*pertoken)[static_cast<std::size_t>(i)]);
                if (s.bias == BiasKind::floating) y += static_cast<T>((*bias)[bias_at]);
                out[at] = static_cast<double>(y);
            }
    round_values_to_dtype(out, s.out_dtype);
}

}  // namespace

class QuantMatmulOp final : public Operator {
  public:
    std::string name() const override { return "quant_matmul"; }
    int level() const override { return 3; }
    std::string baseline_description() const override {
        return "oneDNN int8 matmul (s8 x s8 -> s32 over every batch entry, brgemm: AMX or VNNI where present) and "
               "one threaded C++ pass for the epilogue (int32 bias, scale, offset, per-token scale, floating bias, "
               "rounding to fp16/bf16), the split a framework's quantized linear makes: "
               "oneDNN 2.6's int8 matmul has no f16 destination, and its per-channel output scales or per-token "
               "binary post-op drop it to the gemm:jit or ref_int8 kernels. Without VNNI, oneDNN's s8 x s8 kernels "
               "saturate 16-bit pair sums, so there x1 and x2 are widened to fp32 for its f32 matmul";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const QuantShape s = quant_shape(p);
        Shape shape = s.out_batch;
        shape.push_back(s.m);
        shape.push_back(s.n);
        ArgSpec out;
        out.name = "out";
        out.tensors.push_back(TensorSpec{s.out_dtype, shape});
        return {out};
    }

    void golden(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const QuantShape s = quant_shape(p);
        epilogue<double>(s, exact_accumulators(s, in[0].one().v, in[1].one().v), in, out[0].one().v);
    }

    void same_precision(const Problem& p, const ValueArgs<double>& in, ValueArgs<double>& out) const override {
        const QuantShape s = quant_shape(p);
        epilogue<float>(s, exact_accumulators(s, in[0].one().v, in[1].one().v), in, out[0].one().v);
    }

    WorkModel work(const Problem& p) const override {
        const QuantShape s = quant_shape(p);
        WorkModel w;
        for (const auto& arg : p.inputs)
            if (arg.present)
                for (const auto& t : arg.tensors) w.bytes_read += static_cast<double>(t.bytes());
        const double outputs = static_cast<double>(s.batch * s.m * s.n);
        w.bytes_written = outputs * static_cast<double>(dtype_size(s.out_dtype));
        Contraction c;
        c.dtype = DType::i8;
        c.out_dtype = s.out_dtype;
        // A weight shared by every batch entry (x2 without batch dims) is one taller product.
        const bool shared_weight = numel(s.x2_batch) == 1;
        c.batch = shared_weight ? 1 : static_cast<double>(s.batch);
        c.m = shared_weight ? s.batch * s.m : s.m;
        c.n = s.n;
        c.k = s.k;
        c.vector_ok = c.m < 16;
        w.contractions.push_back(c);
        // The epilogue per output element, in fp32: the int32 -> fp32 conversion, the scale,
        // the offset, the per-token scale, the bias (an integer add before the conversion
        // for int32) and the rounding to the output dtype. Formula-literal count per output
        // element (issue 15's convention): 2k for the product, 1 for the scale, 1 each for
        // offset, per-token scale and bias when present, 1 for the cast the golden does.
        w.add_vector(OpClass::cast, DType::f32, 2 * outputs);
        w.add_vector(OpClass::mul, DType::f32, outputs * (1 + (s.pertoken ? 1 : 0)));
        const int adds = (s.offset_count > 0 ? 1 : 0) + (s.bias != BiasKind::none ? 1 : 0);
        if (adds) w.add_vector(OpClass::add, DType::f32, adds * outputs);
        w.add_vector_io(s.out_dtype, outputs);
        w.parallel_items = std::max(1.0, c.batch * std::ceil(static_cast<double>(c.m) / 16) *
                                             std::ceil(static_cast<double>(c.n) / 16));
        w.innermost = s.k;
        return w;
    }

    // Aligned k (x1's innermost) and n (x2's) are multiples of 512 int8 elements.
    std::int64_t min_aligned_elements(DType) const override { return 512 * 512 + 512; }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const double total = static_cast<double>(d.target_elements);
        const bool bf16_out = sampler.cycle(std::vector<int>{0, 1}) != 0;
        // Batch layouts: x1 [m,k] x2 [k,n]; [B,m,k] [B,k,n]; [B,m,k] [k,n]; [A,B,m,k] [B,k,n];
        // [m,k] [B,k,n].
        const int layout = sampler.cycle(std::vector<int>{0, 1, 0, 2, 0, 3, 4});
        const DType scale_dtype = sampler.cycle(std::vector<DType>{DType::f32, DType::f32, DType::bf16});
        bool per_tensor = sampler.cycle(std::vector<int>{0, 0, 1, 0}) != 0;
        const bool offset = sampler.cycle(std::vector<int>{0, 0, 1, 0, 0}) != 0;
        bool pertoken = sampler.cycle(std::vector<int>{0, 1, 0}) != 0;
        // bias: none, int32, float32, none, bfloat16, float16.
        const int bias_kind = sampler.cycle(std::vector<int>{0, 1, 2, 0, 3, 4});
        // Aligned cases: every input's innermost dim is a multiple of 512 bytes, which a [1]
        // scale or an [m] per-token scale of odd m can never be.
        if (d.aligned) per_tensor = pertoken = false;

        const std::int64_t batch = layout == 0 ? 1 : (layout == 3 ? 3 : sampler.cycle(std::vector<std::int64_t>{2, 4, 3, 8}));
        const std::int64_t outer = layout == 3 ? 2 : 1;
        const double x_mats = static_cast<double>(layout == 4 ? 1 : batch * outer);
        const double w_mats = static_cast<double>(layout == 2 ? 1 : batch);
        const double out_mats = static_cast<double>(batch * outer);
        // MACs = out_mats * m * k * n <= cap, with k * n <= total / w_mats.
        const double m_hi = std::clamp(cpu_case_mac_cap * w_mats / (out_mats * total), 1.0, 4096.0);
        auto m = static_cast<std::int64_t>(std::llround(log_uniform(sampler, 1.0, m_hi)));
        const double k_hi = std::clamp(total / (x_mats * static_cast<double>(m) + w_mats * 32), 16.0, 8192.0);
        const std::int64_t k = matmul_extent(sampler, log_uniform(sampler, std::min(64.0, k_hi), k_hi), 16, 16384,
                                             d.aligned, DType::i8);
        const double n_target = std::max(16.0, (total / static_cast<double>(k) - x_mats * static_cast<double>(m)) / w_mats);
        const std::int64_t n = matmul_extent(sampler, n_target, 16, 32768, d.aligned, DType::i8);
        // Rounding k and n to the alignment unit can inflate the product: the cap holds anyway.
        m = std::clamp<std::int64_t>(static_cast<std::int64_t>(cpu_case_mac_cap / (out_mats * static_cast<double>(k * n))), 1, m);

        Shape x1{m, k}, x2{k, n};
        if (layout == 1 || layout == 2) x1.insert(x1.begin(), batch);
        if (layout == 1 || layout == 3 || layout == 4) x2.insert(x2.begin(), batch);
        if (layout == 3) x1.insert(x1.begin(), {outer, batch});
        const std::int64_t t = per_tensor ? 1 : n;

        // The range group goes where it means something: int8 operands take integer ranges
        // (the type boundary is the full int8 range, the zero group a zero x1); NaN and
        // infinity go into the scale, the only input every case has that can hold them.
        const auto& r = d.range;
        const bool special = std::isnan(r.lo) || std::isinf(r.lo) || std::isinf(r.hi);
        ValueRange operand{-128, 127};
        if (!special && r.lo != r.hi && std::max(std::fabs(r.lo), std::fabs(r.hi)) < 64)
            operand = ValueRange{std::min(-1.0, std::floor(r.lo)), std::max(1.0, std::ceil(r.hi))};
        const ValueRange scale_range = special ? r : ValueRange{0.001, 0.01};

        auto set = [&](std::size_t index, DType dtype, Shape shape, ValueRange range) {
            CaseInput& in = out.inputs.at(index);
            in.present = true;
            in.dtype = dtype;
            in.shapes = {std::move(shape)};
            in.range = range;
        };
        set(0, DType::i8, x1, r.lo == 0 && r.hi == 0 ? ValueRange{0, 0} : operand);
        set(1, DType::i8, x2, operand);
        set(2, scale_dtype, Shape{t}, scale_range);
        out.inputs.at(3).present = out.inputs.at(4).present = out.inputs.at(5).present = false;
        if (offset) set(3, DType::f32, Shape{t}, ValueRange{-1, 1});
        if (pertoken) set(4, DType::f32, Shape{m}, ValueRange{0.001, 0.01});
        if (bias_kind != 0) {
            const DType bias_dtype = bias_kind == 1 ? DType::i32 : bias_kind == 2 ? DType::f32
                                                                 : bias_kind == 3 ? DType::bf16 : DType::f16;
            // [n], [1, n], or [batch, 1, n] for a 3-dim output.
            const int bias_layout = sampler.cycle(std::vector<int>{0, 1, 2});
            Shape shape{n};
            if (bias_layout == 1) shape = {1, n};
            if (bias_layout == 2 && (layout == 1 || layout == 2)) shape = {batch, 1, n};
            set(5, bias_dtype, shape, bias_dtype == DType::i32 ? ValueRange{-100, 100} : ValueRange{-1, 1});
        }
        out.attrs = {{"output_dtype", AttrValue::of_string(bf16_out ? "bfloat16" : "float16")}};
    }
};

HB_REGISTER_OPERATOR(QuantMatmulOp)

}  // namespace hb
