// Reference dynamic_quant: per row of the last dim, s = max(max|x|, 1e-12) / 127 and
// y = clamp(round_half_even(x / s), -128, 127) as int8; scale = s in fp32, one per row.
// x is float16 or bfloat16. A NaN in a row makes s NaN; a NaN quotient (NaN/s, inf/inf)
// quantizes to 0. fp32 math; nearbyint rounds half to even in the default rounding mode.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load_f16(uint16_t v) { return hb_f16_to_f32(v); }
float load_bf16(uint16_t v) { return hb_bf16_to_f32(v); }

template <float (*Load)(uint16_t)>
void quantize_all(const hb_tensor& x, const hb_tensor& y, const hb_tensor& scale, int threads) {
    const auto* in = static_cast<const uint16_t*>(x.data);
    auto* q = static_cast<int8_t*>(y.data);
    auto* s_out = static_cast<float*>(scale.data);
    const int64_t row = x.shape[x.rank - 1];
    const int64_t rows = row == 0 ? 0 : hb_numel(&x) / row;
#pragma omp parallel for schedule(static) num_threads(threads) if (rows * row >= 32768)
    for (int64_t r = 0; r < rows; ++r) {
        const uint16_t* xr = in + r * row;
        float max_abs = 0.0f;
        for (int64_t i = 0; i < row; ++i) {
            const float a = std::fabs(Load(xr[i]));
            if (a != a || a > max_abs) max_abs = max_abs != max_abs ? max_abs : a;  // NaN sticks
        }
        const float s = (max_abs != max_abs ? max_abs : std::max(max_abs, 1e-12f)) / 127.0f;
        s_out[r] = s;
        for (int64_t i = 0; i < row; ++i) {
            const float v = Load(xr[i]) / s;
            q[r * row + i] = v != v ? 0 : static_cast<int8_t>(std::clamp(std::nearbyint(v), -128.0f, 127.0f));
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    const hb_arg* s_arg = hb_output(call, "scale");
    if (!x_arg || !y_arg || !s_arg || x_arg->count != 1 || y_arg->count != 1 || s_arg->count != 1)
        return hb_fail(call, 1, "dynamic_quant: expected input x and outputs y and scale");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    const hb_tensor& scale = s_arg->tensors[0];
    if (x.rank < 1 || y.dtype != HB_INT8 || scale.dtype != HB_FLOAT32 || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "dynamic_quant: y must be int8 with x's size, scale float32");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y) || !hb_is_contiguous(&scale))
        return hb_fail(call, 3, "dynamic_quant: only contiguous tensors are supported");
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT16: quantize_all<load_f16>(x, y, scale, threads); return 0;
        case HB_BFLOAT16: quantize_all<load_bf16>(x, y, scale, threads); return 0;
        default: return hb_fail(call, 2, "dynamic_quant: x must be float16 or bfloat16");
    }
}
