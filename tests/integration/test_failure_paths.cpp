// Real bad submissions (tests/data/bad_submission) earn their documented statuses, and the
// other operators of the same submission are still evaluated and scored.
// Runs alone: a 4 s budget per operator must run out for the endless loop and for no other.
// ctest: RUN_SERIAL
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

class FailurePaths : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        result_ = new CommandResult(run_hapbench(std::string("eval --submission ") + HB_TEST_DATA_DIR +
                                                 "/bad_submission --case 1 --case 2 --no-perf --timeout 4 --format json"));
    }
    static void TearDownTestSuite() { delete result_; }
    static std::string status_of(const std::string& op) {
        const auto run = result_->json();
        for (const auto& c : run.at("cases"))
            if (c.at("operator") == op) return c.at("status");
        return "absent";
    }
    static CommandResult* result_;
};
CommandResult* FailurePaths::result_ = nullptr;

TEST_F(FailurePaths, RunCompletesWithFailureExitCode) {
    EXPECT_EQ(result_->exit_code, 1) << result_->err;
    EXPECT_NO_THROW(result_->json()) << result_->out.substr(0, 500);
}

TEST_F(FailurePaths, CompileErrorZeroesTheOperator) {
    EXPECT_EQ(status_of("sigmoid"), "COMPILE_ERROR");
    const auto run = result_->json();
    const auto* op = find_operator(run, "sigmoid");
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->at("op_score"), 0.0);
    EXPECT_NE(op->at("build").at("log").get<std::string>().find("error"), std::string::npos);
}

TEST_F(FailurePaths, SegfaultIsACrash) { EXPECT_EQ(status_of("exp"), "CRASH"); }

TEST_F(FailurePaths, InfiniteLoopTimesOut) { EXPECT_EQ(status_of("gelu"), "TIMEOUT"); }

TEST_F(FailurePaths, WrongOutputShapeIsOutOfBounds) { EXPECT_EQ(status_of("swi_glu"), "OUT_OF_BOUNDS"); }

TEST_F(FailurePaths, ErrorReturnIsKernelErrorWithMessage) {
    EXPECT_EQ(status_of("mish"), "KERNEL_ERROR");
    const auto run = result_->json();  // kept alive: the loop walks into it
    for (const auto& c : run.at("cases")) {
        if (c.at("operator") == "mish") {
            EXPECT_NE(c.at("message").get<std::string>().find("refuses every case"), std::string::npos);
        }
    }
}

TEST_F(FailurePaths, HalfWrittenOutputIsUnwritten) { EXPECT_EQ(status_of("foreach_addcdiv_scalar"), "OUTPUT_UNWRITTEN"); }

TEST_F(FailurePaths, MissingFileIsMissing) { EXPECT_EQ(status_of("masked_scale"), "MISSING"); }

TEST_F(FailurePaths, CorrectOperatorStillPassesAndScores) {
    EXPECT_EQ(status_of("foreach_norm"), "PASS");
    const auto run = result_->json();
    const auto* op = find_operator(run, "foreach_norm");
    ASSERT_NE(op, nullptr);
    EXPECT_NEAR(op->at("op_score").get<double>(), 50.0, 1e-9);  // compile + correctness, no perf
}

TEST_F(FailurePaths, StructuralFailuresLoseCompileCredit) {
    const auto run = result_->json();
    const auto* op = find_operator(run, "exp");
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->at("structural_failures"), 2);
    EXPECT_EQ(op->at("op_score"), 0.0);
}

}  // namespace
}  // namespace hb::test
