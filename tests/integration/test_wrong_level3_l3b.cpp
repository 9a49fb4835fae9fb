// Deliberately wrong level-3 kernels of the l3b group fail the precision gate on the cases
// their bug touches and pass the others: the gate sees the bug, not noise. Each is the
// reference kernel with the one-bug edit of tests/data/wrong_kernels/level3_l3b.yaml (see
// wrong_kernels.hpp); two public cases per operator, one the bug reaches and one it cannot.
#include "wrong_kernels.hpp"

namespace hb::test {
namespace {

// Left pad taken from the bottom pad: case 11 (pads [0, 0, 1, 1], float32) shifts every row;
// case 19 (pads [1, 1, 1, 1]) reads the same value either way.
TEST(WrongLevel3L3b, Conv2dWithPadsInTheWrongOrderFailsPrecision) {
    auto s = wrong_kernel_statuses("conv_2d", {11, 19});
    EXPECT_EQ(s[11], "PRECISION_FAIL");
    EXPECT_EQ(s[19], "PASS");
}

// The left padding dropped: case 1 (padding [1, 1]) samples one column off; case 2 (padding
// [0, 0], 1x1 kernel) has none to drop.
TEST(WrongLevel3L3b, DepthwiseWithoutLeftPaddingFailsPrecision) {
    auto s = wrong_kernel_statuses("depthwise_conv_2d", {1, 2});
    EXPECT_EQ(s[1], "PRECISION_FAIL");
    EXPECT_EQ(s[2], "PASS");
}

// Interleaved group mapping: case 8 (4 groups of 16 output channels) pairs output channels
// with the wrong input group; case 12 (groups 1) has one group. (With one output channel per
// group, as in case 5, both mappings agree.)
TEST(WrongLevel3L3b, BackpropFilterWithInterleavedGroupsFailsPrecision) {
    auto s = wrong_kernel_statuses("conv_3d_backprop_filter", {8, 12});
    EXPECT_EQ(s[8], "PRECISION_FAIL");
    EXPECT_EQ(s[12], "PASS");
}

// The larger half of an odd SAME padding on top: case 7 (2x2 filter, total padding 1) shifts
// by one pixel; case 1 (3x3 filter, stride 1: padding 1 on each side) is even.
TEST(WrongLevel3L3b, DilationWithPyTorchsSamePaddingSplitFailsPrecision) {
    auto s = wrong_kernel_statuses("dilation_2d", {1, 7});
    EXPECT_EQ(s[7], "PRECISION_FAIL");
    EXPECT_EQ(s[1], "PASS");
}

// Window ends rounded down: case 5 (up-sampling, uneven windows) loses elements; case 13
// (global pooling) has one window covering everything.
TEST(WrongLevel3L3b, AdaptivePoolWithFlooredWindowEndsFailsPrecision) {
    auto s = wrong_kernel_statuses("adaptive_avg_pool_3d", {5, 13});
    EXPECT_EQ(s[5], "PRECISION_FAIL");
    EXPECT_EQ(s[13], "PASS");
}

// aligned ignored: case 20 (aligned) samples half a pixel off; case 1 (not aligned) is right.
TEST(WrongLevel3L3b, RoiAlignIgnoringAlignedFailsPrecision) {
    auto s = wrong_kernel_statuses("roi_align", {1, 20});
    EXPECT_EQ(s[20], "PRECISION_FAIL");
    EXPECT_EQ(s[1], "PASS");
}

}  // namespace
}  // namespace hb::test
