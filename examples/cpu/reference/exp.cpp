// Reference exp: y = e^(scale*x + shift) when base <= 0 (base = -1 means e), otherwise
// y = base^(scale*x + shift) = e^((scale*x + shift) * ln(base)). fp32 math for every dtype.
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

struct ExpParams {
    float scale;
    float shift;
    float log_base;  // 1 for the natural base
};

template <typename Type>
void exp_all(const hb_tensor& x, const hb_tensor& y, ExpParams p, int threads) {
    const auto* in = static_cast<const typename Type::Storage*>(x.data);
    auto* out = static_cast<typename Type::Storage*>(y.data);
    const int64_t n = hb_numel(&x);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) {
        const float arg = (p.scale * Type::load(in[i]) + p.shift) * p.log_base;
        out[i] = Type::store(std::exp(arg));
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "exp: expected one input tensor x and one output tensor y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "exp: y must have the dtype and element count of x");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "exp: only contiguous tensors are supported");

    const double base = hb_attr_float(call, "base", -1.0);
    ExpParams p;
    p.scale = static_cast<float>(hb_attr_float(call, "scale", 1.0));
    p.shift = static_cast<float>(hb_attr_float(call, "shift", 0.0));
    p.log_base = base > 0.0 ? static_cast<float>(std::log(base)) : 1.0f;

    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: exp_all<Fp32>(x, y, p, threads); return 0;
        case HB_FLOAT16: exp_all<Fp16>(x, y, p, threads); return 0;
        case HB_BFLOAT16: exp_all<Bf16>(x, y, p, threads); return 0;
        default: return hb_fail(call, 2, "exp: x must be float32, float16 or bfloat16");
    }
}
