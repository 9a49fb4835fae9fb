// Matrix products for the references of contraction operators (conv as im2col, matmul,
// attention), through OpenBLAS: a naive triple loop over the level-3 and level-4 suites
// would take minutes per case. dgemm serves the fp64 goldens; sgemm the same-precision
// references (fp32 operands and accumulation, as a plain CPU framework computes). Never a
// kernel or a baseline. Row-major throughout.
#pragma once

#include <cstdint>

namespace hb {

// C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] + beta * C, with op(X) = X or X^T; lda, ldb,
// ldc are the row strides of A, B and C as stored.
void dgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
           const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c,
           std::int64_t ldc);
void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

// The product in T's precision, for references written once as a template over T.
inline void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                 std::int64_t lda, const double* b, std::int64_t ldb, double* c, std::int64_t ldc) {
    dgemm(transpose_a, transpose_b, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}
inline void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                 std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
    sgemm(transpose_a, transpose_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

// The same in fp32 (cblas_sgemm).
void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

}  // namespace hb
