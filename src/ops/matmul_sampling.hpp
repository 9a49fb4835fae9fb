// Case sampling shared by the matmul-like operators (grouped_matmul, quant_matmul,
// weight_quant_batch_matmul): matrix extents that meet an element budget, the 512-byte
// alignment rule or its opposite, and a cap on multiply-accumulates. The cap is what keeps
// the `cpu` profile's cases inside the suite's time budget: the fp64 golden, the reference
// kernel and the baseline all grow with m * n * k, not with the input elements that the
// size regimes count, so a large regime means a large weight met by few rows (decode-like
// shapes), a small one a compact, compute-dense product.
#pragma once

#include <cstdint>

#include "core/dtype.hpp"
#include "spec/case_sampler.hpp"
#include "spec/case_spec.hpp"

namespace hb {

// Multiply-accumulates a `cpu` case may cost at most (about 0.1 s of a plain blocked kernel
// on two cores, a few ms of OpenBLAS dgemm for the golden).
inline constexpr double cpu_case_mac_cap = 2.5e8;

// An extent near `target`, inside [lo, hi]. Aligned: a multiple of the 512-byte unit of
// `dtype` (at least one unit). Otherwise not a multiple of that unit, and odd: one of the
// methodology's odd and prime sizes when one lies near the target, else target made odd.
std::int64_t matmul_extent(CaseSampler& sampler, double target, std::int64_t lo, std::int64_t hi, bool aligned,
                           DType dtype);

// Log-uniform in [lo, hi] (lo > 0; hi < lo gives lo).
double log_uniform(CaseSampler& sampler, double lo, double hi);

// Mean and root mean square of values drawn uniformly on a finite range.
struct ValueMoments {
    double mean = 0;
    double rms = 0;
};
ValueMoments uniform_moments(const ValueRange& range);

// The typical magnitude of a k-term dot product of independent draws with these moments:
// k |mean_a mean_b| plus sqrt(k) times the spread of one product.
double typical_dot(const ValueMoments& a, const ValueMoments& b, std::int64_t k);

// How large a typical result of a k-term fp32-accumulated sum may be in an output of
// `output`'s dtype, so that the precision gate's verdict does not depend on the order in
// which a kernel accumulates. A sequential fp32 sum of k terms carries about
// 0.6 sqrt(k) 2^-24 x the typical result as absolute error (rounding errors of the partial
// sums, which are about the typical result, in a random walk). Where a result cancels
// towards 0 that error exceeds 10 tau relative to it, and the gate's fallback then counts
// errors against the same-precision reference (OpenBLAS sgemm, accumulated differently),
// which tolerates no error it does not make too in the normal region and a ratio of 2 in
// the others: a few such elements per case fail an honest kernel at random (measured: the
// reference kernel on fp16 [-5000, 5000] operands, on fp32 [-20, 20] x [-20, 20] at k = 256
// and on fp32 [-10, 10] x [-0.066, 0.066] at k = 2039; the tuned kernel on fp32 [-200, 200]).
// The cap keeps that error below 10 tau x tau_sv (no result above the small-value bound can
// fail) and, for fp16 and bf16, below eps_sv (no result below it can), with a factor of 2:
//   fp16: 10 x 2^-10 x 2^-11 / (1.2 x 2^-24) = 66.7 / sqrt(k)
//   bf16: 2^-16 / (1.2 x 2^-24) = 213 / sqrt(k)          (10 tau x tau_sv would allow 4267)
//   fp32: 10 x 2^-13 x 2^-14 / (1.2 x 2^-24) = 1.04 / sqrt(k)   (below tau_sv both sides err
//         on the same results, so counts agree)
// Other output dtypes: infinity (no cap).
double typical_result_cap(DType output, std::int64_t k);
// The factor (at most 1) by which to shrink one operand's range so that a typical result
// stays within `cap`.
double range_shrink(double typical, double cap);
// `range` times `factor` rounded down to two significant digits (so that case files read
// 0.0057, not 0.0057248412310698573; both ends scale alike, so a typical result scales too).
ValueRange scaled_range(const ValueRange& range, double factor);

}  // namespace hb
