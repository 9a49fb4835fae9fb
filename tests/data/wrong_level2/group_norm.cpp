// DELIBERATELY WRONG group_norm (tests/integration/test_wrong_level2_norm.cpp): channel c is
// put in group c % G (round-robin) instead of c / (C / G) (consecutive channels); right for
// one group or one channel per group, a PRECISION_FAIL otherwise. Otherwise the reference
// kernel: group_norm: x [N, C, *] is [N, G, C/G, spatial] with G = num_groups; each
// (sample, group) is normalized by its mean and biased variance (two passes, fp64 sums),
// then (x - mean) * (rstd * gamma[c]) + beta[c] in fp32, rounded once to
// y's dtype. x and gamma/beta may be float32, float16 or bfloat16.
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
    const hb_arg* beta_arg = hb_input(call, "beta");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !gamma_arg || !beta_arg || !y_arg)
        return hb_fail(call, 1, "group_norm: expected inputs `x`, `gamma`, `beta` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& gamma = gamma_arg->tensors[0];
    const hb_tensor& beta = beta_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y) || !hb_is_contiguous(&gamma) || !hb_is_contiguous(&beta))
        return hb_fail(call, 3, "group_norm: only contiguous tensors are supported");
    if (x.rank < 2) return hb_fail(call, 2, "group_norm: x needs at least 2 dims [N, C, ...]");
    if (!is_float(x.dtype) || !is_float(gamma.dtype) || !is_float(beta.dtype) || y.dtype != x.dtype ||
        hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "group_norm: float tensors only, and y must have x's dtype and shape");
    const int64_t channels = x.shape[1];
    const int64_t groups = hb_attr_int(call, "num_groups", 0);
    if (groups <= 0 || channels % groups != 0) return hb_fail(call, 4, "group_norm: num_groups must divide C");
    if (hb_numel(&gamma) != channels || hb_numel(&beta) != channels)
        return hb_fail(call, 2, "group_norm: gamma and beta must have C elements");

    int64_t spatial = 1;
    for (int32_t d = 2; d < x.rank; ++d) spatial *= x.shape[d];
    const int64_t per_group = channels / groups;
    const int64_t m = per_group * spatial;
    const int64_t count = x.shape[0] * groups;
    const double epsilon = hb_attr_float(call, "epsilon", 1e-5);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    // The bug: group g holds channels g, g + G, g + 2G, ...
    auto at = [&](int64_t k, int64_t i) {
        const int64_t n = k / groups, g = k % groups, c = i / spatial, s = i % spatial;
        return (n * channels + g + c * groups) * spatial + s;
    };
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (count > 1 && count * m >= 32768)
    for (int64_t k = 0; k < count; ++k) {
        double sum = 0.0;
        for (int64_t i = 0; i < m; ++i) sum += load(x, at(k, i));
        const double mean = sum / static_cast<double>(m);
        double squares = 0.0;
        for (int64_t i = 0; i < m; ++i) {
            const double d = load(x, at(k, i)) - mean;
            squares += d * d;
        }
        const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(m) + epsilon);
        for (int64_t c = 0; c < per_group; ++c) {
            const int64_t channel = k % groups + c * groups;
            const auto a = static_cast<float>(rstd * load(gamma, channel));
            const float b = load(beta, channel);
            const auto mu = static_cast<float>(mean);
            for (int64_t s = 0; s < spatial; ++s) {
                const int64_t i = at(k, c * spatial + s);
                store(y, i, (load(x, i) - mu) * a + b);
            }
        }
    }
    return 0;
}
