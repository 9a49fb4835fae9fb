// The PRNG's integer draws: uniform_int is the case generator's (its sequence is pinned by the
// shipped cases files, which Cli.GenCasesReproducesTheShippedCases regenerates), and
// uniform_int_fast draws the same distribution by another method for bulk inputs.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "core/rng.hpp"

namespace hb {
namespace {

TEST(Rng, UniformIntKeepsItsSequence) {
    // r mod span with rejection: the first draws of seed 2026, recorded when the shipped cases
    // files were drawn. A change here redraws every public case.
    Rng a(2026), b(2026);
    for (int i = 0; i < 1000; ++i) {
        const std::uint64_t r = b.next_u64();
        ASSERT_EQ(a.uniform_int(0, 9), static_cast<std::int64_t>(r % 10)) << i;  // 10 divides no power of 2: limit < 2^64
    }
}

TEST(Rng, BothIntegerDrawsStayInRangeAndAreUniform) {
    for (const bool fast : {false, true}) {
        Rng rng(7);
        std::array<int, 7> counts{};
        const int n = 70000;
        for (int i = 0; i < n; ++i) {
            const std::int64_t v = fast ? rng.uniform_int_fast(-3, 3) : rng.uniform_int(-3, 3);
            ASSERT_GE(v, -3);
            ASSERT_LE(v, 3);
            ++counts[static_cast<std::size_t>(v + 3)];
        }
        // Each bin expects 10000 with a standard deviation of about 93: 6 sigma.
        for (int c : counts) EXPECT_NEAR(c, n / 7, 560) << (fast ? "fast" : "plain");
        EXPECT_EQ(fast ? rng.uniform_int_fast(5, 5) : rng.uniform_int(5, 5), 5);
        const std::int64_t lo = INT64_MIN, hi = INT64_MAX;  // the full range: span 2^64 wraps to 0
        (void)(fast ? rng.uniform_int_fast(lo, hi) : rng.uniform_int(lo, hi));
    }
}

}  // namespace
}  // namespace hb
