// Baseline for mhc_sinkhorn: threaded C++, OpenMP over the B matrices, each n x n matrix
// copied into a per-thread fp32 buffer and iterated there (row softmax + eps and a column
// normalization, then iter_step - 1 row and column normalizations, each a reciprocal per row
// or column and a multiply per entry), then written out once. oneDNN has no Sinkhorn
// iteration: its softmax could do only the first row normalization of the [B*n, n] view, and
// for n <= 16 each primitive execution costs more than this whole fused loop.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

void sinkhorn(float* m, std::int64_t n, std::int64_t iterations, float eps) {
    for (std::int64_t i = 0; i < n; ++i) {
        float* row = m + i * n;
        float max = -INFINITY;
        bool nan = false;
        for (std::int64_t j = 0; j < n; ++j) {
            nan |= row[j] != row[j];
            max = row[j] > max ? row[j] : max;
        }
        if (nan) max = NAN;
        float sum = 0.f;
        for (std::int64_t j = 0; j < n; ++j) {
            row[j] = std::exp(row[j] - max);
            sum += row[j];
        }
        for (std::int64_t j = 0; j < n; ++j) row[j] = row[j] / sum + eps;
    }
    std::vector<float> column_sum(static_cast<std::size_t>(n));
    for (std::int64_t it = 0; it < iterations; ++it) {
        if (it > 0)
            for (std::int64_t i = 0; i < n; ++i) {
                float* row = m + i * n;
                float sum = 0.f;
                for (std::int64_t j = 0; j < n; ++j) sum += row[j];
                const float inverse = 1.f / (sum + eps);
                for (std::int64_t j = 0; j < n; ++j) row[j] *= inverse;
            }
        std::fill(column_sum.begin(), column_sum.end(), 0.f);
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j) column_sum[static_cast<std::size_t>(j)] += m[i * n + j];
        for (std::int64_t j = 0; j < n; ++j)
            column_sum[static_cast<std::size_t>(j)] = 1.f / (column_sum[static_cast<std::size_t>(j)] + eps);
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j) m[i * n + j] *= column_sum[static_cast<std::size_t>(j)];
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* comb_arg = hb_input(call, "comb");
    const hb_arg* out_arg = hb_output(call, "comb_out");
    if (!comb_arg || !out_arg) return hb_fail(call, 1, "mhc_sinkhorn: expected input comb and output comb_out");
    const hb_tensor& comb = comb_arg->tensors[0];
    const hb_tensor& out = out_arg->tensors[0];
    if (comb.rank != 3 || comb.shape[1] != comb.shape[2] || comb.dtype != HB_FLOAT32 || out.dtype != HB_FLOAT32 ||
        !hb_is_contiguous(&comb) || !hb_is_contiguous(&out))
        return hb_fail(call, 2, "mhc_sinkhorn: comb and comb_out must be contiguous float32 [B, n, n]");
    const std::int64_t batch = comb.shape[0], n = comb.shape[1];
    const std::int64_t iterations = hb_attr_int(call, "iter_step", 20);
    const auto eps = static_cast<float>(hb_attr_float(call, "eps", 1e-6));
    const auto* in = static_cast<const float*>(comb.data);
    auto* y = static_cast<float*>(out.data);
#pragma omp parallel
    {
        std::vector<float> m(static_cast<std::size_t>(n * n));
#pragma omp for schedule(static)
        for (std::int64_t b = 0; b < batch; ++b) {
            std::memcpy(m.data(), in + b * n * n, m.size() * sizeof(float));
            sinkhorn(m.data(), n, iterations, eps);
            std::memcpy(y + b * n * n, m.data(), m.size() * sizeof(float));
        }
    }
    return 0;
}
