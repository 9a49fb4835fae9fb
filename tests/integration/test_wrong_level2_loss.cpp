// A deliberately wrong cross_entropy_loss kernel (tests/data/wrong_level2) carries one
// plausible bug the precision gate must catch: reduction mean divides by every position,
// ignored ones included (the plain mean of the 'none' output), so with about one position in
// eight ignored the mean comes out ~12% low. Its none and sum cases still pass.
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

class WrongLevel2Loss : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        result_ = new CommandResult(run_hapbench(std::string("eval --submission ") + HB_TEST_DATA_DIR +
                                                 "/wrong_level2 --op cross_entropy_loss"
                                                 " --case 1 --case 3 --case 4 --case 8 --no-perf --format json"));
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
CommandResult* WrongLevel2Loss::result_ = nullptr;

TEST_F(WrongLevel2Loss, RunFinishesWithFailures) {
    EXPECT_EQ(result_->exit_code, 1) << result_->err;
    EXPECT_NO_THROW(result_->json()) << result_->out.substr(0, 500);
}

TEST_F(WrongLevel2Loss, CrossEntropyMeanOverIgnoredPositionsFailsOnlyForMean) {
    EXPECT_EQ(status_of("cross_entropy_loss", 1), "PRECISION_FAIL");  // mean, ignore_index -100
    EXPECT_EQ(status_of("cross_entropy_loss", 4), "PRECISION_FAIL");  // mean, ignore_index 6 (a class)
    EXPECT_EQ(status_of("cross_entropy_loss", 3), "PASS");            // none
    EXPECT_EQ(status_of("cross_entropy_loss", 8), "PASS");            // sum
}

}  // namespace
}  // namespace hb::test
