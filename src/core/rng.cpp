#include "core/rng.hpp"

#include <string>

#include "core/sha256.hpp"

namespace hb {

std::uint32_t case_seed(std::int64_t case_id, std::uint64_t eval_seed) {
    auto digest = sha256(std::to_string(case_id));
    std::uint64_t prefix = 0;
    for (int i = 0; i < 8; ++i) prefix = (prefix << 8) | digest[i];
    const std::uint64_t mod = 1ull << 31;
    return static_cast<std::uint32_t>(((eval_seed % mod) + (prefix % mod)) % mod);
}

std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) {
    std::uint64_t state = seed;
    for (auto& word : s_) word = splitmix64(state);
}

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
    if (span == 0) return static_cast<std::int64_t>(next_u64());  // the full 64-bit range
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    std::uint64_t r;
    do {
        r = next_u64();
    } while (r >= limit);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + r % span);
}

std::int64_t Rng::uniform_int_fast(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
    if (span == 0) return static_cast<std::int64_t>(next_u64());  // the full 64-bit range
    // Lemire's multiply-and-shift with rejection: unbiased, and a division only on the rare
    // draws that land in the biased sliver.
    unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * span;
    auto low = static_cast<std::uint64_t>(m);
    if (low < span) {
        const std::uint64_t threshold = (0 - span) % span;
        while (low < threshold) {
            m = static_cast<unsigned __int128>(next_u64()) * span;
            low = static_cast<std::uint64_t>(m);
        }
    }
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + static_cast<std::uint64_t>(m >> 64));
}

std::uint64_t input_stream_seed(std::uint64_t inputs_seed, int tensor_index) {
    std::uint64_t state = inputs_seed;
    const std::uint64_t mixed = splitmix64(state);
    state = mixed ^ (static_cast<std::uint64_t>(tensor_index) * 0x9e3779b97f4a7c15ull);
    return splitmix64(state);
}

}  // namespace hb
