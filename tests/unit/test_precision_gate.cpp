// The correctness gate (methodology section 3): screen 1, special values, the three-region
// fallback, bit-exact and integer outputs, index outputs checked by gathering, and the
// case-level walk over outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "verify/index_gather.hpp"
#include "verify/precision_gate.hpp"

namespace hb {
namespace {

using Values = std::vector<double>;
constexpr double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();

OutputVerdict compare(const Values& candidate, const Values& golden, const Values& same_precision,
                      DType dtype, const std::map<DType, double>& overrides = {}) {
    return compare_output(candidate, golden, same_precision, dtype, thresholds_for(dtype, overrides), "y");
}

// ---- screen 1 ------------------------------------------------------------------------

TEST(PrecisionGate, Screen1PassesWithinTolerance) {
    // One element one fp16 ulp off among four: mean 2.4e-4 < 2^-10, max 9.8e-4 < 10*2^-10.
    const Values golden{1.0, 2.0, 0.5, -3.0};
    const OutputVerdict v = compare({1.0009765625, 2.0, 0.5, -3.0}, golden, golden, DType::f16);
    EXPECT_TRUE(v.passed) << v.reason;
    EXPECT_TRUE(v.screen1_passed);
    EXPECT_FALSE(v.fallback_ran);
    EXPECT_EQ(v.compared, 4);
    EXPECT_EQ(v.max_rel_err_index, 0);
    EXPECT_TRUE(v.reason.empty());
}

TEST(PrecisionGate, Screen1FailureWithoutRescueFailsAndSaysWhy) {
    const OutputVerdict v = compare({1.03125}, {1.0}, {1.0}, DType::f16);
    EXPECT_FALSE(v.passed);
    EXPECT_FALSE(v.screen1_passed);
    EXPECT_TRUE(v.fallback_ran);
    EXPECT_NE(v.reason.find("output y: max rel err"), std::string::npos) << v.reason;
    EXPECT_NE(v.reason.find("at index 0 (got 1.03125, expected 1)"), std::string::npos) << v.reason;
    EXPECT_NE(v.reason.find("fallback: normal region 1 errors vs 0 in same-precision reference"),
              std::string::npos)
        << v.reason;
}

TEST(PrecisionGate, GoldenIsRoundedToTheOutputDtypeFirst) {
    // fp64 golden 1.0001 is 1.0 in fp16, so the exact fp16 answer has zero error.
    const OutputVerdict v = compare({1.0}, {1.0001}, {1.0}, DType::f16);
    EXPECT_TRUE(v.passed);
    EXPECT_EQ(v.max_rel_err, 0.0);
}

// fp32 at 2^40: |y| + 1e-7 rounds to |y| in fp64, so e is an exact power-of-two multiple.
constexpr double kBig = 0x1p40;

TEST(PrecisionGate, MeanExactlyAtTauFailsScreen1AndJustBelowPasses) {
    const OutputVerdict at = compare({kBig + 0x1p27}, {kBig}, {kBig}, DType::f32);
    EXPECT_EQ(at.mean_rel_err, 0x1p-13);
    EXPECT_FALSE(at.screen1_passed);
    // No element exceeds 10*tau, so the fallback finds no errors and rescues the case.
    EXPECT_TRUE(at.fallback_ran);
    EXPECT_TRUE(at.passed);

    const OutputVerdict below = compare({kBig + 0x1p27 - 0x1p17}, {kBig}, {kBig}, DType::f32);
    EXPECT_LT(below.mean_rel_err, 0x1p-13);
    EXPECT_TRUE(below.screen1_passed);
    EXPECT_FALSE(below.fallback_ran);
}

TEST(PrecisionGate, MaxExactlyAtTenTauFailsScreen1AndJustBelowPasses) {
    Values golden(16, kBig);
    Values at = golden, below = golden;
    at[3] = kBig + 10 * 0x1p27;
    below[3] = kBig + 10 * 0x1p27 - 0x1p17;
    const OutputVerdict v_at = compare(at, golden, golden, DType::f32);
    EXPECT_EQ(v_at.max_rel_err, v_at.thresholds.max_rel);
    EXPECT_LT(v_at.mean_rel_err, v_at.thresholds.tau);
    EXPECT_FALSE(v_at.screen1_passed);
    EXPECT_EQ(v_at.max_rel_err_index, 3);

    const OutputVerdict v_below = compare(below, golden, golden, DType::f32);
    EXPECT_TRUE(v_below.screen1_passed);
    EXPECT_TRUE(v_below.passed);
}

TEST(PrecisionGate, MaxRuleFailsEvenWhenTheMeanIsSmall) {
    Values golden(100, 1.0);
    Values candidate = golden;
    candidate[42] = 1.03125;  // e = 0.031 > 10*2^-10; mean 3.1e-4 < 2^-10
    const OutputVerdict v = compare(candidate, golden, golden, DType::f16);
    EXPECT_LT(v.mean_rel_err, v.thresholds.tau);
    EXPECT_FALSE(v.screen1_passed);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.max_rel_err_index, 42);
}

// ---- special values --------------------------------------------------------------------

TEST(PrecisionGate, NaNWhereTheGoldenHasNoneFails) {
    const OutputVerdict v = compare({1.0, nan}, {1.0, 2.0}, {1.0, 2.0}, DType::f16);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.nan_mismatches, 1);
    EXPECT_EQ(v.first_nan_mismatch_index, 1);
    EXPECT_NE(v.reason.find("NaN positions differ"), std::string::npos) << v.reason;
}

TEST(PrecisionGate, MissingNaNWhereTheGoldenHasOneFails) {
    const OutputVerdict v = compare({1.0, 2.0}, {1.0, nan}, {1.0, nan}, DType::f32);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.nan_mismatches, 1);
    EXPECT_FALSE(v.fallback_ran);  // a special-value failure is final
}

TEST(PrecisionGate, MatchingNaNsPassAndLeaveTheStatistics) {
    const OutputVerdict v = compare({nan, 1.0}, {nan, 1.0}, {nan, 1.0}, DType::bf16);
    EXPECT_TRUE(v.passed);
    EXPECT_EQ(v.nan_matched, 1);
    EXPECT_EQ(v.compared, 1);
}

TEST(PrecisionGate, SameSignInfinityMatchesAndIsExcludedFromTheMean) {
    const OutputVerdict v = compare({inf, -inf, 1.0009765625}, {inf, -inf, 1.0}, {inf, -inf, 1.0}, DType::f16);
    EXPECT_TRUE(v.passed) << v.reason;
    EXPECT_EQ(v.inf_matched, 2);
    EXPECT_EQ(v.compared, 1);
    // Only the finite element is averaged: counted as zeros, infinities would divide it by 3.
    EXPECT_DOUBLE_EQ(v.mean_rel_err, 0x1p-10 / (1.0 + 1e-7));
}

