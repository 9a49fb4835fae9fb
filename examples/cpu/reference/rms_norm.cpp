// Reference rms_norm: y = x / sqrt(mean(x^2) + epsilon) * gamma, the mean over the trailing
// dims of x that gamma's shape names, so x is [rows, D] with D = numel(gamma). float32,
// float16 and bfloat16 for x and gamma (independently); the sum of squares accumulates in
// fp64, everything else in fp32, with one rounding to y's dtype.
#include <omp.h>

#include <cmath>
#include <cstdint>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load(const hb_tensor& t, int64_t i) {
    switch (t.dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        default: return static_cast<const float*>(t.data)[i];
    }
}

void store(const hb_tensor& t, int64_t i, float v) {
    switch (t.dtype) {
        case HB_FLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_f16(v); break;
        case HB_BFLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_bf16(v); break;
        default: static_cast<float*>(t.data)[i] = v; break;
    }
}

bool is_float(hb_dtype t) { return t == HB_FLOAT32 || t == HB_FLOAT16 || t == HB_BFLOAT16; }

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* gamma_arg = hb_input(call, "gamma");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !gamma_arg || !y_arg || x_arg->count != 1 || gamma_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "rms_norm: expected inputs `x`, `gamma` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& gamma = gamma_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&gamma) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "rms_norm: only contiguous tensors are supported");
    if (!is_float(x.dtype) || !is_float(gamma.dtype) || y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "rms_norm: x, gamma must be float tensors and y must have x's dtype and shape");
    if (gamma.rank < 1 || gamma.rank > x.rank) return hb_fail(call, 2, "rms_norm: gamma must name trailing dims of x");
    for (int32_t d = 0; d < gamma.rank; ++d)
        if (gamma.shape[d] != x.shape[x.rank - gamma.rank + d])
            return hb_fail(call, 2, "rms_norm: gamma's shape must equal the trailing dims of x");

    const int64_t row = hb_numel(&gamma);
    if (row == 0) return 0;
    const int64_t rows = hb_numel(&x) / row;
    const double epsilon = hb_attr_float(call, "epsilon", 1e-6);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads) if (rows * row >= 32768)
    for (int64_t r = 0; r < rows; ++r) {
        double sum = 0.0;
        for (int64_t i = 0; i < row; ++i) {
            const double v = load(x, r * row + i);
            sum += v * v;
        }
        const auto scale = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(row) + epsilon));
        for (int64_t i = 0; i < row; ++i) store(y, r * row + i, load(x, r * row + i) * scale * load(gamma, i));
    }
    return 0;
}
