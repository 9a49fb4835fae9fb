#include "targets/cpu/worker/output_fingerprint.hpp"

#include <algorithm>
#include <cstring>

namespace hb::worker {

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

}  // namespace

std::uint64_t fingerprint_all(const std::vector<Arg>& outputs) {
    std::uint64_t h = 0;
    for (const auto& a : outputs)
        for (const auto& t : a.tensors) {
            const auto* p = static_cast<const unsigned char*>(t.data());
            const std::size_t n = t.bytes();
            std::size_t i = 0;
            for (; i + 8 <= n; i += 8) {
                std::uint64_t v;
                std::memcpy(&v, p + i, 8);
                h = mix(h, v);
            }
            for (; i < n; ++i) h = mix(h, p[i]);
        }
    return h;
}

SparseFingerprint::SparseFingerprint(const std::vector<Arg>& outputs, std::uint64_t seed, int samples_per_tensor) {
    std::uint64_t state = seed | 1;
    auto next = [&]() {  // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return state * 0x2545f4914f6cdd1dull;
    };
    for (const auto& a : outputs)
        for (const auto& t : a.tensors) {
            const std::size_t n = t.bytes();
            if (n == 0) continue;
            Probe probe{static_cast<const unsigned char*>(t.data()), {}};
            probe.offsets.push_back(0);
            probe.offsets.push_back(n - 1);
            for (int s = 0; s < samples_per_tensor; ++s) probe.offsets.push_back(next() % n);
            std::sort(probe.offsets.begin(), probe.offsets.end());
            probes_.push_back(std::move(probe));
        }
}

std::uint64_t SparseFingerprint::take() const {
    std::uint64_t h = 0;
    for (const auto& p : probes_)
        for (std::size_t off : p.offsets) h = mix(h, p.base[off]);
    return h;
}

}  // namespace hb::worker