TEST(PrecisionGate, OppositeSignInfinityFails) {
    const OutputVerdict v = compare({1.0, -inf}, {1.0, inf}, {1.0, inf}, DType::f16);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.inf_sign_mismatches, 1);
    EXPECT_EQ(v.first_inf_sign_mismatch_index, 1);
    EXPECT_NE(v.reason.find("opposite-sign infinity"), std::string::npos) << v.reason;
}

TEST(PrecisionGate, GoldenInfinityAgainstTheDtypeMaximumPasses) {
    // 1e6 overflows fp16, so its truncated golden is inf too.
    const OutputVerdict v = compare({65504.0, -65504.0, 65504.0}, {inf, -inf, 1e6}, {inf, -inf, inf}, DType::f16);
    EXPECT_TRUE(v.passed) << v.reason;
    EXPECT_EQ(v.inf_one_sided, 3);
    EXPECT_EQ(v.compared, 3);
    EXPECT_EQ(v.max_rel_err, 0.0);
}

TEST(PrecisionGate, CandidateInfinityAgainstAFiniteGoldenFails) {
    const OutputVerdict v = compare({inf}, {1.0}, {1.0}, DType::f16);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.inf_one_sided, 1);
    EXPECT_EQ(v.max_rel_err_got, 65504.0);  // compared as sign * dtype max
}

// ---- fallback regions (fp16: tau_sv 2^-11, eps_sv 2^-16, tau_cb = tau_cz 2^-5) ----------------

// `n` elements of golden `y`; the first `cand_errors` candidate elements and the first
// `sp_errors` same-precision elements are replaced by `wrong`.
struct RegionCase {
    Values golden, candidate, same_precision;
};
RegionCase region_case(double y, double wrong, int n, int cand_errors, int sp_errors) {
    RegionCase c{Values(n, y), Values(n, y), Values(n, y)};
    for (int i = 0; i < cand_errors; ++i) c.candidate[i] = wrong;
    for (int i = 0; i < sp_errors; ++i) c.same_precision[i] = wrong;
    return c;
}

// Small-value region: |y| = 2^-12 < 2^-11; an error is |out - y| = 2^-14 > 2^-16.
constexpr double kSmallY = 0x1p-12, kSmallWrong = 0x1p-12 + 0x1p-14;

TEST(PrecisionGateFallback, SmallValueRegionRatioExactlyTwoPasses) {
    const RegionCase c = region_case(kSmallY, kSmallWrong, 8, 2, 1);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_FALSE(v.screen1_passed);
    EXPECT_TRUE(v.fallback_ran);
    EXPECT_EQ(v.candidate_errors.small_value, 2);
    EXPECT_EQ(v.same_precision_errors.small_value, 1);
    EXPECT_TRUE(v.region_passed.small_value);
    EXPECT_TRUE(v.passed) << v.reason;
}

TEST(PrecisionGateFallback, SmallValueRegionRatioAboveTwoFails) {
    const RegionCase c = region_case(kSmallY, kSmallWrong, 8, 3, 1);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_FALSE(v.region_passed.small_value);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.reason.find("small-value region 3 errors vs 1"), std::string::npos) << v.reason;
}

TEST(PrecisionGateFallback, SmallValueRegionAllowsTwoErrorsWhenTheReferenceHasNone) {
    const RegionCase two = region_case(kSmallY, kSmallWrong, 8, 2, 0);
    EXPECT_TRUE(compare(two.candidate, two.golden, two.same_precision, DType::f16).passed);
    const RegionCase three = region_case(kSmallY, kSmallWrong, 8, 3, 0);
    EXPECT_FALSE(compare(three.candidate, three.golden, three.same_precision, DType::f16).passed);
}

TEST(PrecisionGateFallback, SmallValueErrorIsAbsoluteNotRelative) {
    // |out - y| = 2^-16 is not > eps_sv although its relative error is 1/16.
    const RegionCase c = region_case(kSmallY, kSmallY + 0x1p-16, 4, 4, 0);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_FALSE(v.screen1_passed);
    EXPECT_EQ(v.candidate_errors.small_value, 0);
    EXPECT_TRUE(v.passed);
}

// Cancellation region: 2^-11 <= |y| = 2^-6 < 2^-5 and the output 0 has |out| < 2^-5.
constexpr double kCancelY = 0x1p-6;

TEST(PrecisionGateFallback, CancellationRegionRatioExactlyTwoPasses) {
    const RegionCase c = region_case(kCancelY, 0.0, 8, 2, 1);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_EQ(v.candidate_errors.cancellation, 2);
    EXPECT_EQ(v.same_precision_errors.cancellation, 1);
    EXPECT_TRUE(v.region_passed.cancellation);
    EXPECT_TRUE(v.passed) << v.reason;
}

TEST(PrecisionGateFallback, CancellationRegionRatioAboveTwoFails) {
    const RegionCase c = region_case(kCancelY, 0.0, 8, 3, 1);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_FALSE(v.region_passed.cancellation);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.reason.find("cancellation region 3 errors vs 1"), std::string::npos) << v.reason;
}

TEST(PrecisionGateFallback, TheReferenceIsCountedInTheRegionOfTheCandidatesOutput) {
    // Same y in the cancellation band; the candidate's 0 puts the position in the cancellation
    // region, so the reference's error there counts in that region too, although the
    // reference's own output 2^-4 has |out| >= tau_cz.
    const OutputVerdict v = compare({0.0, kCancelY}, {kCancelY, kCancelY}, {0x1p-4, kCancelY}, DType::f16);
    EXPECT_EQ(v.candidate_errors.cancellation, 1);
    EXPECT_EQ(v.candidate_errors.normal, 0);
    EXPECT_EQ(v.same_precision_errors.cancellation, 1);
    EXPECT_EQ(v.same_precision_errors.normal, 0);
    EXPECT_TRUE(v.passed) << v.reason;
}

// Normal region: y = 1, an error is 1.03125 (e = 2^-5 > 10*2^-10).
TEST(PrecisionGateFallback, NormalRegionRatioExactlyTwoPasses) {
    const RegionCase c = region_case(1.0, 1.03125, 8, 2, 1);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_EQ(v.candidate_errors.normal, 2);
    EXPECT_EQ(v.same_precision_errors.normal, 1);
    EXPECT_TRUE(v.region_passed.normal);
    EXPECT_TRUE(v.passed) << v.reason;
}

TEST(PrecisionGateFallback, NormalRegionRatioAboveTwoFails) {
    const RegionCase c = region_case(1.0, 1.03125, 8, 5, 2);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_FALSE(v.region_passed.normal);
    EXPECT_FALSE(v.passed);
}

TEST(PrecisionGateFallback, NormalRegionErrorsWithNoneInTheReferenceFail) {
    const RegionCase c = region_case(1.0, 1.03125, 8, 1, 0);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_EQ(v.candidate_errors.normal, 1);
    EXPECT_FALSE(v.region_passed.normal);
    EXPECT_FALSE(v.passed);
}

