// fp64 matrix products for the goldens of contraction operators (conv as im2col, matmul,
// attention), through OpenBLAS's cblas_dgemm: a naive triple loop over the level-3 and
// level-4 suites would take minutes per case. Row-major throughout. sgemm is the fp32
// twin, for same-precision references (fp32 accumulation, as a CPU framework computes).
#pragma once

#include <cstdint>

namespace hb {

// C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] + beta * C, with op(X) = X or X^T; lda, ldb,
// ldc are the row strides of A, B and C as stored.
void dgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
           const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c,
           std::int64_t ldc);

// The same in fp32 (cblas_sgemm).
void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

}  // namespace hb
