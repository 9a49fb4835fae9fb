#include "measure/timing_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace hb {

int TimingPlan::warmup_calls() const { return std::max(warmup, input_slots); }

std::string TimingPlan::describe() const {
    return fmt::format("{} warmup calls (--warmup {}, at least one on each of the {} input slots), {}, {} verified "
                       "timed calls, fresh inputs per timed call",
                       warmup_calls(), warmup, input_slots, stopping.describe(), verified_calls);
}

}  // namespace hb