TEST(PrecisionGateFallback, NoCandidateErrorsPassesAfterAMeanFailure) {
    // Every element 2^-8 off: mean 3.9e-3 >= 2^-10 fails screen 1, but no e > 10*tau.
    const RegionCase c = region_case(1.0, 1.00390625, 8, 8, 0);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_FALSE(v.screen1_passed);
    EXPECT_TRUE(v.fallback_ran);
    EXPECT_EQ(v.candidate_errors.normal, 0);
    EXPECT_TRUE(v.region_passed.normal);
    EXPECT_TRUE(v.passed);
}

// ---- fresh inputs of timed calls: every region takes the ratio rule, with a floor of one
// error in 10,000 elements ------------------------------------------------------------------

GateResult gate_of(std::vector<OutputVerdict> outputs) {
    GateResult g;
    g.passed = std::all_of(outputs.begin(), outputs.end(), [](const OutputVerdict& v) { return v.passed; });
    g.outputs = std::move(outputs);
    return g;
}

TEST(FreshInputAllowance, APassingGateNeedsNone) {
    const RegionCase c = region_case(1.0, 1.03125, 8, 0, 0);
    EXPECT_EQ(fresh_input_allowance(gate_of({compare(c.candidate, c.golden, c.same_precision, DType::f16)})), 0);
}

TEST(FreshInputAllowance, OneOrTwoNormalErrorsWithNoneInTheReferencePass) {
    for (int errors : {1, 2}) {
        const RegionCase c = region_case(1.0, 1.03125, 8, errors, 0);
        const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
        ASSERT_FALSE(v.passed);  // the case's own inputs keep the zero rule
        EXPECT_EQ(fresh_input_allowance(gate_of({v})), errors);
    }
}

TEST(FreshInputAllowance, ThreeNormalErrorsWithNoneInTheReferenceFail) {
    const RegionCase c = region_case(1.0, 1.03125, 8, 3, 0);
    EXPECT_EQ(fresh_input_allowance(gate_of({compare(c.candidate, c.golden, c.same_precision, DType::f16)})),
              std::nullopt);
}

TEST(FreshInputAllowance, AReducedPrecisionOutputStillFails) {
    // fp32 case computed in bf16: every element about 2^-9 off, far past 10 * 2^-13.
    Values golden, candidate;
    for (int i = 0; i < 64; ++i) {
        golden.push_back(1.0 + i / 64.0);
        candidate.push_back(golden.back() * (1.0 + 1.0 / 512));
    }
    const OutputVerdict v = compare(candidate, golden, golden, DType::f32);
    ASSERT_FALSE(v.passed);
    EXPECT_EQ(fresh_input_allowance(gate_of({v})), std::nullopt);
}

TEST(FreshInputAllowance, OtherFailuresAreNotExcused) {
    // A NaN where the golden is finite, and three small-value errors, fail on fresh inputs too.
    const OutputVerdict nan_out = compare({nan, 1.0}, {1.0, 1.0}, {1.0, 1.0}, DType::f16);
    ASSERT_FALSE(nan_out.passed);
    EXPECT_EQ(fresh_input_allowance(gate_of({nan_out})), std::nullopt);
    const OutputVerdict small = compare({1e-3, 1e-3, 1e-3, 0.0}, {0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}, DType::f16);
    ASSERT_FALSE(small.passed);
    EXPECT_EQ(fresh_input_allowance(gate_of({small})), std::nullopt);
}

TEST(FreshInputAllowance, ALargeOutputMayHaveOneErrorIn10000ElementsInAnyRegion) {
    // 30,000 elements: at most max(2 * 1, 3) = 3 normal-region errors against the reference's 1.
    for (int errors : {3, 4}) {
        const RegionCase c = region_case(1.0, 1.03125, 30000, errors, 1);
        const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
        ASSERT_FALSE(v.passed);  // the case's own inputs keep the ratio rule: 2 x 1
        EXPECT_EQ(fresh_input_allowance(gate_of({v})), errors == 3 ? std::optional<std::int64_t>(3) : std::nullopt);
    }
    // 90,000 elements: at most 9 cancellation-region errors where the reference has none.
    for (int errors : {9, 10}) {
        const RegionCase c = region_case(kCancelY, 0.0, 90000, errors, 0);
        const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
        ASSERT_FALSE(v.passed);
        EXPECT_EQ(fresh_input_allowance(gate_of({v})), errors == 9 ? std::optional<std::int64_t>(9) : std::nullopt);
    }
    EXPECT_EQ(fresh_input_region_limit(0, 8), 2);
    EXPECT_EQ(fresh_input_region_limit(5, 8), 10);
    EXPECT_EQ(fresh_input_region_limit(0, 10001), 2);
    EXPECT_EQ(fresh_input_region_limit(0, 2300000), 230);
}

TEST(FreshInputAllowance, ALargeReducedPrecisionOutputStillFails) {
    Values golden, candidate;
    for (int i = 0; i < 50000; ++i) {
        golden.push_back(1.0 + (i % 64) / 64.0);
        candidate.push_back(golden.back() * (1.0 + 1.0 / 512));
    }
    const OutputVerdict v = compare(candidate, golden, golden, DType::f32);
    ASSERT_FALSE(v.passed);
    EXPECT_EQ(fresh_input_allowance(gate_of({v})), std::nullopt);
}

TEST(FreshInputAllowance, CountsAcrossOutputs) {
    const RegionCase c = region_case(1.0, 1.03125, 8, 1, 0);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16);
    EXPECT_EQ(fresh_input_allowance(gate_of({v, v})), 2);
}

// ---- fallback: both sides over the same positions ----------------------------------------
//
// fp16, n = 1000: y = 0.5 + (i mod 512) / 1024 (exact fp16 values, normal region) except at
// kBand, where y = 2^-6 lies in the cancellation band [tau_sv, tau_cb) = [2^-11, 2^-5) and 3 y
// does not (|3 y| >= tau_cz). The candidate and the reference equal y unless a test says so.

constexpr int kIssueN = 1000;
const std::vector<int> kNormal{10, 20, 30};
const std::vector<int> kBand{40, 50, 60};

double f16(double x) { return round_to_dtype(x, DType::f16); }

Values issue_golden() {
    Values y(kIssueN);
    for (int i = 0; i < kIssueN; ++i) y[i] = 0.5 + (i % 512) / 1024.0;
    for (int i : kBand) y[i] = kCancelY;
    return y;
}

Values with_at(const Values& y, const std::vector<int>& positions, double factor) {
    Values out = y;
    for (int i : positions) out[i] = f16(factor * y[i]);
    return out;
}

Values nan_at(const Values& y, const std::vector<int>& positions) {
    Values out = y;
    for (int i : positions) out[i] = nan;
    return out;
}

