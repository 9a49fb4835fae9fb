// The harness's OpenMP helper threads run at idle priority, its own (calling) thread does not.
#include <gtest/gtest.h>

#include <sched.h>

#include <vector>

#include <omp.h>

#include "measure/harness_threads.hpp"

namespace hb {
namespace {

TEST(HarnessThreads, HelpersGoIdleTheCallingThreadKeepsItsPolicy) {
    const int lowered = lower_harness_helpers_to_idle();
    std::vector<int> policies(static_cast<std::size_t>(omp_get_max_threads()), -1);
#pragma omp parallel
    policies[static_cast<std::size_t>(omp_get_thread_num())] = sched_getscheduler(0);
    EXPECT_EQ(lowered, static_cast<int>(policies.size()) - 1);
    EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
    EXPECT_EQ(policies[0], SCHED_OTHER);
    for (std::size_t t = 1; t < policies.size(); ++t) EXPECT_EQ(policies[t], SCHED_IDLE) << "helper " << t;
    // Again: nothing to lower twice, and the pool keeps its threads.
    EXPECT_EQ(lower_harness_helpers_to_idle(), lowered);
}

}  // namespace
}  // namespace hb
