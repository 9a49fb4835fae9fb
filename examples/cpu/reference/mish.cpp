// Reference mish: y = x * tanh(softplus(x)), softplus(x) = ln(1 + e^x).
// fp32 math for every dtype, one rounding to the output dtype.
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

// log1p keeps softplus accurate for x << 0, where e^x is tiny; for x > 88.7 e^x overflows
// to inf and tanh(inf) = 1 gives y = x, the right limit.
float mish(float x) {
    if (x == -INFINITY) return 0.0f;  // the limit; -inf * tanh(0) would give NaN
    return x * std::tanh(std::log1p(std::exp(x)));
}

template <typename Type>
void mish_all(const hb_tensor& x, const hb_tensor& y, int threads) {
    const auto* in = static_cast<const typename Type::Storage*>(x.data);
    auto* out = static_cast<typename Type::Storage*>(y.data);
    const int64_t n = hb_numel(&x);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) out[i] = Type::store(mish(Type::load(in[i])));
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "mish: expected one input tensor x and one output tensor y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "mish: y must have the dtype and element count of x");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "mish: only contiguous tensors are supported");

    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: mish_all<Fp32>(x, y, threads); return 0;
        case HB_FLOAT16: mish_all<Fp16>(x, y, threads); return 0;
        case HB_BFLOAT16: mish_all<Bf16>(x, y, threads); return 0;
        default: return hb_fail(call, 2, "mish: x must be float32, float16 or bfloat16");
    }
}
