// Deliberately wrong level-3 contraction kernels fail the precision gate on the cases their
// bug touches and pass the others. Each is the reference kernel with the one-bug edits of
// tests/data/wrong_kernels/level3_l3a.yaml (see wrong_kernels.hpp).
#include "wrong_kernels.hpp"

namespace hb::test {
namespace {

// Every group reads x from row 0: cases with several non-empty groups fail; a single group
// (case 10: E = 1) is computed right.
TEST(WrongLevel3L3a, GroupedMatmulWithTheWrongGroupRowsFailsPrecision) {
    auto s = wrong_kernel_statuses("grouped_matmul", {1, 10, 20});
    EXPECT_EQ(s[1], "PRECISION_FAIL");  // 4 groups
    EXPECT_EQ(s[20], "PRECISION_FAIL"); // 2 groups
    EXPECT_EQ(s[10], "PASS");           // 1 group
}

// The per-channel scale applied per tensor: per-channel cases fail, per-tensor ones (scale
// [1]: cases 7 and 19) pass.
TEST(WrongLevel3L3a, QuantMatmulWithAPerTensorScaleFailsPerChannelCases) {
    auto s = wrong_kernel_statuses("quant_matmul", {1, 7, 12, 19});
    EXPECT_EQ(s[1], "PRECISION_FAIL");
    EXPECT_EQ(s[12], "PRECISION_FAIL");
    EXPECT_EQ(s[7], "PASS");
    EXPECT_EQ(s[19], "PASS");
}

// The scale indexed by k instead of n: every case with a non-zero product fails; case 3
// (x and weight zero: y is the bias) passes.
TEST(WrongLevel3L3a, WeightQuantBatchMatmulWithTheScaleByRowFailsPrecision) {
    auto s = wrong_kernel_statuses("weight_quant_batch_matmul", {1, 3, 20});
    EXPECT_EQ(s[1], "PRECISION_FAIL");
    EXPECT_EQ(s[20], "PRECISION_FAIL");
    EXPECT_EQ(s[3], "PASS");
}

}  // namespace
}  // namespace hb::test
