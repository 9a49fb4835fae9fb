#include "core/keyed_digest.hpp"

#include <cstring>

namespace hb {

namespace {

constexpr std::uint64_t kPrime = (std::uint64_t{1} << 61) - 1;

std::uint64_t mod_prime(unsigned __int128 x) {
    std::uint64_t r = static_cast<std::uint64_t>(x & kPrime) + static_cast<std::uint64_t>(x >> 61);
    r = (r & kPrime) + (r >> 61);
    return r >= kPrime ? r - kPrime : r;
}

// NH of one block of 64 words: sum over pairs of (m[2i] + k[2i]) * (m[2i+1] + k[2i+1]), the
// sums modulo 2^32 and the total modulo 2^64.
std::uint64_t nh_block(const std::uint32_t* m, const std::uint32_t* k) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < DigestKey::block_words; i += 2)
        sum += static_cast<std::uint64_t>(static_cast<std::uint32_t>(m[i] + k[i])) *
               static_cast<std::uint32_t>(m[i + 1] + k[i + 1]);
    return sum;
}

}  // namespace

DigestKey DigestKey::draw(std::mt19937_64& rng) {
    DigestKey key;
    for (auto& word : key.nh) word = static_cast<std::uint32_t>(rng());
    key.point = std::uniform_int_distribution<std::uint64_t>(1, kPrime - 2)(rng);
    return key;
}

std::uint64_t keyed_digest(const void* data, std::size_t bytes, const DigestKey& key) {
    constexpr std::size_t block_bytes = DigestKey::block_words * 4;
    const auto* p = static_cast<const unsigned char*>(data);
    std::uint64_t h = 0;
    auto absorb = [&](std::uint64_t value) {
        // Each block's NH value enters as two 32-bit halves, each below the prime.
        h = mod_prime(static_cast<unsigned __int128>(h) * key.point + (value >> 32));
        h = mod_prime(static_cast<unsigned __int128>(h) * key.point + (value & 0xffffffffu));
    };
    alignas(64) std::uint32_t words[DigestKey::block_words];
    std::size_t at = 0;
    for (; at + block_bytes <= bytes; at += block_bytes) {
        std::memcpy(words, p + at, block_bytes);  // no alignment or aliasing assumed of the data
        absorb(nh_block(words, key.nh.data()));
    }
    if (at < bytes) {  // the last, partial block, zero-padded (the length below tells it apart)
        std::memset(words, 0, block_bytes);
        std::memcpy(words, p + at, bytes - at);
        absorb(nh_block(words, key.nh.data()));
    }
    absorb(static_cast<std::uint64_t>(bytes));
    return h;
}

}  // namespace hb
