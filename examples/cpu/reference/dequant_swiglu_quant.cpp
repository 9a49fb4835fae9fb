// Reference dequant_swiglu_quant: x [T, 2H] dequantized per row in fp32 (int32 x:
// d = (float(x) * weight_scale) * activation_scale[t]; float16/bfloat16 x: d = x), then
// s = SiLU(B) * A (activate_left false: B = d[:, H:] is activated) or SiLU(A) * B (true),
// with SiLU(t) = t / (1 + e^-t), times quant_scale[h] when given;
// scale = max(max|s| / 127, 1e-12) per row; y = clamp(round_half_even(s / scale), -128, 127).
// A NaN in |s| makes the scale NaN; a NaN quotient quantizes to 0.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

struct Inputs {
    const void* x = nullptr;
    hb_dtype dtype = HB_INT32;
    const float* weight_scale = nullptr;
    const float* activation_scale = nullptr;
    const float* quant_scale = nullptr;
};

float load(const Inputs& in, int64_t t, int64_t j, int64_t width) {
    const int64_t i = t * width + j;
    switch (in.dtype) {
        case HB_INT32:
            return (static_cast<float>(static_cast<const int32_t*>(in.x)[i]) * in.weight_scale[j]) *
                   in.activation_scale[t];
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(in.x)[i]);
        default: return hb_bf16_to_f32(static_cast<const uint16_t*>(in.x)[i]);
    }
}

const float* optional_f32(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present ? static_cast<const float*>(a->tensors[0].data) : nullptr;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x = hb_input(call, "x");
    const hb_arg* y = hb_output(call, "y");
    const hb_arg* scale = hb_output(call, "scale");
    if (!x || !y || !scale) return hb_fail(call, 1, "dequant_swiglu_quant: expected input x and outputs y, scale");
    const hb_tensor& xt = x->tensors[0];
    if (xt.rank != 2 || xt.shape[1] % 2 != 0) return hb_fail(call, 2, "dequant_swiglu_quant: x must be [T, 2H]");
    if (!hb_is_contiguous(&xt)) return hb_fail(call, 3, "dequant_swiglu_quant: only contiguous tensors are supported");
    Inputs in;
    in.x = xt.data;
    in.dtype = xt.dtype;
    in.weight_scale = optional_f32(call, "weight_scale");
    in.activation_scale = optional_f32(call, "activation_scale");
    in.quant_scale = optional_f32(call, "quant_scale");
    if (in.dtype != HB_INT32 && in.dtype != HB_FLOAT16 && in.dtype != HB_BFLOAT16)
        return hb_fail(call, 2, "dequant_swiglu_quant: x must be int32, float16 or bfloat16");
    if (in.dtype == HB_INT32 && (!in.weight_scale || !in.activation_scale))
        return hb_fail(call, 2, "dequant_swiglu_quant: int32 x needs weight_scale and activation_scale");
    const bool activate_left = hb_attr_int(call, "activate_left", 0) != 0;
    const int64_t tokens = xt.shape[0], half = xt.shape[1] / 2;
    auto* q = static_cast<int8_t*>(y->tensors[0].data);
    auto* sc = static_cast<float*>(scale->tensors[0].data);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads) if (tokens * half >= 16384)
    {
        std::vector<float> s(static_cast<size_t>(half));
#pragma omp for schedule(static)
        for (int64_t t = 0; t < tokens; ++t) {
            float max_abs = 0.0f;
            for (int64_t h = 0; h < half; ++h) {
                const float a = load(in, t, h, 2 * half), b = load(in, t, half + h, 2 * half);
                const float act = activate_left ? a : b, other = activate_left ? b : a;
                float v = act / (1.0f + std::exp(-act)) * other;
                if (in.quant_scale) v *= in.quant_scale[h];
                s[static_cast<size_t>(h)] = v;
                const float m = std::fabs(v);
                if (m != m || m > max_abs) max_abs = max_abs != max_abs ? max_abs : m;  // NaN sticks
            }
            const float row_scale = max_abs != max_abs ? max_abs : std::max(max_abs / 127.0f, 1e-12f);
            sc[t] = row_scale;
            for (int64_t h = 0; h < half; ++h) {
                const float v = s[static_cast<size_t>(h)] / row_scale;
                q[t * half + h] = v != v ? 0 : static_cast<int8_t>(std::clamp(std::nearbyint(v), -128.0f, 127.0f));
            }
        }
    }
    return 0;
}
