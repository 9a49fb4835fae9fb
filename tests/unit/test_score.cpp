// The score anchors users rely on: 75 at baseline speed, 100 at the hardware limit.
#include <gtest/gtest.h>

#include <cmath>

#include "score/score.hpp"

namespace hb {
namespace {

std::vector<CaseScoreInput> all(CaseStatus status, double score_i, int n = 20) {
    return std::vector<CaseScoreInput>(static_cast<std::size_t>(n), CaseScoreInput{status, score_i});
}

TEST(Score, BaselineSpeedScoresHalf) { EXPECT_DOUBLE_EQ(case_performance_score(50, 50, 5), 0.5); }

TEST(Score, HardwareLimitScoresOne) { EXPECT_DOUBLE_EQ(case_performance_score(5, 50, 5), 1.0); }

TEST(Score, FullyCorrectAtBaselineIs75) {
    const double s = case_performance_score(40, 40, 4);
    EXPECT_NEAR(operator_score(all(CaseStatus::pass, s), false).op_score, 75.0, 1e-9);
}

TEST(Score, FullyCorrectAtHardwareLimitIs100) {
    const double s = case_performance_score(4, 40, 4);
    EXPECT_NEAR(operator_score(all(CaseStatus::pass, s), false).op_score, 100.0, 1e-9);
}

TEST(Score, CompileFailureZeroesOperator) {
    EXPECT_EQ(operator_score(all(CaseStatus::compile_error, 0), true).op_score, 0.0);
}

TEST(Score, PrecisionFailureKeepsCompileCreditOnly) {
    // Not structural: 20 points of compile credit remain, nothing else.
    EXPECT_NEAR(operator_score(all(CaseStatus::precision_fail, 0.9), false).op_score, 20.0, 1e-9);
}

TEST(Score, StructuralFailureLosesCompileCredit) {
    auto cases = all(CaseStatus::pass, 0.5, 10);
    cases[0].status = CaseStatus::crash;
    const auto s = operator_score(cases, false);
    EXPECT_EQ(s.structural_failures, 1);
    EXPECT_NEAR(s.compile_term, 18.0, 1e-9);
    EXPECT_NEAR(s.correctness_term, 27.0, 1e-9);
    EXPECT_NEAR(s.performance_term, 22.5, 1e-9);
}

TEST(Score, BaselineIsCappedAtTenTimesHardwareLimit) {
    EXPECT_DOUBLE_EQ(capped_baseline_us(500, 10, 0), 100);
    EXPECT_DOUBLE_EQ(capped_baseline_us(50, 10, 0), 50);
    EXPECT_DOUBLE_EQ(capped_baseline_us(NAN, 10, 0), 100);
    EXPECT_DOUBLE_EQ(capped_baseline_us(5, 0.1, 10), 5);  // accelerator floor of 10 us
    EXPECT_DOUBLE_EQ(capped_baseline_us(NAN, 0.1, 10), 10);
}

TEST(Score, UndefinedScoreIsZero) {
    EXPECT_EQ(case_performance_score(0, 50, 5), 0);
    EXPECT_EQ(case_performance_score(NAN, 50, 5), 0);
    EXPECT_EQ(case_performance_score(10, 5, 5), 0);  // T_base == T_HW: denominator 5 > 0 but numerator 0
    EXPECT_EQ(case_performance_score(4, 4, 5), 0);   // non-positive denominator
}

TEST(Score, FasterThanHardwareLimitExceedsOne) {
    // The reference does not clip; hapbench flags such times as IMPOSSIBLE_TIME separately.
    EXPECT_GT(case_performance_score(4, 50, 5), 1.0);
}

}  // namespace
}  // namespace hb
