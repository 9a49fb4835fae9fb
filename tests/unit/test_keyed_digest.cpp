// core/keyed_digest: the same bytes give the same digest under a key; a change of one bit
// anywhere, of the length, or of the key gives another.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/keyed_digest.hpp"

namespace hb {
namespace {

std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<unsigned char> v(n);
    for (auto& b : v) b = static_cast<unsigned char>(rng());
    return v;
}

TEST(KeyedDigest, TheSameBytesGiveTheSameDigestWhereverTheyLie) {
    std::mt19937_64 rng(1);
    const DigestKey key = DigestKey::draw(rng);
    const auto bytes = random_bytes(100'003, 2);
    std::vector<unsigned char> shifted(bytes.size() + 1);
    std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);  // unaligned
    EXPECT_EQ(keyed_digest(bytes.data(), bytes.size(), key), keyed_digest(shifted.data() + 1, bytes.size(), key));
}

TEST(KeyedDigest, OneFlippedBitAnywhereChangesIt) {
    std::mt19937_64 rng(3);
    const DigestKey key = DigestKey::draw(rng);
    auto bytes = random_bytes(4096 + 77, 4);
    const std::uint64_t before = keyed_digest(bytes.data(), bytes.size(), key);
    for (std::size_t at : {std::size_t{0}, std::size_t{255}, std::size_t{256}, std::size_t{2000}, bytes.size() - 1})
        for (int bit : {0, 7}) {
            bytes[at] ^= static_cast<unsigned char>(1u << bit);
            EXPECT_NE(keyed_digest(bytes.data(), bytes.size(), key), before) << "byte " << at << " bit " << bit;
            bytes[at] ^= static_cast<unsigned char>(1u << bit);
        }
    EXPECT_EQ(keyed_digest(bytes.data(), bytes.size(), key), before);
}

TEST(KeyedDigest, TrailingZerosAndTheEmptyRangeAreToldApart) {
    std::mt19937_64 rng(5);
    const DigestKey key = DigestKey::draw(rng);
    const std::vector<unsigned char> zeros(512, 0);
    EXPECT_NE(keyed_digest(zeros.data(), 100, key), keyed_digest(zeros.data(), 101, key));
    EXPECT_NE(keyed_digest(zeros.data(), 256, key), keyed_digest(zeros.data(), 512, key));
    EXPECT_NE(keyed_digest(zeros.data(), 0, key), keyed_digest(zeros.data(), 1, key));
}

TEST(KeyedDigest, AnotherKeyGivesAnotherDigest) {
    std::mt19937_64 rng(6);
    const DigestKey a = DigestKey::draw(rng), b = DigestKey::draw(rng);
    const auto bytes = random_bytes(1000, 7);
    EXPECT_NE(keyed_digest(bytes.data(), bytes.size(), a), keyed_digest(bytes.data(), bytes.size(), b));
}

// A change that swaps two blocks, or moves the same bytes to other positions, is a change.
TEST(KeyedDigest, ReorderedBlocksChangeIt) {
    std::mt19937_64 rng(8);
    const DigestKey key = DigestKey::draw(rng);
    auto bytes = random_bytes(1024, 9);
    const std::uint64_t before = keyed_digest(bytes.data(), bytes.size(), key);
    std::swap_ranges(bytes.begin(), bytes.begin() + 256, bytes.begin() + 256);
    EXPECT_NE(keyed_digest(bytes.data(), bytes.size(), key), before);
}

}  // namespace
}  // namespace hb