TEST(PrecisionGateSamePositions, ReferenceErrorsWhereTheCandidateIsExactDoNotExcuseItsErrors) {
    // Candidate 1.5 y at 3 normal positions; reference 3 y at the 3 band positions, where the
    // candidate is exact and so places them in the cancellation region. Placed by the
    // reference's own output they counted in the normal region (3 vs 3, pass).
    const Values y = issue_golden();
    const OutputVerdict v = compare(with_at(y, kNormal, 1.5), y, with_at(y, kBand, 3.0), DType::f16);
    EXPECT_FALSE(v.screen1_passed);
    EXPECT_EQ(v.candidate_errors.normal, 3);
    EXPECT_EQ(v.same_precision_errors.normal, 0);
    EXPECT_EQ(v.candidate_errors.cancellation, 0);
    EXPECT_EQ(v.same_precision_errors.cancellation, 3);
    EXPECT_FALSE(v.region_passed.normal);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.reason.find("normal region 3 errors vs 0 in same-precision reference"), std::string::npos) << v.reason;
}

TEST(PrecisionGateSamePositions, ReferenceErrorsAtTheCandidatesCancelledPositionsExcuseThem) {
    // The reverse: candidate 0 and reference 3 y at the band positions. The candidate's output
    // places all six errors in the cancellation region, 3 vs 3. Placed by its own output the
    // reference's counted in the normal region and the candidate failed 3 vs 0.
    const Values y = issue_golden();
    const OutputVerdict v = compare(with_at(y, kBand, 0.0), y, with_at(y, kBand, 3.0), DType::f16);
    EXPECT_FALSE(v.screen1_passed);
    EXPECT_EQ(v.candidate_errors.cancellation, 3);
    EXPECT_EQ(v.same_precision_errors.cancellation, 3);
    EXPECT_EQ(v.same_precision_errors.normal, 0);
    EXPECT_TRUE(v.passed) << v.reason;
}

TEST(PrecisionGateSamePositions, ReferenceErrorsInTheSameRegionElsewhereStillCount) {
    // Regions are counted over all their positions, not only where the candidate errs: the
    // reference's 3 y at 3 other normal positions allows the candidate's 3 normal errors.
    const Values y = issue_golden();
    const OutputVerdict v = compare(with_at(y, kNormal, 1.5), y, with_at(y, {70, 80, 90}, 3.0), DType::f16);
    EXPECT_EQ(v.candidate_errors.normal, 3);
    EXPECT_EQ(v.same_precision_errors.normal, 3);
    EXPECT_TRUE(v.passed) << v.reason;
}

TEST(PrecisionGateSamePositions, AReferenceNaNIsNoReferenceError) {
    // Candidate 1.5 y at 3 normal positions, reference NaN at 3 others: counted as errors the
    // NaNs allowed the candidate's errors (3 vs 3).
    const Values y = issue_golden();
    const OutputVerdict v = compare(with_at(y, kNormal, 1.5), y, nan_at(y, {70, 80, 90}), DType::f16);
    EXPECT_EQ(v.candidate_errors.normal, 3);
    EXPECT_EQ(v.same_precision_errors.normal, 0);
    EXPECT_EQ(v.same_precision_nan, 3);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.reason.find("the reference is NaN at 3 positions, which count as no error"), std::string::npos)
        << v.reason;
    EXPECT_EQ(to_json(v)["fallback"]["same_precision_nan"], 3);
}

TEST(PrecisionGateSamePositions, AReferenceNaNWhereTheCandidateErrsIsNoErrorEither) {
    const Values y = issue_golden();
    const OutputVerdict v = compare(with_at(y, kNormal, 1.5), y, nan_at(y, kNormal), DType::f16);
    EXPECT_EQ(v.same_precision_errors.normal, 0);
    EXPECT_FALSE(v.passed);
    // The same positions with a finite reference error are the reference's too: 3 vs 3.
    EXPECT_TRUE(compare(with_at(y, kNormal, 1.5), y, with_at(y, kNormal, 1.5), DType::f16).passed);
}

TEST(PrecisionGateSamePositions, AReferenceNaNInTheCancellationAndSmallValueRegionsIsNoError) {
    // Three candidate errors in each region against three reference NaNs there fail both
    // ratio rules (3 > 2 * max(0, 1)); as errors the NaNs made them pass.
    Values y = issue_golden();
    const std::vector<int> small{100, 110, 120};
    for (int i : small) y[i] = kSmallY;
    Values candidate = with_at(y, kBand, 0.0);
    for (int i : small) candidate[i] = kSmallWrong;
    Values reference = y;
    for (int i : {40, 50, 60, 100, 110, 120}) reference[i] = nan;
    const OutputVerdict v = compare(candidate, y, reference, DType::f16);
    EXPECT_EQ(v.candidate_errors.cancellation, 3);
    EXPECT_EQ(v.candidate_errors.small_value, 3);
    EXPECT_EQ(v.same_precision_errors.cancellation, 0);
    EXPECT_EQ(v.same_precision_errors.small_value, 0);
    EXPECT_EQ(v.same_precision_nan, 6);
    EXPECT_FALSE(v.region_passed.cancellation);
    EXPECT_FALSE(v.region_passed.small_value);
}

TEST(PrecisionGateSamePositions, PositionsWhereTheCandidateMatchedASpecialValueAreNotCounted) {
    // The golden is NaN at 70 and +inf at 80 and -inf at 90; the candidate matches them and
    // leaves them out of its statistics, so the reference's finite values there (errors
    // against NaN and against +-65504) are no evidence either.
    Values y = issue_golden();
    y[70] = nan;
    y[80] = inf;
    y[90] = -inf;
    const OutputVerdict v = compare(with_at(y, kNormal, 1.5), y, issue_golden(), DType::f16);
    EXPECT_EQ(v.nan_matched, 1);
    EXPECT_EQ(v.inf_matched, 2);
    EXPECT_EQ(v.compared, kIssueN - 3);
    EXPECT_EQ(v.same_precision_errors.normal, 0);
    EXPECT_FALSE(v.passed);
}

TEST(PrecisionGateSamePositions, AReferenceInfinityAtAFiniteGoldenIsAnError) {
    // A one-sided infinity is compared as +-65504 (e far above 10 tau), for the reference as
    // for the candidate: an overflow in the case's precision is evidence the operation is hard.
    const Values y = issue_golden();
    Values reference = y;
    reference[70] = inf;
    const OutputVerdict v = compare(with_at(y, {10}, 1.5), y, reference, DType::f16);
    EXPECT_EQ(v.same_precision_errors.normal, 1);
    EXPECT_TRUE(v.passed) << v.reason;
}

TEST(PrecisionGateSamePositions, AReferenceOfOppositeSignInfinityIsAnError) {
    // Golden +inf where the candidate returns 65504 (one-sided, e = 0); the reference's -inf
    // there is an opposite-sign infinity, counted in the normal region.
    Values y = issue_golden();
    y[70] = inf;
    Values candidate = with_at(y, {10}, 1.5);
    candidate[70] = 65504.0;
    Values reference = issue_golden();
    reference[70] = -inf;
    const OutputVerdict v = compare(candidate, y, reference, DType::f16);
    EXPECT_EQ(v.inf_one_sided, 1);
    EXPECT_EQ(v.same_precision_errors.normal, 1);
    EXPECT_TRUE(v.passed) << v.reason;
    reference[70] = inf;  // the right infinity: no reference error, and the candidate's fails
    EXPECT_FALSE(compare(candidate, y, reference, DType::f16).passed);
}

