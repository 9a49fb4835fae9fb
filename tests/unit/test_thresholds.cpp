// The precision thresholds a case is judged by (methodology section 3 tables).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "verify/thresholds.hpp"

namespace hb {
namespace {

TEST(Thresholds, Fp16MatchesTheTables) {
    const Thresholds th = thresholds_for(DType::f16);
    EXPECT_EQ(th.tau, std::ldexp(1.0, -10));
    EXPECT_DOUBLE_EQ(th.max_rel, 9.765625e-3);
    EXPECT_EQ(th.tau_sv, std::ldexp(1.0, -11));
    EXPECT_EQ(th.eps_sv, std::ldexp(1.0, -16));
    EXPECT_EQ(th.tau_cb, std::ldexp(1.0, -5));
    EXPECT_EQ(th.tau_cz(), th.tau_cb);
    EXPECT_FALSE(th.tau_overridden);
    EXPECT_FALSE(th.bit_exact());
}

TEST(Thresholds, Bf16MatchesTheTables) {
    const Thresholds th = thresholds_for(DType::bf16);
    EXPECT_EQ(th.tau, std::ldexp(1.0, -7));
    EXPECT_DOUBLE_EQ(th.max_rel, 7.8125e-2);
    EXPECT_EQ(th.tau_sv, std::ldexp(1.0, -8));
    EXPECT_EQ(th.eps_sv, std::ldexp(1.0, -16));
    EXPECT_EQ(th.tau_cb, std::ldexp(1.0, -3));
}

TEST(Thresholds, Fp32MatchesTheTablesAndFp64UsesFp32s) {
    for (DType t : {DType::f32, DType::f64}) {
        const Thresholds th = thresholds_for(t);
        EXPECT_EQ(th.dtype, t);
        EXPECT_EQ(th.tau, std::ldexp(1.0, -13));
        EXPECT_DOUBLE_EQ(th.max_rel, 1.220703125e-3);
        EXPECT_EQ(th.tau_sv, std::ldexp(1.0, -14));
        EXPECT_EQ(th.eps_sv, std::ldexp(1.0, -30));
        EXPECT_EQ(th.tau_cb, std::ldexp(1.0, -8));
    }
}

TEST(Thresholds, Bf16AndFp16Differ) {
    const Thresholds f16 = thresholds_for(DType::f16);
    const Thresholds bf16 = thresholds_for(DType::bf16);
    EXPECT_GT(bf16.tau, f16.tau);
    EXPECT_GT(bf16.max_rel, f16.max_rel);
    EXPECT_GT(bf16.tau_sv, f16.tau_sv);
    EXPECT_GT(bf16.tau_cb, f16.tau_cb);
}

TEST(Thresholds, OverrideReplacesTauOnly) {
    const Thresholds th = thresholds_for(DType::f16, {{DType::f16, 0.05}});
    EXPECT_EQ(th.tau, 0.05);
    EXPECT_DOUBLE_EQ(th.max_rel, 0.5);
    EXPECT_TRUE(th.tau_overridden);
    EXPECT_EQ(th.default_tau, std::ldexp(1.0, -10));
    EXPECT_EQ(th.tau_sv, std::ldexp(1.0, -11));
    EXPECT_EQ(th.eps_sv, std::ldexp(1.0, -16));
    EXPECT_EQ(th.tau_cb, std::ldexp(1.0, -5));
}

TEST(Thresholds, OverrideOfAnotherDtypeDoesNotApply) {
    const Thresholds th = thresholds_for(DType::f32, {{DType::f16, 0.1}, {DType::i8, 1.0}});
    EXPECT_EQ(th.tau, std::ldexp(1.0, -13));
    EXPECT_FALSE(th.tau_overridden);
}

TEST(Thresholds, ZeroOnAFloatOutputMeansBitExact) {
    const Thresholds th = thresholds_for(DType::bf16, {{DType::bf16, 0.0}});
    EXPECT_TRUE(th.bit_exact());
    EXPECT_EQ(to_json(th)["mode"], "bit_exact");
}

TEST(Thresholds, IntegersAreExactUnlessAnOverrideGivesATolerance) {
    const Thresholds exact = thresholds_for(DType::i32);
    EXPECT_TRUE(exact.integer());
    EXPECT_EQ(exact.abs_tolerance(), 0);
    EXPECT_FALSE(exact.bit_exact());
    EXPECT_EQ(to_json(exact)["mode"], "exact");

    const Thresholds k1 = thresholds_for(DType::i8, {{DType::i8, 1.0}});
    EXPECT_EQ(k1.abs_tolerance(), 1.0);
    EXPECT_EQ(to_json(k1)["mode"], "abs_tolerance");
    EXPECT_TRUE(thresholds_for(DType::boolean).integer());
}

TEST(Thresholds, JsonRecordsTheEffectiveThreshold) {
    const auto j = to_json(thresholds_for(DType::f32, {{DType::f32, 0.01}}));
    EXPECT_EQ(j["dtype"], "float32");
    EXPECT_EQ(j["tau"], 0.01);
    EXPECT_EQ(j["default_tau"], std::ldexp(1.0, -13));
    EXPECT_EQ(j["tau_overridden"], true);
    EXPECT_EQ(j["mode"], "relative");
}

TEST(Thresholds, BitPatternsTellSignedZerosAndNaNPayloadsApart) {
    for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64})
        EXPECT_NE(dtype_bit_pattern(0.0, t), dtype_bit_pattern(-0.0, t)) << dtype_name(t);
    EXPECT_EQ(dtype_bit_pattern(1.0, DType::f16), 0x3c00u);
    EXPECT_EQ(dtype_bit_pattern(1.0, DType::bf16), 0x3f80u);
    const float nan_a = std::bit_cast<float>(0x7fc00001u);
    const float nan_b = std::bit_cast<float>(0x7fc00002u);
    EXPECT_NE(dtype_bit_pattern(nan_a, DType::f32), dtype_bit_pattern(nan_b, DType::f32));
    EXPECT_EQ(dtype_bit_pattern(-5, DType::i32), dtype_bit_pattern(-5, DType::i32));
}

}  // namespace
}  // namespace hb
