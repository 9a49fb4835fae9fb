// Reference swi_glu: split `input` into halves a, b along `dim`; output = silu(a) * b with
// silu(a) = a / (1 + e^-a). fp32 math for every dtype, one rounding to the output dtype.
#include <omp.h>

#include <cmath>
#include <cstdint>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

struct Fp32 {
    using Storage = float;
    static float load(float v) { return v; }
    static float store(float v) { return v; }
};
struct Fp16 {
    using Storage = uint16_t;
    static float load(uint16_t v) { return hb_f16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_f16(v); }
};
struct Bf16 {
    using Storage = uint16_t;
    static float load(uint16_t v) { return hb_bf16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_bf16(v); }
};

constexpr int64_t kParallelMinElements = 32768;

float silu(float a) {
    if (a == -INFINITY) return 0.0f;  // the limit; -inf / inf would give NaN
    return a / (1.0f + std::exp(-a));
}

// A contiguous input seen as [outer, 2 * half, inner]: for each outer index, a is the first
// half * inner elements and b the next half * inner, so each output row is one flat run.
template <typename Type>
void swi_glu_all(const hb_tensor& input, const hb_tensor& output, int64_t outer, int64_t run,
                 int threads) {
    const auto* in = static_cast<const typename Type::Storage*>(input.data);
    auto* out = static_cast<typename Type::Storage*>(output.data);
    const int64_t n = outer * run;
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) {
        const int64_t o = i / run;
        const int64_t k = i % run;
        const float a = Type::load(in[o * 2 * run + k]);
        const float b = Type::load(in[o * 2 * run + run + k]);
        out[i] = Type::store(silu(a) * b);
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* in_arg = hb_input(call, "input");
    const hb_arg* out_arg = hb_output(call, "output");
    if (!in_arg || !out_arg || in_arg->count != 1 || out_arg->count != 1)
        return hb_fail(call, 1, "swi_glu: expected one input tensor `input` and one output tensor `output`");
    const hb_tensor& input = in_arg->tensors[0];
    const hb_tensor& output = out_arg->tensors[0];
    if (!hb_is_contiguous(&input) || !hb_is_contiguous(&output))
        return hb_fail(call, 3, "swi_glu: only contiguous tensors are supported");

    int64_t dim = hb_attr_int(call, "dim", -1);
    if (dim < 0) dim += input.rank;
    if (input.rank < 1 || dim < 0 || dim >= input.rank)
        return hb_fail(call, 4, "swi_glu: dim is out of range for the input's rank");
    if (input.shape[dim] % 2 != 0)
        return hb_fail(call, 4, "swi_glu: the split dimension must have an even size");
    if (output.dtype != input.dtype || output.rank != input.rank)
        return hb_fail(call, 2, "swi_glu: output must have the dtype and rank of input");
    for (int32_t d = 0; d < input.rank; ++d) {
        const int64_t expected = d == dim ? input.shape[d] / 2 : input.shape[d];
        if (output.shape[d] != expected)
            return hb_fail(call, 2, "swi_glu: output must have input's shape with dim halved");
    }

    int64_t outer = 1;
    int64_t inner = 1;
    for (int32_t d = 0; d < dim; ++d) outer *= input.shape[d];
    for (int32_t d = static_cast<int32_t>(dim) + 1; d < input.rank; ++d) inner *= input.shape[d];
    const int64_t run = input.shape[dim] / 2 * inner;

    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (input.dtype) {
        case HB_FLOAT32: swi_glu_all<Fp32>(input, output, outer, run, threads); return 0;
        case HB_FLOAT16: swi_glu_all<Fp16>(input, output, outer, run, threads); return 0;
        case HB_BFLOAT16: swi_glu_all<Bf16>(input, output, outer, run, threads); return 0;
        default: return hb_fail(call, 2, "swi_glu: input must be float32, float16 or bfloat16");
    }
}
