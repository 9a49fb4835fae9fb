#include "measure/timing_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace hb {

int TimingPlan::slots_for(std::uint64_t input_bytes) const {
    const std::uint64_t fit = input_bytes ? slot_pool_bytes / input_bytes : static_cast<std::uint64_t>(max_slots);
    return static_cast<int>(std::clamp<std::uint64_t>(fit, 2, static_cast<std::uint64_t>(std::max(2, max_slots))));
}

std::string TimingPlan::describe() const {
    return fmt::format("warmup {}, {}, {} verified timed calls, fresh inputs per timed call", warmup,
                       stopping.describe(), verified_calls);
}

}  // namespace hb
