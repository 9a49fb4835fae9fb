#include "spec/case_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hb {

std::string range_group_name(RangeGroup g) {
    switch (g) {
        case RangeGroup::symmetric_small: return "symmetric-small";
        case RangeGroup::symmetric_medium: return "symmetric-medium";
        case RangeGroup::symmetric_large: return "symmetric-large";
        case RangeGroup::asymmetric: return "asymmetric";
        case RangeGroup::type_boundary: return "type-boundary";
        case RangeGroup::special_inf: return "special-inf";
        case RangeGroup::special_nan: return "special-nan";
        case RangeGroup::zero: return "zero";
    }
    return "?";
}

RangeGroup classify_range(const ValueRange& r, DType dtype) {
    if (std::isnan(r.lo) || std::isnan(r.hi)) return RangeGroup::special_nan;
    if (std::isinf(r.lo) || std::isinf(r.hi)) return RangeGroup::special_inf;
    if (r.lo == r.hi) return RangeGroup::zero;  // constant fills, [0,0] among them
    const double extent = std::max(std::fabs(r.lo), std::fabs(r.hi));
    // +-88 (exp-type ops) and ranges reaching the dtype's finite limit are boundary ranges.
    if (extent >= 0.5 * dtype_max(dtype) || (is_floating(dtype) && extent >= 80 && extent <= 90))
        return RangeGroup::type_boundary;
    if (r.lo != -r.hi) return RangeGroup::asymmetric;
    if (extent <= 5) return RangeGroup::symmetric_small;
    if (extent <= 500) return RangeGroup::symmetric_medium;
    return RangeGroup::symmetric_large;
}

bool is_aligned(const Shape& shape, DType dtype) {
    if (shape.empty()) return false;
    return (shape.back() * static_cast<std::int64_t>(dtype_size(dtype))) % 512 == 0;
}

int CaseSampler::pick_rank(int lo, int hi) { return static_cast<int>(rng_.uniform_int(lo, hi)); }

namespace {
// Odd and prime sizes of the kind the methodology names (1009, 1021, 1537, 4097 ...).
const std::int64_t odd_sizes[] = {127, 251, 509, 769, 1009, 1021, 1023, 1537, 2039, 2047,
                                  3001, 4093, 4097, 6143, 8191, 12289, 16381};
bool is_prime(std::int64_t n) {
    if (n < 2) return false;
    for (std::int64_t d = 2; d * d <= n; ++d)
        if (n % d == 0) return false;
    return true;
}
}  // namespace

Shape CaseSampler::shape(std::int64_t elements, int rank, DType dtype, bool aligned,
                         std::int64_t inner_multiple) {
    elements = std::max<std::int64_t>(elements, 1);
    const std::int64_t align_elems = std::max<std::int64_t>(1, 512 / static_cast<std::int64_t>(dtype_size(dtype)));
    const std::int64_t unit = std::lcm(aligned ? align_elems : 1, inner_multiple);
    std::int64_t inner;
    if (rank == 1) {
        inner = elements;
    } else {
        // Innermost between 64 and 16384 elements, not more than the budget allows.
        const double hi = std::min<double>(16384, std::max<double>(64, std::sqrt(double(elements)) * 4));
        inner = static_cast<std::int64_t>(std::exp(rng_.uniform(std::log(64.0), std::log(hi))));
        if (!aligned && rng_.uniform01() < 0.6) {
            std::vector<std::int64_t> fits;
            for (auto s : odd_sizes)
                if (s <= hi) fits.push_back(s);
            if (!fits.empty()) inner = pick(fits);
        }
    }
    if (aligned) {
        inner = std::max(unit, inner / unit * unit);
    } else {
        if (inner % unit) inner += unit - inner % unit;
        // Not a multiple of the 512-byte unit: make it odd (or odd multiple of inner_multiple).
        while ((inner * static_cast<std::int64_t>(dtype_size(dtype))) % 512 == 0 || (inner / unit) % 2 == 0) inner += unit;
        if (rank == 1 && unit == 1 && rng_.uniform01() < 0.5) {
            while (!is_prime(inner)) inner += 2;  // prime sizes like 1000003
        }
    }
    Shape s(static_cast<std::size_t>(rank), 1);
    s.back() = inner;
    std::int64_t rest = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(double(elements) / double(inner))));
    // Spread the rest over the outer dims, largest first.
    for (int d = 0; d < rank - 1; ++d) {
        const int dims_left = rank - 1 - d;
        if (dims_left == 1) {
            s[static_cast<std::size_t>(d)] = rest;
            break;
        }
        const double target = std::pow(double(rest), 1.0 / dims_left);
        std::int64_t v = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(target * rng_.uniform(0.5, 1.5))));
        v = std::min(v, rest);
        s[static_cast<std::size_t>(d)] = v;
        rest = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(double(rest) / double(v))));
    }
    return s;
}

}  // namespace hb