TEST(PrecisionGateSamePositions, TheCancellationBoundaryIsTheCandidatesOutputBelowTauCz) {
    // y = 1.5 * 2^-6 is in the band; a candidate output of 2^-5 - 2^-16 (|out| < tau_cz) is a
    // cancellation-region error, one of exactly tau_cz = 2^-5 a normal-region error, and the
    // reference's 3 y there follows the candidate into either region.
    Values y = issue_golden();
    const double band_y = 1.5 * kCancelY;
    y[70] = band_y;
    const Values reference = with_at(y, {70}, 3.0);
    Values below = y, at = y;
    below[70] = 0x1p-5 - 0x1p-16;
    at[70] = 0x1p-5;
    const OutputVerdict v_below = compare(below, y, reference, DType::f16);
    EXPECT_EQ(v_below.candidate_errors.cancellation, 1);
    EXPECT_EQ(v_below.same_precision_errors.cancellation, 1);
    const OutputVerdict v_at = compare(at, y, reference, DType::f16);
    EXPECT_EQ(v_at.candidate_errors.normal, 1);
    EXPECT_EQ(v_at.same_precision_errors.normal, 1);
    EXPECT_TRUE(v_below.passed && v_at.passed);
}

TEST(PrecisionGateSamePositions, MovingAnErrorOutOfTheCancellationRegionCanFailIt) {
    // The contract's regions depend on the candidate's output, so one output can fail where a
    // farther one passes: with an exact reference, 2^-5 (e = 0.33, normal region, 1 vs 0)
    // fails and 0 (e = 1, cancellation region, 1 <= 2 * max(0, 1)) passes. This is the
    // cancellation region's purpose, and the one way a worse element can turn FAIL into
    // PASS (docs/methodology.md); the property tests exclude such moves and only those.
    Values y = issue_golden();
    y[70] = 1.5 * kCancelY;
    Values nearer = y, farther = y;
    nearer[70] = 0x1p-5;
    farther[70] = 0.0;
    EXPECT_FALSE(compare(nearer, y, y, DType::f16).passed);
    EXPECT_TRUE(compare(farther, y, y, DType::f16).passed);
}

// The statistics pass runs in blocks of 32,768 elements on every thread and merges them in
// order: the result is the serial one (first maximum, first index of each mismatch, counts).
TEST(PrecisionGate, StatisticsOverManyBlocksAreTheSerialOnes) {
    const std::size_t n = 200000;  // 7 blocks, the last one partial
    Values golden(n), candidate(n);
    for (std::size_t i = 0; i < n; ++i) golden[i] = candidate[i] = 1.0 + static_cast<double>(i % 1000) / 1024.0;
    candidate[40000] = nan;         // first NaN mismatch, in block 1
    candidate[150000] = nan;        // a second, in block 4
    golden[70000] = candidate[70000] = nan;  // a matched NaN
    golden[90000] = inf;            // a one-sided infinity: compared as the fp32 maximum
    candidate[60000] = -inf;        // opposite sign to nothing: a one-sided infinity too
    golden[120000] = -inf;
    candidate[120000] = inf;        // opposite-sign infinities
    candidate[50000] *= 1.5;        // the largest relative error, twice: the first index wins
    candidate[190000] = golden[190000] * 1.5;
    candidate[100000] *= 1.25;
    const OutputVerdict v = compare(candidate, golden, golden, DType::f32);
    EXPECT_EQ(v.elements, static_cast<std::int64_t>(n));
    EXPECT_EQ(v.nan_mismatches, 2);
    EXPECT_EQ(v.first_nan_mismatch_index, 40000);
    EXPECT_EQ(v.nan_matched, 1);
    EXPECT_EQ(v.inf_sign_mismatches, 1);
    EXPECT_EQ(v.first_inf_sign_mismatch_index, 120000);
    EXPECT_EQ(v.inf_one_sided, 2);
    EXPECT_EQ(v.compared, static_cast<std::int64_t>(n) - 4);
    EXPECT_EQ(v.max_rel_err_index, 60000);  // -fmax against about 1.6: the largest of all
    // The mean is the sum of the same errors: 0.5 twice, 0.25 once and the two one-sided ones.
    const double fmax = static_cast<double>(std::numeric_limits<float>::max());
    const double g60000 = golden[60000], g90000 = candidate[90000];
    const double expected_sum = 0.5 + 0.5 + 0.25 + (fmax + g60000) / (g60000 + 1e-7) + (fmax - g90000) / (fmax + 1e-7);
    EXPECT_NEAR(v.mean_rel_err, expected_sum / static_cast<double>(v.compared), 1e-12 * v.mean_rel_err);
    EXPECT_FALSE(v.passed);
}

// All finite: the vectorized pass. The first of equal maxima wins, inside a block and across
// blocks, and the mean is the serial one up to summation order.
TEST(PrecisionGate, FiniteBlocksFindTheFirstMaximumAndTheMean) {
    const std::size_t n = 100003;  // a tail that is not a multiple of the eight lanes
    Values golden(n), candidate(n);
    double serial_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        golden[i] = 0.5 + static_cast<double>(i % 97) / 64.0;
        candidate[i] = golden[i] * (1 + static_cast<double>(i % 5) * 1e-5);
    }
    for (std::size_t i : {std::size_t{33000}, std::size_t{33005}, std::size_t{70000}, n - 1}) {
        golden[i] = 1.0;
        candidate[i] = 1.001;  // four equal largest errors
    }
    for (std::size_t i = 0; i < n; ++i) serial_sum += std::fabs(candidate[i] - golden[i]) / (std::fabs(golden[i]) + 1e-7);
    const OutputVerdict v = compare(candidate, golden, golden, DType::f64);
    EXPECT_EQ(v.compared, static_cast<std::int64_t>(n));
    EXPECT_EQ(v.max_rel_err_index, 33000);
    EXPECT_EQ(v.max_rel_err_got, candidate[33000]);
    EXPECT_NEAR(v.mean_rel_err, serial_sum / static_cast<double>(n), 1e-12);
    // A larger error in the last block's tail (after its last full group of eight lanes).
    Values tail = candidate;
    tail[n - 2] = golden[n - 2] * 1.01;
    const OutputVerdict in_tail = compare(tail, golden, golden, DType::f64);
    EXPECT_EQ(in_tail.max_rel_err_index, static_cast<std::int64_t>(n - 2));
    // A NaN on either side sends its block element by element: counted as a mismatch there.
    Values with_nan = candidate;
    with_nan[40000] = std::numeric_limits<double>::quiet_NaN();
    const OutputVerdict nan_verdict = compare(with_nan, golden, golden, DType::f64);
    EXPECT_EQ(nan_verdict.nan_mismatches, 1);
    EXPECT_EQ(nan_verdict.max_rel_err_index, 33000);
        // Every error zero: no index, like the serial pass.
    const OutputVerdict exact = compare(golden, golden, golden, DType::f64);
    EXPECT_EQ(exact.max_rel_err_index, -1);
    EXPECT_EQ(exact.mean_rel_err, 0.0);
}

