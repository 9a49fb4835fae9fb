// Reference sigmoid: y = 1 / (1 + e^-x) for float32, float16 and bfloat16.
// Plain on purpose: one OpenMP loop, std::exp in fp32, one rounding to the output dtype.
#include <omp.h>

#include <cmath>
#include <cstdint>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

// How each dtype is stored, and its conversions to and from the fp32 the math runs in.
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

// Forking threads costs more than it saves below this many elements.
constexpr int64_t kParallelMinElements = 32768;

// e^-x overflows to inf for x < -88.7, which gives 0, the right limit; NaN stays NaN.
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

template <typename Type>
void sigmoid_all(const hb_tensor& x, const hb_tensor& y, int threads) {
    const auto* in = static_cast<const typename Type::Storage*>(x.data);
    auto* out = static_cast<typename Type::Storage*>(y.data);
    const int64_t n = hb_numel(&x);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) out[i] = Type::store(sigmoid(Type::load(in[i])));
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "sigmoid: expected one input tensor x and one output tensor y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "sigmoid: y must have the dtype and element count of x");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "sigmoid: only contiguous tensors are supported");

    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: sigmoid_all<Fp32>(x, y, threads); return 0;
        case HB_FLOAT16: sigmoid_all<Fp16>(x, y, threads); return 0;
        case HB_BFLOAT16: sigmoid_all<Bf16>(x, y, threads); return 0;
        default: return hb_fail(call, 2, "sigmoid: x must be float32, float16 or bfloat16");
    }
}
