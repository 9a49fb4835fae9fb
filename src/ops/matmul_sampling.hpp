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
#include "suite/case_sampler.hpp"

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

}  // namespace hb