TEST(PrecisionGate, TheDtypeMaximumForAnInfiniteGoldenJoinsTheMean) {
    // The other way a change the gate's measure does not call better can pass (see
    // docs/methodology.md): bf16, three small-value errors of e = 2^-5 (|out - y| = 2^-15 >
    // eps_sv) among 8 exact elements fail; returning the bf16 maximum instead of the golden's
    // +inf (e = 0 under the one-sided rule) adds a zero to the mean, which drops below tau.
    const double y_small = 0x1p-10, wrong = 0x1p-10 + 0x1p-15;
    Values golden{y_small, y_small, y_small, 1, 1, 1, 1, 1, 1, 1, 1, inf};
    Values matched{wrong, wrong, wrong, 1, 1, 1, 1, 1, 1, 1, 1, inf};
    const OutputVerdict with_inf = compare(matched, golden, golden, DType::bf16);
    EXPECT_EQ(with_inf.compared, 11);
    EXPECT_GE(with_inf.mean_rel_err, 0x1p-7);
    EXPECT_EQ(with_inf.candidate_errors.small_value, 3);
    EXPECT_FALSE(with_inf.passed);
    Values saturated = matched;
    saturated.back() = dtype_max(DType::bf16);
    const OutputVerdict with_max = compare(saturated, golden, golden, DType::bf16);
    EXPECT_EQ(with_max.compared, 12);
    EXPECT_LT(with_max.mean_rel_err, 0x1p-7);
    EXPECT_TRUE(with_max.passed);
}

// ---- golden rounding ---------------------------------------------------------------------

TEST(PrecisionGate, TheGoldenIsRoundedOnceNotThroughFp32) {
    // 1 + 2^-11 + 2^-30 rounds up to 1 + 2^-10 in fp16. Through fp32 it would first lose the
    // 2^-30 and then round the tie 1 + 2^-11 to even, 1.0 (the reference code does that).
    const double golden = 1.0 + 0x1p-11 + 0x1p-30;
    const OutputVerdict exact = compare({1.0 + 0x1p-10}, {golden}, {golden}, DType::f16);
    EXPECT_EQ(exact.max_rel_err, 0.0);
    const OutputVerdict via_fp32 = compare({1.0}, {golden}, {golden}, DType::f16);
    EXPECT_EQ(via_fp32.max_rel_err_expected, 1.0 + 0x1p-10);
    EXPECT_GT(via_fp32.max_rel_err, 0.0);
    // bf16 likewise: 1 + 2^-8 + 2^-30 is 1 + 2^-7 directly, 1.0 through fp32.
    const double bf16_golden = 1.0 + 0x1p-8 + 0x1p-30;
    EXPECT_EQ(compare({1.0 + 0x1p-7}, {bf16_golden}, {bf16_golden}, DType::bf16).max_rel_err, 0.0);
}

// ---- bit-exact, integer, per-dtype thresholds -----------------------------------------

TEST(PrecisionGate, BitExactModeTellsSignedZerosApart) {
    const std::map<DType, double> exact{{DType::f16, 0.0}};
    const OutputVerdict v = compare({-0.0, 1.0}, {0.0, 1.0}, {}, DType::f16, exact);
    EXPECT_EQ(v.mode, CompareMode::bit_exact);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.mismatches, 1);
    EXPECT_EQ(v.first_mismatch_index, 0);
    EXPECT_NE(v.reason.find("bit for bit"), std::string::npos) << v.reason;
}

TEST(PrecisionGate, BitExactModePassesIdenticalValues) {
    const std::map<DType, double> exact{{DType::f32, 0.0}};
    const Values same{-0.0, 0.0, 1.5, -inf, nan};
    EXPECT_TRUE(compare(same, same, {}, DType::f32, exact).passed);
    EXPECT_FALSE(compare({1.0 + 0x1p-23}, {1.0}, {}, DType::f32, exact).passed);  // one ulp
}

TEST(PrecisionGate, BitExactModeTellsNaNPayloadsApart) {
    const double nan_a = std::bit_cast<float>(0x7fc00001u);
    const double nan_b = std::bit_cast<float>(0x7fc00002u);
    EXPECT_FALSE(compare({nan_a}, {nan_b}, {}, DType::f32, {{DType::f32, 0.0}}).passed);
    EXPECT_TRUE(compare({nan_a}, {nan_b}, {nan_b}, DType::f32).passed);  // positions match
}

TEST(PrecisionGate, IntegerOutputsAreExactByDefault) {
    const OutputVerdict v = compare({3, 5}, {3, 4}, {}, DType::i32);
    EXPECT_EQ(v.mode, CompareMode::integer);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.first_mismatch_index, 1);
    EXPECT_TRUE(compare({3, 4}, {3, 4}, {}, DType::i32).passed);
}

TEST(PrecisionGate, IntegerToleranceOfOneAllowsDiffOneNotTwo) {
    const std::map<DType, double> k1{{DType::i8, 1.0}};
    EXPECT_TRUE(compare({10, -4}, {9, -5}, {}, DType::i8, k1).passed);
    const OutputVerdict v = compare({10, -3}, {9, -5}, {}, DType::i8, k1);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.max_abs_err, 2.0);
    EXPECT_NE(v.reason.find("differ by more than 1"), std::string::npos) << v.reason;
}

TEST(PrecisionGate, Bf16AndFp16AreJudgedByTheirOwnThresholds) {
    // One element 2^-5 off among eight: beyond fp16's 10*tau, within bf16's screen 1.
    const RegionCase c = region_case(1.0, 1.03125, 8, 1, 0);
    EXPECT_FALSE(compare(c.candidate, c.golden, c.same_precision, DType::f16).passed);
    const OutputVerdict bf16 = compare(c.candidate, c.golden, c.same_precision, DType::bf16);
    EXPECT_TRUE(bf16.passed);
    EXPECT_TRUE(bf16.screen1_passed);
}

TEST(PrecisionGate, TauOverrideIsAppliedAndRecorded) {
    const RegionCase c = region_case(1.0, 1.03125, 8, 1, 0);
    const OutputVerdict v = compare(c.candidate, c.golden, c.same_precision, DType::f16, {{DType::f16, 0.01}});
    EXPECT_TRUE(v.passed) << v.reason;
    EXPECT_EQ(v.thresholds.tau, 0.01);
    EXPECT_TRUE(v.thresholds.tau_overridden);
    const auto j = to_json(v);
    EXPECT_EQ(j["thresholds"]["tau"], 0.01);
    EXPECT_EQ(j["thresholds"]["default_tau"], 0x1p-10);
}

