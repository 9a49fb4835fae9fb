// Baseline for apply_adam_w: a threaded C++ loop, one pass over var, grad, m and v in fp32
// (fp16/bf16 widened on load, y rounded once), the way a framework's fused CPU optimizer
// step runs. oneDNN has no optimizer primitive; composing it from eltwise and binary
// primitives would take about ten passes over memory, a baseline no framework ships.
#include <cmath>
#include <cstdint>
#include <string>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

struct AdamConstants {
    float lr, beta1, beta2, weight_decay, epsilon, inv_correction1, inv_correction2;
    bool maximize;
};

template <typename Element>
void adam_w_loop(const hb_tensor* in[4], const hb_tensor& y, const AdamConstants& c) {
    const auto* var = static_cast<const Element*>(in[0]->data);
    const auto* grad = static_cast<const Element*>(in[1]->data);
    const auto* m = static_cast<const Element*>(in[2]->data);
    const auto* v = static_cast<const Element*>(in[3]->data);
    auto* out = static_cast<Element*>(y.data);
    const std::int64_t n = hb_numel(&y);
    const float sign = c.maximize ? 1.0f : -1.0f;
    const bool decay = c.weight_decay != 0.0f;
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        const float x = to_f32(var[i]), g = to_f32(grad[i]);
        const float m_new = c.beta1 * to_f32(m[i]) + (1.0f - c.beta1) * g;
        const float v_new = c.beta2 * to_f32(v[i]) + (1.0f - c.beta2) * g * g;
        float u = (m_new * c.inv_correction1) / (std::sqrt(v_new * c.inv_correction2) + c.epsilon);
        if (decay) u += x * c.weight_decay;
        out[i] = from_f32<Element>(x + sign * c.lr * u);
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
        if (!a || a->count != 1) return hb_fail(call, 1, "apply_adam_w: expected input tensors var, grad, m, v");
        in[k] = &a->tensors[0];
        if (in[k]->dtype != y.dtype || hb_numel(in[k]) != hb_numel(&y) || !hb_is_contiguous(in[k]))
            return hb_fail(call, 2, "apply_adam_w: inputs must be contiguous with y's dtype and size");
    }
    if (!hb_is_contiguous(&y)) return hb_fail(call, 2, "apply_adam_w: y must be contiguous");
    const double beta1 = hb_attr_float(call, "beta1", 0.9), beta2 = hb_attr_float(call, "beta2", 0.999);
    const double step = static_cast<double>(hb_attr_int(call, "step", 1));
    const AdamConstants c{static_cast<float>(hb_attr_float(call, "lr", 1e-3)),
                          static_cast<float>(beta1),
                          static_cast<float>(beta2),
                          static_cast<float>(hb_attr_float(call, "weight_decay", 0.0)),
                          static_cast<float>(hb_attr_float(call, "epsilon", 1e-8)),
                          static_cast<float>(1.0 / (1.0 - std::pow(beta1, step))),
                          static_cast<float>(1.0 / (1.0 - std::pow(beta2, step))),
                          hb_attr_int(call, "maximize", 0) != 0};
    const bool known = with_float_element(y.dtype, [&](auto element) {
        adam_w_loop<decltype(element)>(in, y, c);
    });
    return known ? 0 : hb_fail(call, 2, "apply_adam_w: dtype must be float32, float16 or bfloat16");
}
