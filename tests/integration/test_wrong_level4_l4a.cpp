// Deliberately wrong kernels of the level-4 attention operators (group l4a) fail the precision
// gate on the cases their bug touches and pass the others: the gate sees the bug, not noise.
// Each is the reference kernel with the one-bug edits of
// tests/data/wrong_kernels/level4_l4a.yaml (see wrong_kernels.hpp). Case numbers refer to
// suite/level4/<op>/cases.cpu.yaml.
#include "wrong_kernels.hpp"

namespace hb::test {
namespace {

// The causal mask off by one: every causal case with values fails (the query that should see
// one key sees none); non-causal cases pass.
TEST(WrongLevel4L4a, MhaMaskOffByOneFailsCausalCases) {
    const auto s = wrong_kernel_statuses("mha", {1, 3, 5, 6, 7, 9, 10, 11, 12, 13, 19, 20});
    for (int c : {1, 7, 10, 11, 13, 20}) EXPECT_EQ(s.at(c), "PRECISION_FAIL") << "causal case " << c;
    for (int c : {5, 6, 9, 12, 19}) EXPECT_EQ(s.at(c), "PASS") << "non-causal case " << c;
    EXPECT_EQ(s.at(3), "PASS");  // causal, all zero: every key has the same value 0
}

// Query heads mapped to KV heads interleaved: wrong wherever 1 < G < Nq, right for MHA (G = 1)
// and MQA (one KV head).
TEST(WrongLevel4L4a, GqaInterleavedHeadMappingFailsGroupedCases) {
    const auto s = wrong_kernel_statuses("gqa", {1, 2, 5, 6, 7, 9, 10, 11, 12, 13, 15, 20});
    for (int c : {1, 6, 10, 11, 13, 20}) EXPECT_EQ(s.at(c), "PRECISION_FAIL") << "grouped case " << c;
    for (int c : {5, 15}) EXPECT_EQ(s.at(c), "PASS") << "G = 1 case " << c;
    for (int c : {2, 7, 9, 12}) EXPECT_EQ(s.at(c), "PASS") << "MQA case " << c;
}

// The default scale from d_nope alone: cases with scaleValue <= 0 and non-zero inputs fail,
// explicit scales pass.
TEST(WrongLevel4L4a, MlaDefaultScaleWithoutTheRopeDimsFailsDefaultScaleCases) {
    const auto s = wrong_kernel_statuses("mla", {1, 3, 5, 7, 9, 10, 11, 12, 13, 19, 20});
    for (int c : {1, 9, 10, 11, 12, 13, 19, 20}) EXPECT_EQ(s.at(c), "PRECISION_FAIL") << "default-scale case " << c;
    for (int c : {5, 7}) EXPECT_EQ(s.at(c), "PASS") << "explicit-scale case " << c;
    EXPECT_EQ(s.at(3), "PASS");  // all zero: every score is 0 whatever the scale
}

// The causal limit off by one: causal cases whose lists hold their limit key fail; non-causal
// cases pass.
TEST(WrongLevel4L4a, SparseCausalLimitOffByOneFailsCausalCases) {
    const auto s = wrong_kernel_statuses("sparse_flash_attention", {1, 5, 8, 9, 11, 12, 13});
    for (int c : {1, 9, 11, 13}) EXPECT_EQ(s.at(c), "PRECISION_FAIL") << "causal case " << c;
    for (int c : {5, 8, 12}) EXPECT_EQ(s.at(c), "PASS") << "non-causal case " << c;
}

// RoPE's first half with the wrong sign: every case with finite, non-zero values fails; the
// all-zero cases pass.
TEST(WrongLevel4L4a, MlaPrologRopeSignFailsEveryFiniteCase) {
    const auto s = wrong_kernel_statuses("mla_prolog", {1, 3, 4, 5, 6, 11, 13, 20});
    for (int c : {1, 5, 6, 11, 13, 20}) EXPECT_EQ(s.at(c), "PRECISION_FAIL") << "case " << c;
    for (int c : {3, 4}) EXPECT_EQ(s.at(c), "PASS") << "all-zero case " << c;
}

}  // namespace
}  // namespace hb::test
