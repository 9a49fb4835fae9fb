// Conversions every comparison and every generated input depends on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/dtype.hpp"
#include "hapbench/half.h"

namespace hb {
namespace {

TEST(Dtype, EveryF16BitPatternRoundTripsThroughF32) {
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const auto h = static_cast<std::uint16_t>(bits);
        const float f = hb_f16_to_f32(h);
        const std::uint16_t back = hb_f32_to_f16(f);
        if (std::isnan(f)) {
            EXPECT_TRUE(std::isnan(hb_f16_to_f32(back))) << bits;
        } else {
            EXPECT_EQ(back, h) << "pattern " << bits;
            EXPECT_EQ(f64_to_f16_bits(static_cast<double>(f)), h) << "pattern " << bits;
        }
    }
}

TEST(Dtype, EveryBf16BitPatternRoundTripsThroughF32) {
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const auto b = static_cast<std::uint16_t>(bits);
        const float f = hb_bf16_to_f32(b);
        const std::uint16_t back = hb_f32_to_bf16(f);
        if (std::isnan(f)) {
            EXPECT_TRUE(std::isnan(hb_bf16_to_f32(back))) << bits;
        } else {
            EXPECT_EQ(back, b) << "pattern " << bits;
            EXPECT_EQ(f64_to_bf16_bits(static_cast<double>(f)), b) << "pattern " << bits;
        }
    }
}

TEST(Dtype, TiesRoundToEven) {
    // 1 + 2^-11 is halfway between fp16 1.0 and 1.0009765625: ties to even gives 1.0.
    EXPECT_EQ(hb_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even): rounds up.
    EXPECT_EQ(hb_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
    EXPECT_EQ(hb_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    EXPECT_EQ(hb_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
    EXPECT_EQ(f64_to_f16_bits(1.0 + 0x1p-11), 0x3c00);
    // Just above the tie must round up even though fp32 would round it to the tie.
    EXPECT_EQ(f64_to_f16_bits(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
    EXPECT_EQ(f64_to_bf16_bits(1.0 + 0x1p-8 + 0x1p-40), 0x3f81);
}

TEST(Dtype, OverflowGoesToInfinity) {
    EXPECT_EQ(hb_f32_to_f16(65520.0f), 0x7c00);
    EXPECT_EQ(hb_f32_to_f16(65519.0f), 0x7bff);
    EXPECT_EQ(hb_f32_to_f16(-1e10f), 0xfc00);
    EXPECT_EQ(hb_f32_to_bf16(3.4028235e38f), 0x7f80);  // rounds past the bf16 maximum
    EXPECT_TRUE(std::isinf(round_to_dtype(1e300, DType::f32)));
}

TEST(Dtype, NanStaysNan) {
    const float nan = std::nanf("");
    EXPECT_TRUE(std::isnan(hb_f16_to_f32(hb_f32_to_f16(nan))));
    EXPECT_TRUE(std::isnan(hb_bf16_to_f32(hb_f32_to_bf16(nan))));
    // A signalling NaN whose payload lives only in the low bits stays a NaN, not infinity.
    float snan;
    std::uint32_t bits = 0x7f800001u;
    std::memcpy(&snan, &bits, 4);
    EXPECT_TRUE(std::isnan(hb_bf16_to_f32(hb_f32_to_bf16(snan))));
    EXPECT_TRUE(std::isnan(hb_f16_to_f32(hb_f32_to_f16(snan))));
    EXPECT_TRUE(std::isnan(round_to_dtype(std::nan(""), DType::f16)));
}

TEST(Dtype, IntegersSaturate) {
    EXPECT_EQ(round_to_dtype(300, DType::i8), 127);
    EXPECT_EQ(round_to_dtype(-300, DType::i8), -128);
    EXPECT_EQ(round_to_dtype(2.5, DType::i32), 2);  // nearest even
    EXPECT_EQ(round_to_dtype(-1, DType::u8), 0);
}

TEST(Dtype, NamesParse) {
    EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
    EXPECT_EQ(parse_dtype("fp16"), DType::f16);
    EXPECT_THROW(parse_dtype("float8"), std::exception);
}

}  // namespace
}  // namespace hb
