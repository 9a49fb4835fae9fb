#include "spec/profile.hpp"

#include "core/error.hpp"

namespace hb {

std::string regime_name(Regime r) {
    switch (r) {
        case Regime::small: return "small";
        case Regime::medium: return "medium";
        case Regime::large: return "large";
    }
    return "?";
}

Regime Profile::regime_of(std::int64_t elements) const {
    if (elements < small_below) return Regime::small;
    if (elements < medium_below) return Regime::medium;
    return Regime::large;
}

namespace {
// cpu: small fits in L2 (<= ~1 MiB of fp32 input), large is well past a typical LLC.
const Profile cpu_profile{"cpu", 10'000, 30'000'000, 200'000, 3'000'000};
const Profile accel_profile{"accel", 1'000'000, 300'000'000, 4'000'000, 50'000'000};
}  // namespace

const Profile& profile_by_name(const std::string& name) {
    if (name == "cpu") return cpu_profile;
    if (name == "accel") return accel_profile;
    throw Error("unknown case profile '" + name + "' (known: cpu, accel)");
}

const Profile& default_profile_for_target(const std::string& target) {
    return target == "cpu" ? cpu_profile : accel_profile;
}

}  // namespace hb
