// Element budgets of the level-4 attention-family cases (gqa, mha, mla, mla_prolog,
// sparse_flash_attention). Every timed call of a case draws fresh inputs, and these operators'
// reference kernels, baselines and goldens cost hundreds of operations per input element, so
// the suite's five operators must stay near the bottom of each regime to evaluate within 150 s
// on a small CPU: medium draws are mapped (on a log scale) into [1.05, 5] x small_below (cpu:
// 2.1e5 to 1e6 input elements), large ones into [1.02, 1.4] x medium_below (3.06e6 to 4.2e6).
// Small draws are kept as drawn, and the regime is unchanged, so every rule of methodology
// section 2 still holds.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "spec/case_sampler.hpp"

namespace hb {

inline std::int64_t attention_budgeted_elements(const CaseSampler& sampler) {
    const CaseDraw& d = sampler.draw();
    const Profile& p = sampler.profile();
    if (d.regime == Regime::small) return d.target_elements;
    const bool large = d.regime == Regime::large;
    const double lo = static_cast<double>(large ? p.medium_below : p.small_below);
    const double hi = static_cast<double>(large ? p.max_elements : p.medium_below);
    const double t = std::clamp(static_cast<double>(d.target_elements), lo, hi);
    const double where = std::log(t / lo) / std::log(hi / lo);  // 0 .. 1 in the drawn regime
    const double new_lo = (large ? 1.02 : 1.05) * lo, new_hi = std::min(hi * 0.95, (large ? 1.4 : 5.0) * lo);
    return static_cast<std::int64_t>(new_lo * std::pow(new_hi / new_lo, where));
}

// The fewest input elements a case of the draw's regime may hold (with 1% to spare): shapes
// rounded down from the budget must still land in the drawn regime.
inline std::int64_t regime_floor_elements(const CaseSampler& sampler) {
    const Profile& p = sampler.profile();
    const Regime r = sampler.draw().regime;
    const std::int64_t floor = r == Regime::small ? p.min_elements : r == Regime::medium ? p.small_below : p.medium_below;
    return floor + floor / 100;
}

}  // namespace hb
