// Baseline for group_norm: x [N, C, *] as [N, G, C/G, spatial]; per (sample, group) the mean
// and the biased variance (two passes, fp32 within 4096-element blocks, blocks added in
// fp64), then y = (x - mean) * a_c + beta[c] with a_c = rstd * gamma[c], in
// fp32 with one rounding per element (fp16/bf16 converted on load). Plain OpenMP C++: oneDNN
// 2.6 has no group normalization (it arrived in oneDNN 3.3); layer_normalization on an
// [N*G, C/G*spatial] view normalizes, but its scale and shift run along the normalized
// axis, not per channel, so gamma and beta would need a second primitive and another pass.
// Groups are spread over the threads; with fewer groups than threads, the threads share
// each group instead.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

struct Geometry {
    std::int64_t n = 1, groups = 1, channels = 1, spatial = 1;
};

template <typename Element, typename Param>
void normalize_group(const Element* x, Element* y, const Param* gamma, const Param* beta, const Geometry& g,
                     std::int64_t first_channel, float epsilon, bool share) {
    const std::int64_t m = g.channels * g.spatial;
    constexpr std::int64_t block = 4096;
    const std::int64_t blocks = (m + block - 1) / block;
    double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static) if (share)
    for (std::int64_t b = 0; b < blocks; ++b) {
        float partial = 0.f;
        const std::int64_t end = std::min(m, (b + 1) * block);
#pragma omp simd reduction(+ : partial)
        for (std::int64_t i = b * block; i < end; ++i) partial += to_f32(x[i]);
        sum += partial;
    }
    const float mean = static_cast<float>(sum / static_cast<double>(m));
    double squares = 0;
#pragma omp parallel for reduction(+ : squares) schedule(static) if (share)
    for (std::int64_t b = 0; b < blocks; ++b) {
        float partial = 0.f;
        const std::int64_t end = std::min(m, (b + 1) * block);
#pragma omp simd reduction(+ : partial)
        for (std::int64_t i = b * block; i < end; ++i) {
            const float d = to_f32(x[i]) - mean;
            partial += d * d;
        }
        squares += partial;
    }
    const float rstd = 1.f / std::sqrt(static_cast<float>(squares / static_cast<double>(m)) + epsilon);
#pragma omp parallel for schedule(static) if (share)
    for (std::int64_t c = 0; c < g.channels; ++c) {
        const float a = rstd * to_f32(gamma[first_channel + c]);
        const float shift = to_f32(beta[first_channel + c]);
        const Element* xc = x + c * g.spatial;
        Element* yc = y + c * g.spatial;
#pragma omp simd
        for (std::int64_t s = 0; s < g.spatial; ++s) yc[s] = from_f32<Element>((to_f32(xc[s]) - mean) * a + shift);
    }
}

template <typename Element, typename Param>
void run(const Element* x, Element* y, const Param* gamma, const Param* beta, const Geometry& g, float epsilon) {
    const std::int64_t m = g.channels * g.spatial;
    const std::int64_t count = g.n * g.groups;
    const int threads = omp_get_max_threads();
    if (count < 2 * threads && m >= 65536) {
        for (std::int64_t k = 0; k < count; ++k)
            normalize_group(x + k * m, y + k * m, gamma, beta, g, (k % g.groups) * g.channels, epsilon, true);
        return;
    }
#pragma omp parallel for schedule(dynamic)
    for (std::int64_t k = 0; k < count; ++k)
        normalize_group(x + k * m, y + k * m, gamma, beta, g, (k % g.groups) * g.channels, epsilon, false);
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* gamma_arg = hb_input(call, "gamma");
    const hb_arg* beta_arg = hb_input(call, "beta");
    hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !gamma_arg || !beta_arg || !y_arg || x_arg->count != 1 || gamma_arg->count != 1 ||
        beta_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "group_norm: expected inputs x, gamma, beta and output y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& gamma = gamma_arg->tensors[0];
    const hb_tensor& beta = beta_arg->tensors[0];
    hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y) || !hb_is_contiguous(&gamma) || !hb_is_contiguous(&beta))
        return hb_fail(call, 1, "group_norm: the baseline needs contiguous tensors");
    if (x.rank < 2) return hb_fail(call, 1, "group_norm: x needs at least 2 dims [N, C, ...]");
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x)) return hb_fail(call, 1, "group_norm: y must have x's dtype and shape");
    Geometry g;
    g.n = x.shape[0];
    g.groups = hb_attr_int(call, "num_groups", 0);
    if (g.groups <= 0 || x.shape[1] % g.groups != 0) return hb_fail(call, 1, "group_norm: num_groups must divide C");
    if (hb_numel(&gamma) != x.shape[1] || hb_numel(&beta) != x.shape[1] || gamma.dtype != beta.dtype)
        return hb_fail(call, 1, "group_norm: gamma and beta must be [C] of one dtype");
    g.channels = x.shape[1] / g.groups;
    for (std::int32_t d = 2; d < x.rank; ++d) g.spatial *= x.shape[d];
    if (hb_numel(&x) == 0) return 0;
    const auto epsilon = static_cast<float>(hb_attr_float(call, "epsilon", 1e-5));
    bool known_param = false;
    const bool known = with_float_element(x.dtype, [&](auto element) {
        using Element = decltype(element);
        known_param = with_float_element(gamma.dtype, [&](auto param) {
            using Param = decltype(param);
            run(static_cast<const Element*>(x.data), static_cast<Element*>(y.data), static_cast<const Param*>(gamma.data),
                static_cast<const Param*>(beta.data), g, epsilon);
        });
    });
    return known && known_param ? 0 : hb_fail(call, 2, "group_norm: unsupported dtype (float32, float16, bfloat16 only)");
}
