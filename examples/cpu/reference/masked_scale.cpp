// Reference masked_scale: y = x * mask * scale, y in x's dtype. x is float32, float16 or
// bfloat16; mask is int8, uint8, bool, float32, float16 or bfloat16. fp32 math throughout.
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
struct Int8 {
    using Storage = int8_t;
    static float load(int8_t v) { return static_cast<float>(v); }
};
struct Uint8 {  // also bool, stored as one byte 0 or 1
    using Storage = uint8_t;
    static float load(uint8_t v) { return static_cast<float>(v); }
};

constexpr int64_t kParallelMinElements = 32768;

template <typename XType, typename MaskType>
void masked_scale_all(const hb_tensor& x, const hb_tensor& mask, const hb_tensor& y, float scale,
                      int threads) {
    const auto* in = static_cast<const typename XType::Storage*>(x.data);
    const auto* m = static_cast<const typename MaskType::Storage*>(mask.data);
    auto* out = static_cast<typename XType::Storage*>(y.data);
    const int64_t n = hb_numel(&x);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i)
        out[i] = XType::store(XType::load(in[i]) * MaskType::load(m[i]) * scale);
}

template <typename XType>
int dispatch_mask(const hb_call* call, const hb_tensor& x, const hb_tensor& mask, const hb_tensor& y,
                  float scale, int threads) {
    switch (mask.dtype) {
        case HB_FLOAT32: masked_scale_all<XType, Fp32>(x, mask, y, scale, threads); return 0;
        case HB_FLOAT16: masked_scale_all<XType, Fp16>(x, mask, y, scale, threads); return 0;
        case HB_BFLOAT16: masked_scale_all<XType, Bf16>(x, mask, y, scale, threads); return 0;
        case HB_INT8: masked_scale_all<XType, Int8>(x, mask, y, scale, threads); return 0;
        case HB_UINT8:
        case HB_BOOL: masked_scale_all<XType, Uint8>(x, mask, y, scale, threads); return 0;
        default:
            return hb_fail(call, 2, "masked_scale: mask must be int8, uint8, bool, float32, float16 or bfloat16");
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* mask_arg = hb_input(call, "mask");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !mask_arg || !y_arg || x_arg->count != 1 || mask_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "masked_scale: expected input tensors x and mask and output tensor y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& mask = mask_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x) || hb_numel(&mask) != hb_numel(&x))
        return hb_fail(call, 2, "masked_scale: mask and y must have x's element count, y x's dtype");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&mask) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "masked_scale: only contiguous tensors are supported");

    const float scale = static_cast<float>(hb_attr_float(call, "scale", 1.0));
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: return dispatch_mask<Fp32>(call, x, mask, y, scale, threads);
        case HB_FLOAT16: return dispatch_mask<Fp16>(call, x, mask, y, scale, threads);
        case HB_BFLOAT16: return dispatch_mask<Bf16>(call, x, mask, y, scale, threads);
        default: return hb_fail(call, 2, "masked_scale: x must be float32, float16 or bfloat16");
    }
}