TEST(PrecisionGate, WrongLengthFails) {
    const OutputVerdict v = compare({1.0}, {1.0, 2.0}, {1.0, 2.0}, DType::f32);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.reason.find("has 1 elements, expected 2"), std::string::npos) << v.reason;
}

TEST(PrecisionGate, JsonUsesSnakeCaseAndWritesNonFiniteValuesAsStrings) {
    const OutputVerdict fail = compare({inf, 1.0}, {1.0, nan}, {1.0, nan}, DType::f16);
    const auto j = to_json(fail);
    EXPECT_EQ(j["label"], "y");
    EXPECT_EQ(j["mode"], "relative");
    EXPECT_EQ(j["passed"], false);
    EXPECT_EQ(j["special_values"]["nan_mismatches"], 1);
    EXPECT_EQ(j["special_values"]["first_inf_sign_mismatch_index"], nullptr);
    EXPECT_TRUE(j["fallback"].is_null());

    const RegionCase c = region_case(1.0, 1.03125, 8, 1, 0);
    const auto k = to_json(compare(c.candidate, c.golden, c.same_precision, DType::f16));
    EXPECT_EQ(k["fallback"]["candidate_errors"]["normal"], 1);
    EXPECT_EQ(k["fallback"]["region_passed"]["normal"], false);
    EXPECT_EQ(k["screen1_passed"], false);

    const Values nan_out{nan};
    const auto n = to_json(compare(nan_out, {1.0}, {1.0}, DType::f32));
    EXPECT_EQ(n["max_rel_err_index"], nullptr);
}

// ---- index gather ----------------------------------------------------------------------

IndexGatherOperands operands(const Values& input, Shape input_shape, const Values& indices,
                             Shape index_shape, std::int64_t dim, bool keepdim = true) {
    IndexGatherOperands ops;
    ops.input = input;
    ops.input_shape = std::move(input_shape);
    ops.input_dtype = DType::f32;
    ops.indices = indices;
    ops.index_shape = std::move(index_shape);
    ops.dim = dim;
    ops.keepdim = keepdim;
    return ops;
}

const Values kArgInput{1, 5, 3,
                       7, 2, 7};  // [2, 3]

TEST(IndexGather, AmaxAcceptsAnyTiedMaximum) {
    const Values first{1, 0}, second{1, 2};
    EXPECT_TRUE(check_index_gather(operands(kArgInput, {2, 3}, first, {2}, 1, false), GatherReduce::amax).passed);
    EXPECT_TRUE(check_index_gather(operands(kArgInput, {2, 3}, second, {2}, -1, false), GatherReduce::amax).passed);
}

TEST(IndexGather, AmaxRejectsAnIndexThatIsNotTheMaximum) {
    const Values wrong{1, 1};
    const IndexGatherVerdict v =
        check_index_gather(operands(kArgInput, {2, 3}, wrong, {2}, 1, false), GatherReduce::amax);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.mismatches, 1);
    EXPECT_EQ(v.first_mismatch_position, 1);
    EXPECT_EQ(v.first_mismatch_got, 2);
    EXPECT_EQ(v.first_mismatch_expected, 7);
    EXPECT_NE(v.reason.find("the amax of its slice"), std::string::npos) << v.reason;
}

TEST(IndexGather, OutOfRangeIndicesFail) {
    const Values too_big{1, 3}, negative{-1, 0};
    const IndexGatherVerdict v =
        check_index_gather(operands(kArgInput, {2, 3}, too_big, {2, 1}, 1, true), GatherReduce::amax);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.out_of_range, 1);
    EXPECT_EQ(v.first_out_of_range_position, 1);
    EXPECT_NE(v.reason.find("out of range [0, 3) along dim 1"), std::string::npos) << v.reason;
    EXPECT_FALSE(check_index_gather(operands(kArgInput, {2, 3}, negative, {2}, 1, false), GatherReduce::amax).passed);
}

TEST(IndexGather, AminAlongDimZeroWithKeepdim) {
    const Values good{0, 1, 0}, bad{1, 1, 1};
    EXPECT_TRUE(check_index_gather(operands(kArgInput, {2, 3}, good, {1, 3}, 0, true), GatherReduce::amin).passed);
    EXPECT_FALSE(check_index_gather(operands(kArgInput, {2, 3}, bad, {1, 3}, 0, true), GatherReduce::amin).passed);
}

TEST(IndexGather, ASliceWithNaNNeedsAnIndexAtANaN) {
    const Values input{1, nan, 3};
    const Values at_nan{1}, at_max{2};
    EXPECT_TRUE(check_index_gather(operands(input, {3}, at_nan, {}, 0, false), GatherReduce::amax).passed);
    EXPECT_FALSE(check_index_gather(operands(input, {3}, at_max, {}, 0, false), GatherReduce::amax).passed);
}

TEST(IndexGather, ValueOutputFormAcceptsTiesAndRejectsAWrongIndex) {
    // cummin of [3, 1, 2, 1]: values [3, 1, 1, 1]; the last position may point at 1 or 3.
    const Values input{3, 1, 2, 1}, values{3, 1, 1, 1};
    const Values first_tie{0, 1, 1, 1}, last_tie{0, 1, 1, 3}, wrong{0, 1, 2, 3};
    EXPECT_TRUE(check_index_gather(operands(input, {4}, first_tie, {4}, 0), values, DType::f32).passed);
    EXPECT_TRUE(check_index_gather(operands(input, {4}, last_tie, {4}, 0), values, DType::f32).passed);
    const IndexGatherVerdict v = check_index_gather(operands(input, {4}, wrong, {4}, 0), values, DType::f32);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.first_mismatch_position, 2);
    EXPECT_NE(v.reason.find("the value output"), std::string::npos) << v.reason;
}

TEST(IndexGather, ValueOutputFormRejectsAnOutOfRangeIndex) {
    const Values input{3, 1, 2, 1}, values{3, 1, 1, 1}, indices{0, 1, 4, 1};
    const IndexGatherVerdict v = check_index_gather(operands(input, {4}, indices, {4}, 0), values, DType::f32);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.out_of_range, 1);
}

TEST(IndexGather, ValueOutputFormIsBitExact) {
    const Values input{-0.0, 0.0}, values{0.0}, points_at_negative_zero{0}, points_at_zero{1};
    EXPECT_FALSE(check_index_gather(operands(input, {2}, points_at_negative_zero, {1}, 0), values, DType::f32).passed);
    EXPECT_TRUE(check_index_gather(operands(input, {2}, points_at_zero, {1}, 0), values, DType::f32).passed);
}

TEST(IndexGather, TopKShapedIndicesAlongTheLastDim) {
    // Input [2, 4], top-2 along dim -1.
    const Values input{4, 9, 1, 9,
                       0, 5, 6, 2};
    const Values values{9, 9, 6, 5}, indices{3, 1, 2, 1};
    EXPECT_TRUE(check_index_gather(operands(input, {2, 4}, indices, {2, 2}, -1), values, DType::f32).passed);
}

