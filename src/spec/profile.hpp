// Case-size profiles: `cpu` (about 1e4 to 3e7 input elements) and `accel` (about 1e6 to
// 3e8, for the cuda and ascend targets), each split into three size regimes.
#pragma once

#include <cstdint>
#include <string>

namespace hb {

enum class Regime { small, medium, large };
std::string regime_name(Regime r);

struct Profile {
    std::string name;
    std::int64_t min_elements;
    std::int64_t max_elements;
    std::int64_t small_below;   // small: [min, small_below)
    std::int64_t medium_below;  // medium: [small_below, medium_below); large: the rest
    Regime regime_of(std::int64_t elements) const;
};

const Profile& profile_by_name(const std::string& name);  // throws with the known names
const Profile& default_profile_for_target(const std::string& target);

}  // namespace hb
