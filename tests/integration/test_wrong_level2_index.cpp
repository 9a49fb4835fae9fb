// Deliberately wrong kernels of the level-2 index operators (tests/data/wrong_level2) fail
// the correctness gate: each holds one plausible bug, and the public cases must catch it.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

// Statuses of the operator's public cases when the wrong kernel is evaluated.
std::map<std::string, int> statuses_of_wrong_kernel(const std::string& op) {
    const CommandResult r = run_hapbench(std::string("eval --submission ") + HB_TEST_DATA_DIR + "/wrong_level2 --op " + op +
                                         " --no-perf --format json");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    std::map<std::string, int> counts;
    const nlohmann::json run = r.json();  // kept alive: the loop below walks into it
    for (const auto& c : run.at("cases")) ++counts[c.at("status").get<std::string>()];
    return counts;
}

std::string describe(const std::map<std::string, int>& counts) {
    std::string s;
    for (const auto& [status, n] : counts) s += status + " x" + std::to_string(n) + " ";
    return s;
}

// Picks the last of tied maxima: every case with a tied maximum fails.
TEST(WrongLevel2Index, ArgMaxKeepingTheLastTieFailsPrecision) {
    const auto counts = statuses_of_wrong_kernel("arg_max");
    EXPECT_GE(counts.count("PRECISION_FAIL") ? counts.at("PRECISION_FAIL") : 0, 10) << describe(counts);
}

// Keeps the first of tied running minima: the index output fails where minima tie.
TEST(WrongLevel2Index, CumminKeepingTheFirstTieFailsPrecision) {
    const auto counts = statuses_of_wrong_kernel("cummin");
    EXPECT_GE(counts.count("PRECISION_FAIL") ? counts.at("PRECISION_FAIL") : 0, 10) << describe(counts);
}

// Uses the index's strides for x: fails where index is smaller than x outside dim.
TEST(WrongLevel2Index, GatherWithTheIndexStridesFailsPrecision) {
    const auto counts = statuses_of_wrong_kernel("gather");
    EXPECT_GE(counts.count("PRECISION_FAIL") ? counts.at("PRECISION_FAIL") : 0, 1) << describe(counts);
}

// Leaves data out of amin/amax (include_self=False): the amin and amax cases fail.
TEST(WrongLevel2Index, ScatterWithoutSelfInMinMaxFailsPrecision) {
    const auto counts = statuses_of_wrong_kernel("scatter");
    EXPECT_GE(counts.count("PRECISION_FAIL") ? counts.at("PRECISION_FAIL") : 0, 4) << describe(counts);
}

}  // namespace
}  // namespace hb::test
