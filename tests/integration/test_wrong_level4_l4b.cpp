// Deliberately wrong kernels of the level-4 recurrences and fused MoE operator (group l4b)
// fail the precision gate on the cases their bug touches and pass the others: the gate sees
// the bug, not noise. Each is the reference kernel with the one-bug edits of
// tests/data/wrong_kernels/level4_l4b.yaml (see wrong_kernels.hpp). Case numbers refer to
// suite/level4/<op>/cases.cpu.yaml.
#include "wrong_kernels.hpp"

namespace hb::test {
namespace {

// gru with r and z read from each other's blocks: every finite case fails, the all-zero ones
// too where bias lists make r and z differ; the NaN and infinity cases, whose outputs are NaN
// (or saturated to the same values) either way, pass.
TEST(WrongLevel4L4b, GruWithResetAndUpdateSwappedFailsFiniteCases) {
    auto s = wrong_kernel_statuses("gru", {1, 3, 7, 10, 14, 16});
    EXPECT_EQ(s[1], "PRECISION_FAIL");   // float32 [-0.25, 0.25]
    EXPECT_EQ(s[3], "PRECISION_FAIL");   // zeros, bias lists: only the biases act
    EXPECT_EQ(s[7], "PRECISION_FAIL");   // float32 type boundary, bias false
    EXPECT_EQ(s[10], "PRECISION_FAIL");  // float16, two bidirectional layers
    EXPECT_EQ(s[14], "PASS");            // infinities: NaN everywhere
    EXPECT_EQ(s[16], "PASS");            // NaN
}

// lstm with i and f swapped: every finite case with non-zero inputs fails. The all-zero cases
// (3 and 4: only the biases, drawn in [-0.25, 0.25], act) are not asserted: there the swap
// moves y by about the half-precision tolerance, and whether it passes depends on the biases
// drawn (case 3 failed under input generator 3 and passes under 4).
TEST(WrongLevel4L4b, LstmWithInputAndForgetSwappedFailsFiniteCases) {
    auto s = wrong_kernel_statuses("lstm", {1, 6, 13, 15, 17});
    EXPECT_EQ(s[1], "PRECISION_FAIL");   // float32 [-0.25, 0.25]
    EXPECT_EQ(s[6], "PRECISION_FAIL");   // float16 type boundary, two layers, projection
    EXPECT_EQ(s[13], "PRECISION_FAIL");  // bfloat16, bidirectional, projection
    EXPECT_EQ(s[15], "PASS");            // infinities
    EXPECT_EQ(s[17], "PASS");            // NaN
}

// The right half activated: every case with finite, non-zero rows fails (the NaN and infinity
// cases too: only some of their rows are special); the zero-x_scale cases, all 0, pass.
TEST(WrongLevel4L4b, GroupedMatmulSwigluQuantActivatingTheRightHalfFails) {
    auto s = wrong_kernel_statuses("grouped_matmul_swiglu_quant", {1, 3, 4, 6, 16, 18});
    EXPECT_EQ(s[1], "PRECISION_FAIL");   // 8 experts
    EXPECT_EQ(s[6], "PRECISION_FAIL");   // type boundary, two empty groups
    EXPECT_EQ(s[16], "PRECISION_FAIL");  // NaN x_scale in some rows
    EXPECT_EQ(s[18], "PRECISION_FAIL");  // infinite x_scale in some rows
    EXPECT_EQ(s[3], "PASS");             // x_scale 0: act 0 in every row
    EXPECT_EQ(s[4], "PASS");
}

}  // namespace
}  // namespace hb::test
