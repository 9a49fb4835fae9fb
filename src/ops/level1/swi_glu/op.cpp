// swi_glu(input, dim=-1): split input into halves a, b along dim; output = silu(a) * b with
// silu(a) = a / (1 + e^-a). The output has the input's shape with dim halved.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"
#include "ops/vector_math.hpp"

namespace hb {

namespace {

// The input viewed as [outer, 2, half, inner] around the split dimension.
struct SplitView {
    std::int64_t outer = 1, half = 1, inner = 1;
};

SplitView split_view(const Shape& shape, int axis) {
    SplitView v;
    for (int d = 0; d < axis; ++d) v.outer *= shape[static_cast<std::size_t>(d)];
    v.half = shape[static_cast<std::size_t>(axis)] / 2;
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) v.inner *= shape[d];
    return v;
}

}  // namespace

class SwiGluOp final : public OperatorWithCompute<SwiGluOp> {
  public:
    std::string name() const override { return "swi_glu"; }
    int level() const override { return 1; }
    std::string baseline_description() const override {
        return "float32: oneDNN jit eltwise_swish on each contiguous first half then jit binary_mul with the "
               "second half, when the halves are at least 4096 elements long (oneDNN 2.6 runs strided views "
               "and eltwise binary post-ops only in ref:any); shorter halves and float16/bfloat16 (no f16/bf16 "
               "eltwise on AVX2): an OpenMP loop converting through fp32";
    }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const auto& x = p.input("input").tensors.at(0);
        if (x.shape.empty()) throw Error(name() + ": the input is 0-d; it needs a dimension to split");
        const int axis = normalize_dim(p.attr_int("dim"), x.shape.size(), name());
        const auto size = x.shape[static_cast<std::size_t>(axis)];
        if (size % 2 != 0)
            throw Error(name() + ": dim " + std::to_string(p.attr_int("dim")) + " of input shape " +
                        shape_to_string(x.shape) + " has odd size " + std::to_string(size) +
                        "; it must split into two equal halves");
        ArgSpec out;
        out.name = "output";
        Shape shape = x.shape;
        shape[static_cast<std::size_t>(axis)] = size / 2;
        out.tensors.push_back(TensorSpec{x.dtype, shape});
        return {out};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const auto& x = in[0].one();
        const int axis = normalize_dim(p.attr_int("dim"), x.spec.shape.size(), name());
        const SplitView v = split_view(x.spec.shape, axis);
        const std::int64_t half_block = v.half * v.inner;  // one half of one outer slice
        auto& y = out[0].one().v;
        for (std::int64_t o = 0; o < v.outer; ++o) {
            const T* a = x.v.data() + o * 2 * half_block;
            const T* b = a + half_block;
            T* dst = y.data() + o * half_block;
            // e^-a a block at a time (ops/vector_math.hpp), held in dst until silu * b replaces it.
            constexpr auto block = static_cast<std::int64_t>(kVectorMathBlock);
#pragma omp parallel for schedule(static) if (half_block >= 65536)
            for (std::int64_t begin = 0; begin < half_block; begin += block) {
                const std::int64_t end = std::min(half_block, begin + block);
                for (std::int64_t i = begin; i < end; ++i) dst[i] = -a[i];
                exp_in_place(dst + begin, static_cast<std::size_t>(end - begin));
                for (std::int64_t i = begin; i < end; ++i) {
                    // silu(-inf) is the limit -0, not the formula's -inf/inf = NaN
                    // (docs/methodology.md "Limits at infinity").
                    const T silu = a[i] == -std::numeric_limits<T>::infinity() ? -T(0) : a[i] / (T(1) + dst[i]);
                    dst[i] = silu * b[i];
                }
            }
        }
    }
    // 2: the golden's exp from libmvec (ops/vector_math.hpp), within 4 ulp of libm's.
    int golden_version() const override { return 2; }

    WorkModel work(const Problem& p) const override {
        const auto& x = p.input("input").tensors.at(0);
        const auto& y = p.outputs.at(0).tensors.at(0);
        const double n = static_cast<double>(y.numel());
        WorkModel w;
        w.bytes_read = static_cast<double>(x.bytes());
        w.bytes_written = static_cast<double>(y.bytes());
        w.add_vector(OpClass::exp, x.dtype, n);  // e^-a
        w.add_vector(OpClass::add, x.dtype, n);  // 1 + e^-a
        w.add_vector(OpClass::div, x.dtype, n);  // a / (1 + e^-a)
        w.add_vector(OpClass::mul, x.dtype, n);  // * b
        w.add_vector_io(x.dtype, static_cast<double>(x.numel()));  // both halves loaded
        w.add_vector_io(y.dtype, n);                                // the product stored
        // cann-bench (docs/hap.md): silu(a) * b = (a * sigmoid(a)) * b per output element: 2 mul
        // and sigmoid's 2 add, exp, div.
        add_formula(w, x.dtype, FormulaMath::elementwise, n,
                    {{OpClass::mul, 2}, {OpClass::add, 2}, {OpClass::exp, 1}, {OpClass::div, 1}});
        w.parallel_items = n;
        w.innermost = y.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        const int rank = sampler.pick_rank(1, 5);
        std::vector<std::int64_t> dims = {-1, 0};
        for (int k = 1; k + 1 < rank; ++k) dims.push_back(k);
        const std::int64_t dim = sampler.pick(dims);
        const int axis = dim < 0 ? rank - 1 : static_cast<int>(dim);
        // Splitting the innermost dim: an aligned case keeps both halves 512-byte aligned.
        const std::int64_t align_elements = 512 / static_cast<std::int64_t>(dtype_size(d.dtype));
        const std::int64_t inner_multiple = axis == rank - 1 ? (d.aligned ? 2 * align_elements : 2) : 1;
        Shape shape = sampler.shape(d.target_elements, rank, d.dtype, d.aligned, inner_multiple);
        auto& split = shape[static_cast<std::size_t>(axis)];
        if (split % 2 != 0) split += 1;
        out.inputs.at(0).shapes = {shape};
        out.attrs = {{"dim", AttrValue::of_int(dim)}};
    }

    // fp32/bf16 limits (+-3e38) would overflow every product a * b and test nothing but
    // infinities; +-88, the exp-type boundary, drives e^-a to the edge of fp32 instead.
    // fp16 keeps its own limit, where the fp16 product overflows but the fp32 silu does not.
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-88, 88};
    }
};

HB_REGISTER_OPERATOR(SwiGluOp)

}  // namespace hb
