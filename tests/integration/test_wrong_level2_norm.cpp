// Deliberately wrong level-2 normalization kernels (tests/data/wrong_level2) each carry one
// plausible bug that the precision gate must catch on the cases that exercise it, while the
// cases that do not exercise it still pass: softmax without the max subtraction (overflows
// on wide ranges), rms_norm over the last dim only (wrong when gamma names several dims),
// group_norm with round-robin channel groups (wrong when a group holds several channels).
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

class WrongLevel2Norm : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        result_ = new CommandResult(run_hapbench(std::string("eval --submission ") + HB_TEST_DATA_DIR +
                                                 "/wrong_level2 --op softmax --op rms_norm --op group_norm"
                                                 " --case 1 --case 5 --case 7 --case 9 --no-perf --format json"));
    }
    static void TearDownTestSuite() { delete result_; }
    static std::string status_of(const std::string& op, int case_id) {
        const auto run = result_->json();  // kept alive: the loop iterates into it
        for (const auto& c : run.at("cases"))
            if (c.at("operator") == op && c.at("case_id") == case_id) return c.at("status");
        return "absent";
    }
    static CommandResult* result_;
};
CommandResult* WrongLevel2Norm::result_ = nullptr;

TEST_F(WrongLevel2Norm, RunFinishesWithFailures) {
    EXPECT_EQ(result_->exit_code, 1) << result_->err;
    EXPECT_NO_THROW(result_->json()) << result_->out.substr(0, 500);
}

TEST_F(WrongLevel2Norm, SoftmaxWithoutMaxSubtractionFailsOnWideRanges) {
    EXPECT_EQ(status_of("softmax", 1), "PASS");             // [-0.25, 0.25]
    EXPECT_EQ(status_of("softmax", 9), "PRECISION_FAIL");   // [-1000, 1000]: e^x overflows
    EXPECT_EQ(status_of("softmax", 7), "PRECISION_FAIL");   // fp16 boundary range
}

TEST_F(WrongLevel2Norm, RmsNormOverTheLastDimOnlyFailsWhenGammaHasSeveralDims) {
    EXPECT_EQ(status_of("rms_norm", 1), "PASS");            // gamma [256]
    EXPECT_EQ(status_of("rms_norm", 7), "PRECISION_FAIL");  // gamma [3, 256]
}

TEST_F(WrongLevel2Norm, GroupNormWithRoundRobinGroupsFailsWithSeveralChannelsPerGroup) {
    EXPECT_EQ(status_of("group_norm", 1), "PASS");            // one group
    EXPECT_EQ(status_of("group_norm", 5), "PRECISION_FAIL");  // x [4464, 800], 32 groups of 25 channels
}

}  // namespace
}  // namespace hb::test
