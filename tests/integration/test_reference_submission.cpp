// The bundled reference submission passes every public case (every level; correctness
// only, which is what CI's time allows), and a timed run of one operator of each kind
// (elementwise, normalization, index) on two small cases each (13 and 15: an ordinary range
// and one with infinities), with reduced repeats against the example hardware model (no
// calibration in tests), carries the fields scripts rely on in every case. The timed run's
// assertions do not depend on how fast anything runs, so the file runs beside others.
#include <gtest/gtest.h>

#include <filesystem>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

class ReferenceSubmission : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        const std::string submission = std::string("eval --submission ") + HB_SOURCE_DIR + "/examples/cpu/reference";
        correctness_ = new nlohmann::json(run_hapbench(submission + " --no-perf --format json").json());
        run_ = new nlohmann::json(run_hapbench(submission + " --op exp --op softmax --op gather --case 13 --case 15"
                                                            " --hardware cpu-example --warmup 1 --min-calls 1 --max-calls 2"
                                                            " --format json")
                                      .json());
    }
    static void TearDownTestSuite() {
        delete run_;
        delete correctness_;
    }
    static nlohmann::json* correctness_;  // every operator, --no-perf
    static nlohmann::json* run_;          // three operators, two cases each, timed
};
nlohmann::json* ReferenceSubmission::correctness_ = nullptr;
nlohmann::json* ReferenceSubmission::run_ = nullptr;

TEST_F(ReferenceSubmission, EveryPublicCasePassesCorrectness) {
    int cases = 0;
    for (const auto& c : correctness_->at("cases")) {
        ++cases;
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("operator") << " case " << c.at("case_id") << ": "
                                                << c.at("status") << " " << c.at("message");
    }
    // 20 public cases per operator in suite/, every level: every suite/levelN/<op> is evaluated.
    EXPECT_EQ(cases, 20 * static_cast<int>(correctness_->at("operators").size()));
    const std::size_t suite_operators = suite_operator_count();
    EXPECT_GE(suite_operators, 8u + 16u);
    EXPECT_EQ(correctness_->at("operators").size(), suite_operators);
}

TEST_F(ReferenceSubmission, ResultsCarryTheDocumentedFields) {
    for (const char* field : {"cases", "operators", "total_score", "environment", "suite", "timing_plan", "phases_s"})
        EXPECT_TRUE(run_->contains(field)) << field;
    ASSERT_EQ(run_->at("cases").size(), 6u);
    for (const auto& c : run_->at("cases"))
        for (const char* field : {"operator", "level", "case_id", "status", "passed", "t_cand_us", "t_base_us", "t_hw_us",
                                  "bottleneck", "score", "precision", "candidate_timing", "baseline_timing"})
            EXPECT_TRUE(c.contains(field)) << c.value("operator", "?") << " case " << c.value("case_id", 0) << ": " << field;
    ASSERT_EQ(run_->at("operators").size(), 3u);
    for (const auto& op : run_->at("operators"))
        for (const char* field : {"operator", "level", "op_score", "state", "cases", "passed", "compile_term",
                                  "correctness_term", "performance_term"})
            EXPECT_TRUE(op.contains(field)) << op.value("operator", "?") << ": " << field;
    EXPECT_EQ(run_->at("environment").at("hardware").at("name"), "cpu-example");
    // hapbench restarted itself so that its OpenMP helpers sleep beside timed kernels.
    EXPECT_EQ(run_->at("environment").at("harness_threads"), "passive");
}

TEST_F(ReferenceSubmission, EveryTimedCasePassesAndIsTimedAndBounded) {
    for (const auto& c : run_->at("cases")) {
        SCOPED_TRACE(c.at("operator").get<std::string>() + " case " + std::to_string(c.at("case_id").get<int>()));
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("status") << " " << c.at("message");
        EXPECT_GT(c.at("t_hw_us").get<double>(), 0);
        EXPECT_GT(c.at("t_cand_us").get<double>(), 0);
        EXPECT_GT(c.at("t_base_us").get<double>(), 0);
        EXPECT_GE(c.at("verified_timed_calls").get<int>(), 1);
        EXPECT_GE(c.at("candidate_timing").at("count").get<int>(), 1);
    }
}

TEST_F(ReferenceSubmission, OperatorScoresAddUpToTheTotal) {
    double sum = 0;
    for (const auto& op : run_->at("operators")) {
        const double s = op.at("op_score");
        EXPECT_GE(s, 50.0) << op.at("operator");  // compile + correctness credit at least
        EXPECT_LE(s, 100.0) << op.at("operator");
        sum += s;
    }
    EXPECT_NEAR(sum, run_->at("total_score").get<double>(), 1e-6);
}

}  // namespace
}  // namespace hb::test