TEST(IndexGather, IndexShapeThatDoesNotFitTheInputThrows) {
    const Values indices{0, 0, 0};
    EXPECT_THROW(check_index_gather(operands(kArgInput, {2, 3}, indices, {3}, 1, false), GatherReduce::amax), Error);
    EXPECT_THROW(parse_gather_reduce("sum"), Error);
}

// ---- case level ------------------------------------------------------------------------

ValueArgs<double> args(const std::vector<ArgSpec>& specs, std::vector<Values> values) {
    ValueArgs<double> out = values_for_specs<double>(specs);
    std::size_t k = 0;
    for (auto& a : out)
        for (auto& t : a.tensors) t.v = values.at(k++);
    return out;
}

ArgSpec spec(const std::string& name, DType dtype, Shape shape) {
    ArgSpec a;
    a.name = name;
    a.tensors.push_back({dtype, std::move(shape)});
    return a;
}

OutputDef def(const std::string& name) {
    OutputDef d;
    d.name = name;
    return d;
}

TEST(PrecisionGateCase, EveryOutputMustPassOnItsOwnDtype) {
    Proto proto;
    proto.outputs = {def("a"), def("b")};
    proto.tau_overrides = {{DType::f16, 0.01}};
    Problem problem;
    problem.proto = &proto;
    problem.outputs = {spec("a", DType::f16, {2}), spec("b", DType::f32, {2})};
    // Both outputs 2^-5 off in one element: within the fp16 override, not within fp32's tau.
    const auto golden = args(problem.outputs, {{1.0, 1.0}, {1.0, 1.0}});
    const auto candidate = args(problem.outputs, {{1.0, 1.03125}, {1.0, 1.03125}});
    const GateResult r = run_precision_gate(problem, candidate, golden, golden, {});
    ASSERT_EQ(r.outputs.size(), 2u);
    EXPECT_TRUE(r.outputs[0].passed) << r.outputs[0].reason;
    EXPECT_TRUE(r.outputs[0].thresholds.tau_overridden);
    EXPECT_FALSE(r.outputs[1].passed);
    EXPECT_FALSE(r.outputs[1].thresholds.tau_overridden);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.reason.rfind("output b: ", 0), 0u) << r.reason;
    EXPECT_EQ(to_json(r)["outputs"].size(), 2u);
}

TEST(PrecisionGateCase, OutputsMarkedNotComparedAreSkipped) {
    Proto proto;
    proto.outputs = {def("y"), def("workspace")};
    proto.outputs[1].compare = false;
    Problem problem;
    problem.proto = &proto;
    problem.outputs = {spec("y", DType::f32, {1}), spec("workspace", DType::f32, {2})};
    const auto golden = args(problem.outputs, {{2.0}, {0.0, 0.0}});
    const auto candidate = args(problem.outputs, {{2.0}, {123.0, nan}});
    const GateResult r = run_precision_gate(problem, candidate, golden, golden, {});
    EXPECT_TRUE(r.passed) << r.reason;
    EXPECT_EQ(r.outputs[1].mode, CompareMode::skipped);
}

TEST(PrecisionGateCase, ListMembersAreComparedOneByOne) {
    Proto proto;
    proto.outputs = {def("y")};
    Problem problem;
    problem.proto = &proto;
    ArgSpec list = spec("y", DType::f32, {1});
    list.is_list = true;
    list.tensors.push_back({DType::f32, {2}});
    problem.outputs = {list};
    const auto golden = args(problem.outputs, {{1.0}, {2.0, 3.0}});
    const auto candidate = args(problem.outputs, {{1.0}, {2.0, 4.0}});
    const GateResult r = run_precision_gate(problem, candidate, golden, golden, {});
    ASSERT_EQ(r.outputs.size(), 2u);
    EXPECT_EQ(r.outputs[1].label, "y[1]");
    EXPECT_TRUE(r.outputs[0].passed);
    EXPECT_FALSE(r.passed);
}

TEST(PrecisionGateCase, CumminIndicesAreValidatedAgainstTheValueOutput) {
    Proto proto;
    proto.outputs = {def("values"), def("indices")};
    proto.outputs[1].compare = false;
    proto.outputs[1].index_gather = IndexGather{"input", "dim", "values", "", ""};
    Problem problem;
    problem.proto = &proto;
    problem.attrs["dim"] = AttrValue::of_int(0);
    problem.inputs = {spec("input", DType::f32, {4})};
    problem.outputs = {spec("values", DType::f32, {4}), spec("indices", DType::i64, {4})};
    const auto inputs = args(problem.inputs, {{3, 1, 2, 1}});
    const auto golden = args(problem.outputs, {{3, 1, 1, 1}, {0, 1, 1, 1}});
    const auto tie = args(problem.outputs, {{3, 1, 1, 1}, {0, 1, 1, 3}});
    const auto wrong = args(problem.outputs, {{3, 1, 1, 1}, {0, 1, 2, 3}});

    const GateResult ok = run_precision_gate(problem, tie, golden, golden, inputs);
    EXPECT_TRUE(ok.passed) << ok.reason;
    EXPECT_EQ(ok.outputs[1].mode, CompareMode::index_gather);
    const GateResult bad = run_precision_gate(problem, wrong, golden, golden, inputs);
    EXPECT_FALSE(bad.passed);
    EXPECT_EQ(bad.reason.rfind("output indices: ", 0), 0u) << bad.reason;
    EXPECT_EQ(to_json(bad)["outputs"][1]["index_gather"]["mismatches"], 1);
}

TEST(PrecisionGateCase, ArgMaxIndicesAreValidatedAgainstTheAmax) {
    Proto proto;
    proto.outputs = {def("indices")};
    proto.outputs[0].compare = false;
    proto.outputs[0].index_gather = IndexGather{"input", "dim", "", "amax", "keepdim"};
    Problem problem;
    problem.proto = &proto;
    problem.attrs["dim"] = AttrValue::of_int(-1);
    problem.attrs["keepdim"] = AttrValue::of_bool(false);
    problem.inputs = {spec("input", DType::f16, {2, 3})};
    problem.outputs = {spec("indices", DType::i64, {2})};
    const auto inputs = args(problem.inputs, {kArgInput});
    const auto golden = args(problem.outputs, {{1, 0}});
    EXPECT_TRUE(run_precision_gate(problem, args(problem.outputs, {{1, 2}}), golden, golden, inputs).passed);
    const GateResult r = run_precision_gate(problem, args(problem.outputs, {{1, 5}}), golden, golden, inputs);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.reason.find("out of range"), std::string::npos) << r.reason;
}

TEST(PrecisionGateCase, MismatchedOutputListsAreAHarnessError) {
    Proto proto;
    proto.outputs = {def("y")};
    Problem problem;
    problem.proto = &proto;
    problem.outputs = {spec("y", DType::f32, {1})};
    const auto golden = args(problem.outputs, {{1.0}});
    EXPECT_THROW(run_precision_gate(problem, {}, golden, golden, {}), Error);
}

}  // namespace
}  // namespace hb
