// fp64 elementary functions over arrays, for goldens: glibc's vector math library (libmvec)
// in the widest variant the CPU runs (AVX-512, AVX2 or SSE2, chosen when the library loads).
//
// Why: a golden's exp, one element at a time through libm, was most of the verification of
// exp-heavy operators (tuned sigmoid, 20 cases: 0.79 s of 1.4 s of thread time in the goldens
// of the 60 verified timed calls); libmvec's runs 4 to 5 times as fast here.
// Accuracy: libmvec's functions are within 4 ulp of fp64 (measured on 16 million arguments
// in [-90, 90]: at most 4 ulp from libm's exp), with the scalar functions' special values
// (NaN, +-inf, overflow to inf, underflow to 0). A golden is judged at its output's dtype
// (fp32 at best, 2^-24), so 4 ulp of fp64 (2^-50) never moves a verdict. The same-precision
// reference (fp32) keeps libm's scalar functions: its errors stand for a fp32 kernel's.
#pragma once

#include <cmath>
#include <cstddef>

namespace hb {

// y[i] = e^y[i] for i < n (fp64, libmvec).
void exp_in_place(double* y, std::size_t n);

// For compute<T> templates: fp64 through libmvec, fp32 element by element with std::exp.
inline void exp_in_place(float* y, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(y[i]);
}

// Elements a thread hands exp_in_place at once: a block of its own temporary values, small
// enough to stay in the first-level cache between the passes over it.
inline constexpr std::size_t kVectorMathBlock = 2048;

}  // namespace hb
