// Deliberately wrong kernels of the level-3 fused, routing and quantizing operators (group
// l3c) fail the precision gate on the cases their bug touches and pass the others: the gate
// sees the bug, not noise. Each is the reference kernel with the one-bug edits of
// tests/data/wrong_kernels/level3_l3c.yaml (see wrong_kernels.hpp). Case numbers refer to
// suite/level3/<op>/cases.cpu.yaml.
#include "wrong_kernels.hpp"

namespace hb::test {
namespace {

// max(u) instead of max|u|: every case with finite, non-zero rows fails (int8 within 1 does
// not hide a halved scale); zero, NaN and infinity cases come out the same (scale 1e-12/127,
// NaN or inf, y all 0).
TEST(WrongLevel3L3c, AddRmsNormDynamicQuantWithoutAbsFailsFiniteCases) {
    auto s = wrong_kernel_statuses("add_rms_norm_dynamic_quant", {1, 3, 5, 14, 16});
    EXPECT_EQ(s[1], "PRECISION_FAIL");  // [-0.25, 0.25]
    EXPECT_EQ(s[5], "PRECISION_FAIL");  // [-10, 10]
    EXPECT_EQ(s[3], "PASS");            // zero
    EXPECT_EQ(s[14], "PASS");           // infinities
    EXPECT_EQ(s[16], "PASS");           // NaN
}

// activate_left ignored: the activate_left=true cases with finite values fail.
TEST(WrongLevel3L3c, DequantSwigluQuantIgnoringActivateLeftFailsThoseCases) {
    auto s = wrong_kernel_statuses("dequant_swiglu_quant", {5, 6, 8, 10, 12, 19, 20});
    EXPECT_EQ(s[6], "PRECISION_FAIL");   // activate_left, bf16
    EXPECT_EQ(s[8], "PRECISION_FAIL");   // activate_left, int32 type boundary
    EXPECT_EQ(s[10], "PRECISION_FAIL");  // activate_left, bf16 asymmetric
    EXPECT_EQ(s[20], "PRECISION_FAIL");  // activate_left, fp16 with quant_scale
    EXPECT_EQ(s[5], "PASS");
    EXPECT_EQ(s[19], "PASS");
}

// The convolution state ignored: the decode cases with a (non-zero) conv_state fail.
TEST(WrongLevel3L3c, EngramGateFusionIgnoringTheStateFailsDecodeCases) {
    auto s = wrong_kernel_statuses("engram_gate_fusion", {1, 3, 6, 9, 12});
    EXPECT_EQ(s[6], "PRECISION_FAIL");
    EXPECT_EQ(s[9], "PRECISION_FAIL");
    EXPECT_EQ(s[12], "PRECISION_FAIL");
    EXPECT_EQ(s[1], "PASS");  // no state
    EXPECT_EQ(s[3], "PASS");  // a state of zeros
}

// No column normalization in iteration 1: iter_step = 1 cases fail; 20 iterations from
// [-0.5, 0.5] converge to the same matrices.
TEST(WrongLevel3L3c, MhcSinkhornSkippingTheFirstColumnStepFailsSingleIterations) {
    auto s = wrong_kernel_statuses("mhc_sinkhorn", {1, 7, 11, 12});
    EXPECT_EQ(s[7], "PRECISION_FAIL");   // iter_step 1, type boundary
    EXPECT_EQ(s[12], "PRECISION_FAIL");  // iter_step 1, [-1000, 1000]
    EXPECT_EQ(s[1], "PASS");             // iter_step 20, [-0.25, 0.25]
    EXPECT_EQ(s[11], "PASS");            // iter_step 20, [-0.5, 0.5]
}

// Bias added after scaling: the cases with both bias and scales fail, the others pass.
TEST(WrongLevel3L3c, MoeFinalizeRoutingBiasAfterScalingFailsBiasedScaledCases) {
    auto s = wrong_kernel_statuses("moe_finalize_routing", {5, 10, 11, 17, 20});
    EXPECT_EQ(s[10], "PRECISION_FAIL");  // mode 2, bias, fp32 scales
    EXPECT_EQ(s[11], "PRECISION_FAIL");  // mode 0, bias, no skips
    EXPECT_EQ(s[17], "PRECISION_FAIL");  // mode 0, everything
    EXPECT_EQ(s[5], "PASS");             // scales, no bias
    EXPECT_EQ(s[20], "PASS");            // bias, no scales (scale 1)
}

// Ties to the higher index: every case with tied logits fails (the all-zero cases, fp16 and
// bf16 repeats, NaN and infinity rows); float32 cases without ties pass.
TEST(WrongLevel3L3c, MoeGatingBreakingTiesTheOtherWayFails) {
    const auto s = wrong_kernel_statuses("moe_gating_top_k_softmax");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_EQ(s.at(3), "PRECISION_FAIL");  // float32 zeros: uniform softmax, all tied
    EXPECT_EQ(s.at(4), "PRECISION_FAIL");  // bfloat16 zeros
    EXPECT_EQ(s.at(1), "PRECISION_FAIL");  // fp16 [-0.25, 0.25]: repeated values
    // float32 [-10, 10] (case 5) is left out: among ~10^6 random fp32 logits in a narrow
    // range a row can hold two equal values by chance (the inputs of generator 3 do), and then
    // the wrong tie order is rightly caught there too.
    EXPECT_EQ(s.at(13), "PASS");           // float32 [-200, 200]
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 15) << describe(s);
}

}  // namespace
}  // namespace hb::test
