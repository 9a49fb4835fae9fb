#include "measure/timing_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace hb {

int TimingPlan::warmup_calls(int slots) const { return std::max(warmup, slots - 1); }

std::string TimingPlan::describe() const {
    return fmt::format("{} warmup call{} (--warmup {}, at least one on each of the {} input slots but the base "
                       "inputs', which the correctness calls warmed), {}, {} verified timed calls, fresh inputs per "
                       "timed call",
                       warmup_calls(), warmup_calls() == 1 ? "" : "s", warmup, input_slots, stopping.describe(),
                       verified_calls);
}

}  // namespace hb
