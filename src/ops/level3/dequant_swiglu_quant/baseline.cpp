// Baseline for dequant_swiglu_quant: a threaded C++ loop, OpenMP over tokens, in fp32 as
// PyTorch's CPU path computes it. Per row: dequantize (int32 x times weight_scale times
// activation_scale) or widen (fp16/bf16 x), s = SiLU(activated half) * other half, times
// quant_scale, into a per-thread row buffer while taking max|s|; then the scale and the
// quantizing pass with NaN quotients mapped to 0. oneDNN 2.6 has no dynamic quantization
// and runs its swish eltwise and binary_mul on strided half-row views only in ref:any, so a
// primitive chain would be slower and write and re-read s.
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

// Saturation to int8 with comparisons, which vectorize (fminf/fmaxf are library calls).
inline float clamp_int8(float v) { return v < -128.f ? -128.f : (v > 127.f ? 127.f : v); }

struct Scales {
    const float* weight = nullptr;      // [2H], int32 x only
    const float* activation = nullptr;  // [T], int32 x only
    const float* quant = nullptr;       // [H] or null
};

template <typename Element>
void run_rows(const Element* x, const Scales& scales, bool activate_left, std::int8_t* y, float* scale_out,
              std::int64_t tokens, std::int64_t half) {
#pragma omp parallel
    {
        std::vector<float> row(static_cast<std::size_t>(2 * half)), s(static_cast<std::size_t>(half));
#pragma omp for schedule(static)
        for (std::int64_t t = 0; t < tokens; ++t) {
            const Element* xr = x + t * 2 * half;
            float* d = row.data();
            if constexpr (std::is_same_v<Element, std::int32_t>) {
                const float a = scales.activation[t];
#pragma omp simd
                for (std::int64_t j = 0; j < 2 * half; ++j) d[j] = (static_cast<float>(xr[j]) * scales.weight[j]) * a;
            } else {
#pragma omp simd
                for (std::int64_t j = 0; j < 2 * half; ++j) d[j] = to_f32(xr[j]);
            }
            const float* act = activate_left ? d : d + half;
            const float* other = activate_left ? d + half : d;
            float max_abs = 0.f;
            bool nan = false;
#pragma omp simd reduction(max : max_abs) reduction(| : nan)
            for (std::int64_t h = 0; h < half; ++h) {
                float v = act[h] / (1.f + std::exp(-act[h])) * other[h];
                if (scales.quant) v *= scales.quant[h];
                s[static_cast<std::size_t>(h)] = v;
                const float m = std::fabs(v);
                nan |= m != m;
                max_abs = m > max_abs ? m : max_abs;
            }
            const float scale = nan ? NAN : std::fmax(max_abs / 127.f, 1e-12f);
            scale_out[t] = scale;
            std::int8_t* yr = y + t * half;
#pragma omp simd
            for (std::int64_t h = 0; h < half; ++h) {
                const float q = s[static_cast<std::size_t>(h)] / scale;
                yr[h] = q != q ? 0 : static_cast<std::int8_t>(clamp_int8(std::nearbyint(q)));
            }
        }
    }
}

const float* optional_f32(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present && a->count == 1 ? static_cast<const float*>(a->tensors[0].data) : nullptr;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    const hb_arg* s_arg = hb_output(call, "scale");
    if (!x_arg || !y_arg || !s_arg) return hb_fail(call, 1, "dequant_swiglu_quant: expected input x and outputs y, scale");
    const hb_tensor& x = x_arg->tensors[0];
    if (x.rank != 2 || x.shape[1] % 2 != 0 || !hb_is_contiguous(&x))
        return hb_fail(call, 2, "dequant_swiglu_quant: x must be a contiguous [T, 2H]");
    const std::int64_t tokens = x.shape[0], half = x.shape[1] / 2;
    Scales scales;
    scales.weight = optional_f32(call, "weight_scale");
    scales.activation = optional_f32(call, "activation_scale");
    scales.quant = optional_f32(call, "quant_scale");
    const bool activate_left = hb_attr_int(call, "activate_left", 0) != 0;
    auto* y = static_cast<std::int8_t*>(y_arg->tensors[0].data);
    auto* scale = static_cast<float*>(s_arg->tensors[0].data);
    if (tokens == 0 || half == 0) return 0;
    switch (x.dtype) {
        case HB_INT32:
            if (!scales.weight || !scales.activation)
                return hb_fail(call, 2, "dequant_swiglu_quant: int32 x needs weight_scale and activation_scale");
            run_rows(static_cast<const std::int32_t*>(x.data), scales, activate_left, y, scale, tokens, half);
            return 0;
        case HB_FLOAT16: run_rows(static_cast<const Half*>(x.data), scales, activate_left, y, scale, tokens, half); return 0;
        case HB_BFLOAT16:
            run_rows(static_cast<const BFloat16*>(x.data), scales, activate_left, y, scale, tokens, half);
            return 0;
        default: return hb_fail(call, 2, "dequant_swiglu_quant: x must be int32, float16 or bfloat16");
    }
}
