// Reference mhc_sinkhorn: each n x n matrix of comb [B, n, n] (float32), in fp32:
// iteration 1: every row e^(x - row max) / row sum, then + eps on every entry, then every
// column divided by (column sum + eps); iterations 2..iter_step: every row divided by
// (row sum + eps), then every column by (column sum + eps). A NaN in a row, +inf, or a row
// of only -inf gives NaN at the max shift, which the column sums spread over the matrix.
#include <omp.h>

#include <cmath>
#include <cstdint>

#include "hapbench/kernel.h"

namespace {

void sinkhorn(const float* in, float* m, int64_t n, int64_t iterations, float eps) {
    for (int64_t i = 0; i < n; ++i) {
        float max = -INFINITY;
        for (int64_t j = 0; j < n; ++j) {
            const float v = in[i * n + j];
            if (v != v || v > max) max = max != max ? max : v;  // NaN sticks
        }
        float sum = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
            m[i * n + j] = std::exp(in[i * n + j] - max);
            sum += m[i * n + j];
        }
        for (int64_t j = 0; j < n; ++j) m[i * n + j] = m[i * n + j] / sum + eps;
    }
    for (int64_t it = 0; it < iterations; ++it) {
        if (it > 0) {
            for (int64_t i = 0; i < n; ++i) {
                float sum = 0.0f;
                for (int64_t j = 0; j < n; ++j) sum += m[i * n + j];
                for (int64_t j = 0; j < n; ++j) m[i * n + j] = m[i * n + j] / (sum + eps);
            }
        }
        for (int64_t j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (int64_t i = 0; i < n; ++i) sum += m[i * n + j];
            for (int64_t i = 0; i < n; ++i) m[i * n + j] = m[i * n + j] / (sum + eps);
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* comb = hb_input(call, "comb");
    const hb_arg* out = hb_output(call, "comb_out");
    if (!comb || !out) return hb_fail(call, 1, "mhc_sinkhorn: expected input comb and output comb_out");
    const hb_tensor& c = comb->tensors[0];
    if (c.rank != 3 || c.shape[1] != c.shape[2] || c.dtype != HB_FLOAT32)
        return hb_fail(call, 2, "mhc_sinkhorn: comb must be float32 [B, n, n]");
    if (!hb_is_contiguous(&c) || !hb_is_contiguous(&out->tensors[0]))
        return hb_fail(call, 3, "mhc_sinkhorn: only contiguous tensors are supported");
    const int64_t batch = c.shape[0], n = c.shape[1];
    const int64_t iterations = hb_attr_int(call, "iter_step", 20);
    const float eps = static_cast<float>(hb_attr_float(call, "eps", 1e-6));
    const auto* in = static_cast<const float*>(c.data);
    auto* y = static_cast<float*>(out->tensors[0].data);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads) if (batch * n * n >= 4096)
    for (int64_t b = 0; b < batch; ++b) sinkhorn(in + b * n * n, y + b * n * n, n, iterations, eps);
    return 0;
}
