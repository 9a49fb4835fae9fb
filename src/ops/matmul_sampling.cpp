#include "ops/matmul_sampling.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hb {

double log_uniform(CaseSampler& sampler, double lo, double hi) {
    if (!(hi > lo)) return lo;
    return std::exp(sampler.rng().uniform(std::log(lo), std::log(hi)));
}

std::int64_t matmul_extent(CaseSampler& sampler, double target, std::int64_t lo, std::int64_t hi, bool aligned,
                           DType dtype) {
    hi = std::max(hi, lo);
    const auto unit = std::max<std::int64_t>(1, 512 / static_cast<std::int64_t>(dtype_size(dtype)));
    const double clamped = std::clamp(target, static_cast<double>(lo), static_cast<double>(hi));
    if (aligned) return std::max<std::int64_t>(unit, std::llround(clamped / static_cast<double>(unit)) * unit);
    // Odd and prime sizes of the kind the methodology names, when one is within 30%.
    static const std::vector<std::int64_t> odd_sizes = {17,  31,  53,   97,   127,  251,  509,  769,  999,
                                                       1009, 1021, 1023, 1025, 1537, 2039, 2047, 3001, 4093, 4097};
    std::vector<std::int64_t> near;
    for (auto s : odd_sizes)
        if (s >= lo && s <= hi && std::fabs(static_cast<double>(s) / clamped - 1) < 0.3) near.push_back(s);
    if (!near.empty() && sampler.rng().uniform01() < 0.6) return sampler.pick(near);
    std::int64_t v = std::max<std::int64_t>(lo, std::llround(clamped)) | 1;  // odd: never a multiple of the unit
    if (v > hi && v - 2 >= lo) v -= 2;
    return v;
}

}  // namespace hb
