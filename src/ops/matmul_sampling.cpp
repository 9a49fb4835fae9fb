#include "ops/matmul_sampling.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hb {

ValueMoments uniform_moments(const ValueRange& range) {
    const double mean = (range.lo + range.hi) / 2, spread = range.hi - range.lo;
    return {mean, std::sqrt(mean * mean + spread * spread / 12)};
}

double typical_dot(const ValueMoments& a, const ValueMoments& b, std::int64_t k) {
    const double kk = static_cast<double>(k);
    const double product_spread = std::sqrt(std::max(0.0, a.rms * a.rms * b.rms * b.rms - a.mean * a.mean * b.mean * b.mean));
    return kk * std::fabs(a.mean * b.mean) + std::sqrt(kk) * product_spread;
}

double typical_result_cap(DType output, std::int64_t k) {
    const double root = std::sqrt(static_cast<double>(std::max<std::int64_t>(k, 1)));
    if (output == DType::f16) return 66.7 / root;
    if (output == DType::bf16) return 213 / root;
    if (output == DType::f32) return 1.04 / root;
    return INFINITY;
}

double range_shrink(double typical, double cap) { return typical > cap ? cap / typical : 1.0; }

ValueRange scaled_range(const ValueRange& range, double factor) {
    if (factor > 0 && std::isfinite(factor)) {
        const double unit = std::pow(10.0, std::floor(std::log10(factor)) - 1);
        factor = std::floor(factor / unit) * unit;
    }
    return {range.lo * factor, range.hi * factor};
}

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
