// The example submissions on the level-3 operators of group l3d (moe_re_routing, nms,
// strided_slice, top_k, transpose, unique): the reference kernels pass every public case and
// a hidden split, the tuned kernels (top_k, transpose) the same, correctness only; and a timed
// run of outputs of data-dependent length (unique, nms) scores like any other case.
#include <gtest/gtest.h>

#include <set>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

const std::string l3d_ops = " --op moe_re_routing --op nms --op strided_slice --op top_k --op transpose --op unique";

// Every case of the run passed; returns how many there were.
int expect_all_passed(const CommandResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0 && r.out.empty()) return 0;
    int cases = 0;
    const nlohmann::json run = r.json();  // kept alive: the loop walks into it
    for (const auto& c : run.at("cases")) {
        ++cases;
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("operator") << " case " << c.at("case_id") << ": " << c.at("status") << " "
                                                << c.at("message");
    }
    return cases;
}

const std::string reference = std::string(HB_SOURCE_DIR) + "/examples/cpu/reference";
const std::string tuned = std::string(HB_SOURCE_DIR) + "/examples/cpu/tuned";

TEST(Level3L3dSubmissions, ReferencePassesEveryPublicCase) {
    EXPECT_EQ(expect_all_passed(run_hapbench("eval --no-perf --submission " + reference + l3d_ops + " --format json")), 6 * 20);
}

TEST(Level3L3dSubmissions, ReferencePassesAHiddenSplit) {
    const auto r = run_hapbench("eval --no-perf --split hidden --hidden-seed 20261201 --hidden-count 5 --submission " + reference +
                                l3d_ops + " --format json");
    EXPECT_EQ(expect_all_passed(r), 6 * 5);
}

TEST(Level3L3dSubmissions, TunedTopKAndTransposePassEveryPublicCaseAndAHiddenSplit) {
    EXPECT_EQ(expect_all_passed(run_hapbench("eval --no-perf --submission " + tuned + " --op top_k --op transpose --format json")), 40);
    EXPECT_EQ(expect_all_passed(run_hapbench("eval --no-perf --split hidden --hidden-seed 77 --hidden-count 5 --submission " + tuned +
                                             " --op top_k --op transpose --format json")),
              10);
}

// A timed run of unique and nms through the variable-length plumbing: every verified timed
// call's reported length is judged, and the cases get a T_HW and a score.
TEST(Level3L3dSubmissions, TimedRunOfVariableLengthOutputsScores) {
    const auto r = run_hapbench("eval --submission " + reference + " --op unique --op nms --case 1 --case 2 --hardware cpu-example"
                                " --warmup 1 --min-calls 1 --max-calls 2 --format json");
    ASSERT_EQ(expect_all_passed(r), 4);
    const nlohmann::json run = r.json();
    for (const auto& c : run.at("cases")) {
        EXPECT_GT(c.at("t_hw_us").get<double>(), 0);
        EXPECT_GT(c.at("t_cand_us").get<double>(), 0);
        EXPECT_GE(c.at("verified_timed_calls").get<int>(), 1);
        EXPECT_EQ(c.at("baseline_status"), "measured");
    }
}

}  // namespace
}  // namespace hb::test
