// Reference softmax: y = e^(x - max) / sum(e^(x - max)) along `dim`, for float32, float16
// and bfloat16, computing in fp32 and rounding once. A contiguous x is [outer, size, inner]
// around dim; each job takes one outer index and a block of up to kBlock neighbouring inner
// positions, so the three passes (max, sum, scale) walk rows of contiguous memory. A NaN in
// a slice becomes its max and turns the whole slice NaN, as in torch.
#include <omp.h>

#include <algorithm>
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

constexpr int64_t kBlock = 64;

template <typename Type>
void softmax_all(const hb_tensor& x, const hb_tensor& y, int64_t outer, int64_t size, int64_t inner, int threads) {
    const auto* in = static_cast<const typename Type::Storage*>(x.data);
    auto* out = static_cast<typename Type::Storage*>(y.data);
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    const int64_t jobs = outer * blocks;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (jobs > 1 && outer * size * inner >= 32768)
    for (int64_t job = 0; job < jobs; ++job) {
        const int64_t o = job / blocks;
        const int64_t i0 = (job % blocks) * kBlock;
        const int64_t width = std::min(kBlock, inner - i0);
        const int64_t base = o * size * inner + i0;
        float max[kBlock], sum[kBlock];
        for (int64_t i = 0; i < width; ++i) max[i] = -INFINITY, sum[i] = 0.0f;
        for (int64_t k = 0; k < size; ++k)
            for (int64_t i = 0; i < width; ++i) {
                const float v = Type::load(in[base + k * inner + i]);
                if (v != v || v > max[i]) max[i] = v;  // once NaN, the max stays NaN
            }
        for (int64_t k = 0; k < size; ++k)
            for (int64_t i = 0; i < width; ++i) sum[i] += std::exp(Type::load(in[base + k * inner + i]) - max[i]);
        for (int64_t i = 0; i < width; ++i) sum[i] = 1.0f / sum[i];
        for (int64_t k = 0; k < size; ++k)
            for (int64_t i = 0; i < width; ++i) {
                const int64_t at = base + k * inner + i;
                out[at] = Type::store(std::exp(Type::load(in[at]) - max[i]) * sum[i]);
            }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "softmax: expected one input tensor `x` and one output tensor `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "softmax: only contiguous tensors are supported");
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "softmax: y must have x's dtype and shape");
    int64_t dim = hb_attr_int(call, "dim", -1);
    if (dim < 0) dim += x.rank;
    if (x.rank < 1 || dim < 0 || dim >= x.rank) return hb_fail(call, 4, "softmax: dim is out of range for x's rank");

    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < dim; ++d) outer *= x.shape[d];
    for (int32_t d = static_cast<int32_t>(dim) + 1; d < x.rank; ++d) inner *= x.shape[d];
    const int64_t size = x.shape[dim];
    if (outer * size * inner == 0) return 0;

    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: softmax_all<Fp32>(x, y, outer, size, inner, threads); return 0;
        case HB_FLOAT16: softmax_all<Fp16>(x, y, outer, size, inner, threads); return 0;
        case HB_BFLOAT16: softmax_all<Bf16>(x, y, outer, size, inner, threads); return 0;
        default: return hb_fail(call, 2, "softmax: x must be float32, float16 or bfloat16");
    }
}
