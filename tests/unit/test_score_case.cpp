// Stage 6 of a case (eval/score_case): the IMPOSSIBLE_TIME check with its 10% margin on
// calibrated models and none on published ones, the capped baseline, and what an
// IMPOSSIBLE_TIME case keeps (its correctness credit) and loses (score_i).
#include <gtest/gtest.h>

#include "eval/score_case.hpp"
#include "hap/hardware_model.hpp"

namespace hb {
namespace {

HardwareModel model_of(PeakOrigin origin) {
    HardwareModel m = load_hardware_model("cpu-example");
    m.provenance.origin = origin;
    return m;
}

// A passing, timed case with hapbench's bound at 100 us and a measured baseline of 400 us.
CaseResult timed_case(double t_cand_us) {
    CaseResult c;
    c.status = CaseStatus::pass;
    c.t_hw_us = 100;
    c.t_hw_bound_us = 100;
    c.t_base_measured_us = 400;
    c.candidate.samples_us = {t_cand_us};
    c.candidate.stats.count = 1;
    c.candidate.stats.median = t_cand_us;
    c.t_cand_us = t_cand_us;
    return c;
}

CaseResult scored(double t_cand_us, PeakOrigin origin, double margin = 0.10) {
    CaseResult c = timed_case(t_cand_us);
    score_case(c, model_of(origin), margin, Convention::hapbench);
    return c;
}

TEST(ScoreCase, CalibratedModelAllowsTenPercentBelowTheBound) {
    const CaseResult within = scored(91, PeakOrigin::calibrated);
    EXPECT_EQ(within.status, CaseStatus::pass);
    EXPECT_GT(within.score_i, 1.0);  // faster than T_HW scores above 1
    EXPECT_TRUE(within.audit.empty());

    const CaseResult below = scored(89, PeakOrigin::calibrated);
    EXPECT_EQ(below.status, CaseStatus::impossible_time);
    EXPECT_EQ(below.score_i, 0);
    EXPECT_TRUE(below.passed());
    ASSERT_EQ(below.audit.size(), 1u);
    EXPECT_NE(below.audit[0].find("minus the 10% calibration margin"), std::string::npos) << below.audit[0];
    EXPECT_EQ(below.message, below.audit[0]);
}

TEST(ScoreCase, PublishedModelHasNoMargin) {
    const CaseResult at = scored(100, PeakOrigin::published);
    EXPECT_EQ(at.status, CaseStatus::pass);
    EXPECT_DOUBLE_EQ(at.score_i, 1.0);

    const CaseResult below = scored(99, PeakOrigin::published);
    EXPECT_EQ(below.status, CaseStatus::impossible_time);
    EXPECT_EQ(below.score_i, 0);
    ASSERT_EQ(below.audit.size(), 1u);
    EXPECT_EQ(below.audit[0].find("margin"), std::string::npos) << below.audit[0];
}

TEST(ScoreCase, TheMarginIsTheOptionsValue) {
    EXPECT_EQ(scored(89, PeakOrigin::calibrated, 0.20).status, CaseStatus::pass);
    EXPECT_EQ(scored(79, PeakOrigin::calibrated, 0.20).status, CaseStatus::impossible_time);
}

// The operator composite keeps an IMPOSSIBLE_TIME case's compile and correctness credit and
// gives it no performance credit.
TEST(ScoreCase, ImpossibleTimeKeepsCorrectnessCreditOnly) {
    OperatorResult o;
    o.state = "evaluated";
    o.cases = {scored(50, PeakOrigin::calibrated), scored(50, PeakOrigin::calibrated)};
    score_operator(o);
    EXPECT_EQ(o.score.passed, 2);
    EXPECT_EQ(o.score.structural_failures, 0);
    EXPECT_DOUBLE_EQ(o.score.compile_term, 20);
    EXPECT_DOUBLE_EQ(o.score.correctness_term, 30);
    EXPECT_DOUBLE_EQ(o.score.performance_term, 0);
    EXPECT_DOUBLE_EQ(o.score.op_score, 50);
}

TEST(ScoreCase, OnlyPassingTimedCasesAreChecked) {
    CaseResult failed = timed_case(1);
    failed.status = CaseStatus::precision_fail;
    score_case(failed, model_of(PeakOrigin::published), 0.10, Convention::hapbench);
    EXPECT_EQ(failed.status, CaseStatus::precision_fail);
    EXPECT_EQ(failed.score_i, 0);

    CaseResult untimed = timed_case(1);
    untimed.candidate = TimingResult{};
    score_case(untimed, model_of(PeakOrigin::published), 0.10, Convention::hapbench);
    EXPECT_EQ(untimed.status, CaseStatus::pass);
    EXPECT_EQ(untimed.score_i, 0);
}

TEST(ScoreCase, BaselineIsCappedAtTenTimesTheLimit) {
    CaseResult c = timed_case(200);
    c.t_base_measured_us = 5000;
    score_case(c, model_of(PeakOrigin::published), 0.10, Convention::hapbench);
    EXPECT_DOUBLE_EQ(c.t_base_us, 1000);
    EXPECT_DOUBLE_EQ(c.score_i, (1000.0 - 100) / ((200 - 100) + (1000.0 - 100)));
    EXPECT_DOUBLE_EQ(c.speedup, 1000.0 / 200);
}

}  // namespace
}  // namespace hb
