// Baseline for rms_norm: y = x / sqrt(mean(x^2) + epsilon) * gamma over rows of
// D = numel(gamma) elements. Plain OpenMP C++, rows spread over the threads, accumulating
// in fp32 (fp16/bf16 converted on load, rounded once on store; gamma in any float dtype).
// oneDNN 2.6 has no RMS normalization: its layer_normalization always subtracts the mean
// (the rms flag arrived in oneDNN 3.x), and composing it from reduction + binary primitives
// would pass over x three times where this loop reads each row once from memory.
#include <cmath>
#include <string>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

template <typename Element, typename Gamma>
void run_rows(const Element* x, const Gamma* gamma, Element* y, std::int64_t rows, std::int64_t row, float epsilon) {
    // gamma in fp32 once, so the inner loops vectorize whatever its dtype.
    std::vector<float> g(static_cast<std::size_t>(row));
    for (std::int64_t i = 0; i < row; ++i) g[static_cast<std::size_t>(i)] = to_f32(gamma[i]);
    const float* gp = g.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
        const Element* xr = x + r * row;
        Element* yr = y + r * row;
        float sum = 0.f;
#pragma omp simd reduction(+ : sum)
        for (std::int64_t i = 0; i < row; ++i) {
            const float v = to_f32(xr[i]);
            sum += v * v;
        }
        const float scale = 1.f / std::sqrt(sum / static_cast<float>(row) + epsilon);
#pragma omp simd
        for (std::int64_t i = 0; i < row; ++i) yr[i] = from_f32<Element>(to_f32(xr[i]) * scale * gp[i]);
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* gamma_arg = hb_input(call, "gamma");
    hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !gamma_arg || !y_arg || x_arg->count != 1 || gamma_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "rms_norm: expected inputs x, gamma and output y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& gamma = gamma_arg->tensors[0];
    hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&gamma) || !hb_is_contiguous(&y))
        return hb_fail(call, 1, "rms_norm: the baseline needs contiguous tensors");
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x)) return hb_fail(call, 1, "rms_norm: y must have x's dtype and shape");
    if (gamma.rank < 1 || gamma.rank > x.rank) return hb_fail(call, 1, "rms_norm: gamma must name trailing dims of x");
    for (std::int32_t d = 0; d < gamma.rank; ++d)
        if (gamma.shape[d] != x.shape[x.rank - gamma.rank + d])
            return hb_fail(call, 1, "rms_norm: gamma's shape must equal the trailing dims of x");
    const std::int64_t row = hb_numel(&gamma);
    if (row == 0 || hb_numel(&x) == 0) return 0;
    const auto epsilon = static_cast<float>(hb_attr_float(call, "epsilon", 1e-6));
    bool known_gamma = false;
    const bool known = with_float_element(x.dtype, [&](auto element) {
        using Element = decltype(element);
        known_gamma = with_float_element(gamma.dtype, [&](auto gamma_element) {
            using Gamma = decltype(gamma_element);
            run_rows(static_cast<const Element*>(x.data), static_cast<const Gamma*>(gamma.data),
                     static_cast<Element*>(y.data), hb_numel(&x) / row, row, epsilon);
        });
    });
    return known && known_gamma ? 0 : hb_fail(call, 2, "rms_norm: unsupported dtype (float32, float16, bfloat16 only)");
}
