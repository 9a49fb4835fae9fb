// Element budgets of drawn cases for operators whose evaluation costs several passes over
// their data per call (sorts, selections, data movement with a strided side): the cpu
// profile's large regime spans 3e6 to 3e7 input elements, and drawing up to its top would
// spend most of the public suite's time budget on a handful of cases. Such an operator takes
// its large cases from the regime's lower end (still large: past a typical last-level cache,
// bandwidth bound), mapping the generic draw log-linearly onto [low end, large_max].
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "spec/case_sampler.hpp"

namespace hb {

// The draw's element target, a large-regime draw mapped onto [medium_below * 1.05,
// min(max_elements, large_factor * medium_below)]; small and medium draws unchanged.
inline std::int64_t budgeted_elements(const CaseSampler& sampler, double large_factor) {
    const CaseDraw& d = sampler.draw();
    const Profile& p = sampler.profile();
    if (d.regime != Regime::large) return d.target_elements;
    const double lo = static_cast<double>(p.medium_below) * 1.05;
    const double hi = static_cast<double>(p.max_elements) * 0.9;
    const double cap = std::min(static_cast<double>(p.max_elements), large_factor * static_cast<double>(p.medium_below));
    if (cap <= lo || hi <= lo) return d.target_elements;
    const double t = std::clamp(std::log(static_cast<double>(d.target_elements) / lo) / std::log(hi / lo), 0.0, 1.0);
    return static_cast<std::int64_t>(lo * std::pow(cap / lo, t));
}

}  // namespace hb
