// Reference gelu: approximate="none": y = x * Phi(x) = 0.5 * x * erfc(-x / sqrt(2));
// approximate="tanh": y = 0.5 * x * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3).
// fp32 math for every dtype, one rounding to the output dtype.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>

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
constexpr float kSqrtHalf = 0.70710678118654752f;
constexpr float kSqrtTwoOverPi = 0.79788456080286536f;

// erfc rather than 1 + erf: 1 + erf(x/sqrt2) cancels to 0 in fp32 below x = -5.5, where
// gelu is still above 1e-8 and the precision gate would see a 100% error.
float gelu_erf(float x) {
    if (x == -INFINITY) return 0.0f;  // the limit; -inf * 0 would give NaN
    return 0.5f * x * std::erfc(-x * kSqrtHalf);
}

// 0.5 * (1 + tanh(u)) equals 1 / (1 + e^(-2u)); the second form does not cancel for u << 0.
float gelu_tanh(float x) {
    if (x == -INFINITY) return 0.0f;
    const float u = kSqrtTwoOverPi * (x + 0.044715f * x * x * x);
    return x / (1.0f + std::exp(-2.0f * u));
}

template <typename Type>
void gelu_all(const hb_tensor& x, const hb_tensor& y, bool tanh_form, int threads) {
    const auto* in = static_cast<const typename Type::Storage*>(x.data);
    auto* out = static_cast<typename Type::Storage*>(y.data);
    const int64_t n = hb_numel(&x);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) {
        const float v = Type::load(in[i]);
        out[i] = Type::store(tanh_form ? gelu_tanh(v) : gelu_erf(v));
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "gelu: expected one input tensor x and one output tensor y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "gelu: y must have the dtype and element count of x");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "gelu: only contiguous tensors are supported");

    const char* approximate = hb_attr_string(call, "approximate", "none");
    const bool tanh_form = std::strcmp(approximate, "tanh") == 0;
    if (!tanh_form && std::strcmp(approximate, "none") != 0)
        return hb_fail(call, 4, "gelu: approximate must be \"none\" or \"tanh\"");

    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: gelu_all<Fp32>(x, y, tanh_form, threads); return 0;
        case HB_FLOAT16: gelu_all<Fp16>(x, y, tanh_form, threads); return 0;
        case HB_BFLOAT16: gelu_all<Bf16>(x, y, tanh_form, threads); return 0;
        default: return hb_fail(call, 2, "gelu: x must be float32, float16 or bfloat16");
    }
}
