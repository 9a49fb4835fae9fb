// The reference kernels of the level-4 recurrences and fused MoE operator (group l4b: gru,
// lstm, grouped_matmul_swiglu_quant) pass every public case and a hidden split drawn from
// another seed (correctness only: CI's time), and so does the tuned lstm.
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

const char* const l4b_ops = " --op gru --op lstm --op grouped_matmul_swiglu_quant";

void expect_every_case_passes(const std::string& submission, const std::string& ops, const std::string& extra,
                              std::size_t expected_cases) {
    const std::string args = std::string("eval --no-perf --format json --submission ") + HB_SOURCE_DIR +
                             "/examples/cpu/" + submission + ops + extra;
    const CommandResult r = run_hapbench(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json run = r.json();
    std::size_t cases = 0;
    for (const auto& c : run.at("cases")) {
        ++cases;
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("operator") << " case " << c.at("case_id") << ": "
                                                << c.at("status") << " " << c.at("message");
        EXPECT_EQ(c.at("level").get<int>(), 4);
    }
    EXPECT_EQ(cases, expected_cases);
}

TEST(ReferenceLevel4L4b, EveryPublicCasePasses) { expect_every_case_passes("reference", l4b_ops, "", 3 * 20); }

TEST(ReferenceLevel4L4b, AHiddenSplitPasses) {
    expect_every_case_passes("reference", l4b_ops, " --split hidden --hidden-seed 4243 --hidden-count 6", 3 * 6);
}

TEST(ReferenceLevel4L4b, TheTunedLstmPassesEveryPublicCaseAndAHiddenSplit) {
    expect_every_case_passes("tuned", " --op lstm", "", 20);
    expect_every_case_passes("tuned", " --op lstm", " --split hidden --hidden-seed 4244 --hidden-count 8", 8);
}

}  // namespace
}  // namespace hb::test
