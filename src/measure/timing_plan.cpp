#include "measure/timing_plan.hpp"

#include <algorithm>
#include <cmath>

namespace hb {

int TimingPlan::repeat_for(double estimate_s) const {
    if (!(estimate_s > 0)) return max_repeat;
    const double wanted = std::ceil(target_s / estimate_s);
    return static_cast<int>(std::clamp<double>(wanted, min_repeat, std::max(min_repeat, max_repeat)));
}

}  // namespace hb
