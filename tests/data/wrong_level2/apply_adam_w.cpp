// WRONG apply_adam_w (a deliberate bug for tests/integration/test_wrong_level2_elementwise.cpp):
// the bias corrections 1 - beta^step are left out, u = m'/(sqrt(v')+eps), a classic AdamW
// slip that matters most at early steps. Otherwise the reference kernel.
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

struct Step {
    float lr, beta1, beta2, weight_decay, epsilon, correction1, correction2;
    bool maximize;
};

template <typename Type>
void adam_w_all(const hb_tensor* const in[4], const hb_tensor& y, const Step& s, int threads) {
    using S = typename Type::Storage;
    const auto* var = static_cast<const S*>(in[0]->data);
    const auto* grad = static_cast<const S*>(in[1]->data);
    const auto* m = static_cast<const S*>(in[2]->data);
    const auto* v = static_cast<const S*>(in[3]->data);
    auto* out = static_cast<S*>(y.data);
    const int64_t n = hb_numel(&y);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 16384)
    for (int64_t i = 0; i < n; ++i) {
        const float x = Type::load(var[i]), g = Type::load(grad[i]);
        const float m_new = s.beta1 * Type::load(m[i]) + (1.0f - s.beta1) * g;
        const float v_new = s.beta2 * Type::load(v[i]) + (1.0f - s.beta2) * g * g;
        float u = m_new / (std::sqrt(v_new) + s.epsilon);
        if (s.weight_decay != 0.0f) u += x * s.weight_decay;
        out[i] = Type::store(s.maximize ? x + s.lr * u : x - s.lr * u);
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const char* names[4] = {"var", "grad", "m", "v"};
    const hb_tensor* in[4];
    const hb_arg* y_arg = hb_output(call, "y");
    if (!y_arg || y_arg->count != 1) return hb_fail(call, 1, "apply_adam_w: expected output tensor y");
    const hb_tensor& y = y_arg->tensors[0];
    for (int k = 0; k < 4; ++k) {
        const hb_arg* a = hb_input(call, names[k]);
        if (!a || a->count != 1) return hb_fail(call, 1, "apply_adam_w: expected inputs var, grad, m and v");
        in[k] = &a->tensors[0];
        if (in[k]->dtype != y.dtype || hb_numel(in[k]) != hb_numel(&y) || !hb_is_contiguous(in[k]))
            return hb_fail(call, 2, "apply_adam_w: inputs must be contiguous with y's dtype and size");
    }
    if (!hb_is_contiguous(&y)) return hb_fail(call, 3, "apply_adam_w: only contiguous tensors are supported");

    const double beta1 = hb_attr_float(call, "beta1", 0.9), beta2 = hb_attr_float(call, "beta2", 0.999);
    const double step = static_cast<double>(hb_attr_int(call, "step", 1));
    const Step s{static_cast<float>(hb_attr_float(call, "lr", 1e-3)),
                 static_cast<float>(beta1),
                 static_cast<float>(beta2),
                 static_cast<float>(hb_attr_float(call, "weight_decay", 0.0)),
                 static_cast<float>(hb_attr_float(call, "epsilon", 1e-8)),
                 static_cast<float>(1.0 - std::pow(beta1, step)),
                 static_cast<float>(1.0 - std::pow(beta2, step)),
                 hb_attr_int(call, "maximize", 0) != 0};
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (y.dtype) {
        case HB_FLOAT32: adam_w_all<Fp32>(in, y, s, threads); return 0;
        case HB_FLOAT16: adam_w_all<Fp16>(in, y, s, threads); return 0;
        case HB_BFLOAT16: adam_w_all<Bf16>(in, y, s, threads); return 0;
        default: return hb_fail(call, 2, "apply_adam_w: dtype must be float32, float16 or bfloat16");
    }
}
