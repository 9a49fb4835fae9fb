// Reference add_rms_norm_dynamic_quant: per row of the last dim, in fp32,
//   s = x1 + x2;  r = sqrt(mean(s^2) + epsilon);  u = (s / r) * gamma
//   scale = max(max|u|, 1e-12) / 127;  y = clamp(round_half_even(u / scale), -128, 127)
// xOut = s rounded to the input dtype, scaleOut = scale (float32, one per row). x1, x2 and
// gamma are float16 or bfloat16. A NaN in |u| makes the scale NaN; a NaN quotient
// quantizes to 0. nearbyint rounds half to even in the default rounding mode.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load_f16(uint16_t v) { return hb_f16_to_f32(v); }
float load_bf16(uint16_t v) { return hb_bf16_to_f32(v); }
uint16_t store_f16(float v) { return hb_f32_to_f16(v); }
uint16_t store_bf16(float v) { return hb_f32_to_bf16(v); }

template <float (*Load)(uint16_t), uint16_t (*Store)(float)>
void run_rows(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& gamma, const hb_tensor& y,
              const hb_tensor& x_out, const hb_tensor& scale_out, float epsilon, int threads) {
    const auto* a = static_cast<const uint16_t*>(x1.data);
    const auto* b = static_cast<const uint16_t*>(x2.data);
    const auto* g = static_cast<const uint16_t*>(gamma.data);
    auto* q = static_cast<int8_t*>(y.data);
    auto* xo = static_cast<uint16_t*>(x_out.data);
    auto* sc = static_cast<float*>(scale_out.data);
    const int64_t row = x1.shape[x1.rank - 1];
    const int64_t rows = row == 0 ? 0 : hb_numel(&x1) / row;
#pragma omp parallel num_threads(threads) if (rows * row >= 32768)
    {
        std::vector<float> u(static_cast<size_t>(row));
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t base = r * row;
            float sum = 0.0f;
            for (int64_t i = 0; i < row; ++i) {
                const float s = Load(a[base + i]) + Load(b[base + i]);
                xo[base + i] = Store(s);
                u[static_cast<size_t>(i)] = s;
                sum += s * s;
            }
            const float rms = std::sqrt(sum / static_cast<float>(row) + epsilon);
            float max_abs = 0.0f;
            for (int64_t i = 0; i < row; ++i) {
                const float v = (u[static_cast<size_t>(i)] / rms) * Load(g[i]);
                u[static_cast<size_t>(i)] = v;
                const float m = std::fabs(v);
                if (m != m || m > max_abs) max_abs = max_abs != max_abs ? max_abs : m;  // NaN sticks
            }
            const float scale = (max_abs != max_abs ? max_abs : std::max(max_abs, 1e-12f)) / 127.0f;
            sc[r] = scale;
            for (int64_t i = 0; i < row; ++i) {
                const float v = u[static_cast<size_t>(i)] / scale;
                q[base + i] = v != v ? 0 : static_cast<int8_t>(std::clamp(std::nearbyint(v), -128.0f, 127.0f));
            }
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x1 = hb_input(call, "x1");
    const hb_arg* x2 = hb_input(call, "x2");
    const hb_arg* gamma = hb_input(call, "gamma");
    const hb_arg* y = hb_output(call, "y");
    const hb_arg* x_out = hb_output(call, "xOut");
    const hb_arg* scale = hb_output(call, "scaleOut");
    if (!x1 || !x2 || !gamma || !y || !x_out || !scale)
        return hb_fail(call, 1, "add_rms_norm_dynamic_quant: expected inputs x1, x2, gamma and outputs y, xOut, scaleOut");
    const hb_tensor& a = x1->tensors[0];
    for (const hb_arg* arg : {x1, x2, gamma, y, x_out, scale})
        if (!hb_is_contiguous(&arg->tensors[0]))
            return hb_fail(call, 3, "add_rms_norm_dynamic_quant: only contiguous tensors are supported");
    if (a.rank < 1 || x2->tensors[0].dtype != a.dtype || gamma->tensors[0].dtype != a.dtype ||
        hb_numel(&gamma->tensors[0]) != a.shape[a.rank - 1] || y->tensors[0].dtype != HB_INT8 ||
        scale->tensors[0].dtype != HB_FLOAT32)
        return hb_fail(call, 2, "add_rms_norm_dynamic_quant: x2 and gamma [N] must have x1's dtype; y int8, scaleOut float32");
    const float epsilon = static_cast<float>(hb_attr_float(call, "epsilon", 1e-6));
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (a.dtype) {
        case HB_FLOAT16:
            run_rows<load_f16, store_f16>(a, x2->tensors[0], gamma->tensors[0], y->tensors[0], x_out->tensors[0],
                                          scale->tensors[0], epsilon, threads);
            return 0;
        case HB_BFLOAT16:
            run_rows<load_bf16, store_bf16>(a, x2->tensors[0], gamma->tensors[0], y->tensors[0], x_out->tensors[0],
                                            scale->tensors[0], epsilon, threads);
            return 0;
        default: return hb_fail(call, 2, "add_rms_norm_dynamic_quant: x1 must be float16 or bfloat16");
    }
}
