// A keyed digest of a byte range, fast enough to take of a whole output after every
// correctness call (several GB/s), in place of a copy of it: with a key the reader cannot
// know, a change to the bytes leaves the digest as it was with probability about 2^-32.
//
// NH (the universal hash of UMAC: sums of products of key-offset 32-bit word pairs) over each
// 256-byte block, the blocks' values combined by a polynomial modulo 2^61 - 1 at a secret
// point, the length last. Not a cryptographic hash and not for anything stored: a key is
// drawn for one comparison (the harness's own memory, which the kernel's process cannot read).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>

namespace hb {

struct DigestKey {
    static constexpr std::size_t block_words = 64;  // 32-bit words in a 256-byte block
    std::array<std::uint32_t, block_words> nh{};
    std::uint64_t point = 0;  // in [1, 2^61 - 2]
    static DigestKey draw(std::mt19937_64& rng);
};

std::uint64_t keyed_digest(const void* data, std::size_t bytes, const DigestKey& key);

}  // namespace hb
