// Fingerprints of a call's outputs, taken when the call returns and again a little later:
// if they differ, the kernel left work running after it returned (ASYNC_WORK). The full
// fingerprint reads every byte (correctness calls); the sparse one reads a few hundred
// positions drawn at random per case, so a kernel cannot know which (timed calls, where a
// full read per call would cost more than the call).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.hpp"

namespace hb::worker {

std::uint64_t fingerprint_all(const std::vector<Arg>& outputs);

class SparseFingerprint {
  public:
    SparseFingerprint(const std::vector<Arg>& outputs, std::uint64_t seed, int samples_per_tensor = 256);
    std::uint64_t take() const;

  private:
    struct Probe {
        const unsigned char* base;
        std::vector<std::size_t> offsets;  // sorted byte offsets, first and last bytes included
    };
    std::vector<Probe> probes_;
};

}  // namespace hb::worker
