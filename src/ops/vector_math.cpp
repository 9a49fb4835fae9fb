#include "ops/vector_math.hpp"

// glibc declares its vector variants only under -ffast-math (bits/math-vector.h); declared
// here, with the loop below built without errno handling (CMakeLists.txt: -fno-math-errno),
// GCC calls _ZGVeN8v_exp, _ZGVdN4v_exp or _ZGVbN2v_exp from libmvec in the matching clone.
#pragma omp declare simd notinbranch
extern "C" double exp(double) noexcept;

namespace hb {

__attribute__((target_clones("avx512f", "avx2", "default"))) void exp_in_place(double* y, std::size_t n) {
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(y[i]);
}

}  // namespace hb
