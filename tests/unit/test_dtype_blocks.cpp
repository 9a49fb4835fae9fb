// The block conversions (narrow_block: the input generator's fp64 -> dtype rounding; widen_block
// and round_block: verification's loads and golden rounding; vectorized, one build per
// instruction set) against the scalar conversions of core/dtype: the same bits for every value,
// ties, subnormals, overflow, infinities and NaN included, in every dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/dtype.hpp"
#include "core/dtype_blocks.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "suite/inputs.hpp"

namespace hb {
namespace {

std::vector<double> awkward_values() {
    std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, -65520.0, 1e300, -1e300,
                             std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(), 5.96e-8, 2.98e-8, 1e-45, 3.4e38, 3.5e38,
                             -3.5e38, std::numeric_limits<double>::denorm_min(), 1.0 + std::ldexp(1.0, -11),
                             1.0 + std::ldexp(1.0, -8), 1.0 + std::ldexp(1.0, -24)};
    // Ties of each half type, and just either side of them (where double rounding through fp32
    // would go wrong).
    for (int e = -20; e <= 15; ++e)
        for (int bits : {8, 11}) {
            const double tie = std::ldexp(1.0 + std::ldexp(1.0, -bits), e);
            for (double d : {tie, std::nextafter(tie, 0.0), std::nextafter(tie, 10.0)}) {
                v.push_back(d);
                v.push_back(-d);
            }
        }
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-160, 140);
    for (int i = 0; i < 20000; ++i) v.push_back(std::ldexp(mantissa(rng), exponent(rng)));
    return v;
}

TEST(NarrowBlock, MatchesTheScalarRoundingOfEveryDtype) {
    const std::vector<double> in = awkward_values();
    std::vector<std::uint16_t> half(in.size());
    std::vector<float> single(in.size());
    for (std::size_t at = 0; at < in.size(); at += 1000) {  // blocks as the generator passes them
        const std::size_t n = std::min<std::size_t>(1000, in.size() - at);
        narrow_block(in.data() + at, n, DType::f32, single.data() + at);
    }
    for (std::size_t i = 0; i < in.size(); ++i) {
        const float want = static_cast<float>(in[i]);
        if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(single[i]));
            continue;
        }
        EXPECT_EQ(std::memcmp(&single[i], &want, 4), 0) << "float32 of " << in[i];
    }
    for (DType t : {DType::f16, DType::bf16}) {
        for (std::size_t at = 0; at < in.size(); at += 1000) {
            const std::size_t n = std::min<std::size_t>(1000, in.size() - at);
            narrow_block(in.data() + at, n, t, half.data() + at);
        }
        int wrong = 0;
        for (std::size_t i = 0; i < in.size(); ++i) {
            const std::uint16_t want = t == DType::f16 ? f64_to_f16_bits(in[i]) : f64_to_bf16_bits(in[i]);
            const bool nan = std::isnan(in[i]);
            const bool same = nan ? (half[i] & 0x7fffu) > (t == DType::f16 ? 0x7c00u : 0x7f80u) : half[i] == want;
            if (!same && wrong++ < 5)
                ADD_FAILURE() << dtype_name(t) << " of " << in[i] << ": got 0x" << std::hex << half[i] << ", want 0x"
                              << want;
        }
        EXPECT_EQ(wrong, 0) << dtype_name(t);
    }
}

// Every bit pattern of the 16-bit types, and the awkward values stored in each wider type.
std::vector<unsigned char> stored_values(DType t) {
    std::vector<unsigned char> bytes;
    if (t == DType::f16 || t == DType::bf16) {
        for (std::uint32_t b = 0; b < 65536; ++b) {
            const auto h = static_cast<std::uint16_t>(b);
            bytes.insert(bytes.end(), reinterpret_cast<const unsigned char*>(&h), reinterpret_cast<const unsigned char*>(&h) + 2);
        }
        return bytes;
    }
    const std::vector<double> in = awkward_values();
    bytes.resize(in.size() * dtype_size(t));
    for (std::size_t i = 0; i < in.size(); ++i) store_element(bytes.data(), i, t, in[i] * (is_integer(t) ? 1e3 : 1.0));
    return bytes;
}

