// Deliberately wrong level-2 kernels fail the precision gate on the cases their bug touches
// and pass the others: the gate sees the bug, not noise. Each is the reference kernel with
// the one-bug edits of tests/data/wrong_kernels/level2.yaml (see wrong_kernels.hpp).
#include "wrong_kernels.hpp"

namespace hb::test {
namespace {

// --- elementwise -------------------------------------------------------------------------

// x2's NaNs are lost: the floating special-value (NaN) cases fail, the rest pass.
TEST(WrongLevel2, MaximumDroppingNanFailsPrecision) {
    const auto s = wrong_kernel_statuses("maximum");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 1) << describe(s);
    EXPECT_GE(count_status(s, "PASS"), 10) << describe(s);
}

// Leaving out the bias corrections: the early-step cases with a large learning rate fail.
TEST(WrongLevel2, ApplyAdamWWithoutBiasCorrectionFailsPrecision) {
    const auto s = wrong_kernel_statuses("apply_adam_w");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 1) << describe(s);
}

// Signed Euclid: negative results where the inputs have negative values; exact comparison.
TEST(WrongLevel2, GcdWithNegativeResultsFailsPrecision) {
    const auto s = wrong_kernel_statuses("gcd");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 1) << describe(s);
}

// The row maximum of x instead of |x|: rows whose largest magnitude is negative get a wrong
// scale and saturated y.
TEST(WrongLevel2, DynamicQuantWithoutAbsFailsPrecision) {
    const auto s = wrong_kernel_statuses("dynamic_quant");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 1) << describe(s);
}

// --- index ---------------------------------------------------------------------------------

// Picks the last of tied maxima: every case with a tied maximum fails.
TEST(WrongLevel2, ArgMaxKeepingTheLastTieFailsPrecision) {
    const auto s = wrong_kernel_statuses("arg_max");
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 10) << describe(s);
}

// Keeps the first of tied running minima: the index output fails where minima tie.
TEST(WrongLevel2, CumminKeepingTheFirstTieFailsPrecision) {
    const auto s = wrong_kernel_statuses("cummin");
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 10) << describe(s);
}

// Uses the index's sizes for x: fails where index is smaller than x outside dim.
TEST(WrongLevel2, GatherWithTheIndexStridesFailsPrecision) {
    const auto s = wrong_kernel_statuses("gather");
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 1) << describe(s);
}

// Leaves data out of amin/amax (include_self=False): the amin and amax cases fail.
TEST(WrongLevel2, ScatterWithoutSelfInMinMaxFailsPrecision) {
    const auto s = wrong_kernel_statuses("scatter");
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 4) << describe(s);
}

// --- loss ----------------------------------------------------------------------------------

// Mean over every position, ignored ones included: with about one position in eight ignored
// the mean comes out ~12% low; none and sum are right.
TEST(WrongLevel2, CrossEntropyMeanOverIgnoredPositionsFailsOnlyForMean) {
    auto s = wrong_kernel_statuses("cross_entropy_loss", {1, 3, 4, 8});
    EXPECT_EQ(s[1], "PRECISION_FAIL");  // mean, ignore_index -100
    EXPECT_EQ(s[4], "PRECISION_FAIL");  // mean, ignore_index 6 (a class)
    EXPECT_EQ(s[3], "PASS");            // none
    EXPECT_EQ(s[8], "PASS");            // sum
}

// --- normalization -------------------------------------------------------------------------

TEST(WrongLevel2, SoftmaxWithoutMaxSubtractionFailsOnWideRanges) {
    auto s = wrong_kernel_statuses("softmax", {1, 7, 9});
    EXPECT_EQ(s[1], "PASS");            // [-0.25, 0.25]
    EXPECT_EQ(s[9], "PRECISION_FAIL");  // [-1000, 1000]: e^x overflows
    EXPECT_EQ(s[7], "PRECISION_FAIL");  // fp16 boundary range
}

TEST(WrongLevel2, RmsNormDividingByTheLastDimFailsWhenGammaHasSeveralDims) {
    auto s = wrong_kernel_statuses("rms_norm", {1, 7});
    EXPECT_EQ(s[1], "PASS");            // gamma [256]
    EXPECT_EQ(s[7], "PRECISION_FAIL");  // gamma [3, 256]
}

TEST(WrongLevel2, GroupNormWithGammaByPositionInGroupFailsWithSeveralGroups) {
    auto s = wrong_kernel_statuses("group_norm", {1, 5});
    EXPECT_EQ(s[1], "PASS");            // one group
    EXPECT_EQ(s[5], "PRECISION_FAIL");  // x [4464, 800], 32 groups of 25 channels
}

// --- resize and spatial --------------------------------------------------------------------

// Case 10 (align_corners=true, output_size [55, 123] from 91 x 49, float32) samples shifted
// positions; case 9 (align_corners=false, output_size) is computed right.
TEST(WrongLevel2, ResizeIgnoringAlignCornersFailsPrecision) {
    auto s = wrong_kernel_statuses("resize_bilinear", {9, 10});
    EXPECT_EQ(s[10], "PRECISION_FAIL");
    EXPECT_EQ(s[9], "PASS");
}

// Accumulating bfloat16 in bfloat16: case 12 sums about 20000 rows of +-1e4 per segment,
// far past bf16's 8 bits; the float32 case 20 is computed right.
TEST(WrongLevel2, SegmentSumWithHalfAccumulatorsFailsPrecision) {
    auto s = wrong_kernel_statuses("unsorted_segment_sum", {12, 20});
    EXPECT_EQ(s[12], "PRECISION_FAIL");
    EXPECT_EQ(s[20], "PASS");
}

// Ignoring the layout: case 12 is layout 1 ([B, N, S, D] with N = 4, S = 419) and rotates
// by the wrong angles; case 11 is layout 0 and comes out right.
TEST(WrongLevel2, RopeIgnoringTheLayoutFailsPrecision) {
    auto s = wrong_kernel_statuses("apply_rotary_pos_emb", {11, 12});
    EXPECT_EQ(s[12], "PRECISION_FAIL");
    EXPECT_EQ(s[11], "PASS");
}

// align_corners ignored in the unnormalization: case 10 (align_corners=true, nearest,
// border) samples shifted voxels; case 9 (align_corners=false) is right.
TEST(WrongLevel2, GridSamplerIgnoringAlignCornersFailsPrecision) {
    auto s = wrong_kernel_statuses("grid_sampler_3d", {9, 10});
    EXPECT_EQ(s[10], "PRECISION_FAIL");
    EXPECT_EQ(s[9], "PASS");
}

// The edits apply to the current reference kernels: each wrong kernel differs from its
// reference (a stale edit would throw in wrong_submission_dir).
TEST(WrongKernels, EveryEditAppliesToItsReferenceKernel) {
    const auto entries = wrong_kernel_entries();
    EXPECT_GE(entries.size(), 16u);
    for (const auto& [op, entry] : entries) {
        EXPECT_NO_THROW(wrong_kernel_source(op, entry.second, entry.first)) << op;
        EXPECT_TRUE(std::filesystem::exists(wrong_submission_dir() + "/" + op + ".cpp")) << op;
    }
}

}  // namespace
}  // namespace hb::test