bool same_double(double a, double b) { return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, 8) == 0; }

TEST(WidenBlock, MatchesLoadElementForEveryDtype) {
    for (DType t : all_dtypes) {
        const std::vector<unsigned char> bytes = stored_values(t);
        const std::size_t n = bytes.size() / dtype_size(t);
        std::vector<double> wide(n);
        for (std::size_t at = 0; at < n; at += 777) {  // odd blocks: the vector loops' tails too
            const std::size_t count = std::min<std::size_t>(777, n - at);
            widen_block(bytes.data() + at * dtype_size(t), count, t, wide.data() + at);
        }
        int wrong = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double want = load_element(bytes.data(), i, t);
            if (!same_double(wide[i], want) && wrong++ < 5)
                ADD_FAILURE() << dtype_name(t) << " element " << i << ": got " << wide[i] << ", want " << want;
        }
        EXPECT_EQ(wrong, 0) << dtype_name(t);
    }
}

TEST(RoundBlock, MatchesRoundToDtypeForEveryDtype) {
    std::vector<double> in = awkward_values();
    for (double& v : std::vector<double>(in)) in.push_back(v * 1e3);  // integer ranges too
    for (DType t : all_dtypes) {
        std::vector<double> rounded(in.size());
        round_block(in.data(), in.size(), t, rounded.data());
        std::vector<double> in_place = in;
        round_block(in_place.data(), in_place.size(), t, in_place.data());
        int wrong = 0;
        for (std::size_t i = 0; i < in.size(); ++i) {
            const double want = round_to_dtype(in[i], t);
            if ((!same_double(rounded[i], want) || !same_double(in_place[i], want)) && wrong++ < 5)
                ADD_FAILURE() << dtype_name(t) << " of " << in[i] << ": got " << rounded[i] << ", want " << want;
        }
        EXPECT_EQ(wrong, 0) << dtype_name(t);
    }
}

// Input generator 4, written out in scalar code: the first piece of a tensor is drawn by eight
// xoshiro256** lanes seeded from the piece's generator, element 8k + l by lane l, each
// lo + (hi - lo) * u with u the top 52 bits of the draw as a double in [0, 1). Whatever build of
// the vectorized generator runs on this CPU must give these bits.
TEST(InputGenerator, BulkFloatsAreTheDocumentedLaneDraws) {
    const std::uint64_t stream = 0x1234567;
    const double lo = -3, hi = 5;
    const std::size_t n = 3001;  // crosses the generator's blocks of 1024 and ends mid-group
    Tensor f64(TensorSpec{DType::f64, Shape{static_cast<std::int64_t>(n)}});
    Tensor f32(TensorSpec{DType::f32, Shape{static_cast<std::int64_t>(n)}});
    fill_tensor(f64, ValueRange{lo, hi}, stream);
    fill_tensor(f32, ValueRange{lo, hi}, stream);

    std::uint64_t piece_state = stream;  // piece 0
    Rng piece(splitmix64(piece_state));
    std::uint64_t s[4][8];
    for (int l = 0; l < 8; ++l) {
        std::uint64_t state = piece.next_u64();
        for (auto& word : s) word[l] = splitmix64(state);
    }
    auto rotl = [](std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
    for (std::size_t i = 0; i < n; ++i) {
        const int l = static_cast<int>(i % 8);
        const std::uint64_t result = rotl(s[1][l] * 5, 7) * 9;
        const std::uint64_t t = s[1][l] << 17;
        s[2][l] ^= s[0][l];
        s[3][l] ^= s[1][l];
        s[1][l] ^= s[2][l];
        s[0][l] ^= s[3][l];
        s[2][l] ^= t;
        s[3][l] = rotl(s[3][l], 45);
        const double u = static_cast<double>(result >> 12) * 0x1.0p-52;
        const double want = lo + (hi - lo) * u;
        const double got = static_cast<const double*>(f64.data())[i];
        ASSERT_EQ(std::memcmp(&got, &want, 8), 0) << "element " << i << ": got " << got << ", want " << want;
        const float want32 = static_cast<float>(want);
        ASSERT_EQ(static_cast<const float*>(f32.data())[i], want32) << "element " << i;
    }
}

}  // namespace
}  // namespace hb
