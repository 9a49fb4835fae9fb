// The documented PRNG (xoshiro256** seeded through splitmix64) and the case seed rule of
// methodology section 2.
#pragma once

#include <cstdint>

namespace hb {

// case seed = (eval_seed + (first 8 bytes of SHA-256 of the decimal case id, big endian)
// mod 2^31) mod 2^31.
std::uint32_t case_seed(std::int64_t case_id, std::uint64_t eval_seed = 0);

std::uint64_t splitmix64(std::uint64_t& state);

// xoshiro256** 1.0 (Blackman and Vigna), state filled from splitmix64(seed).
class Rng {
  public:
    explicit Rng(std::uint64_t seed);
    // Defined here so that the bulk input loops inline them (a call into libhb_core per
    // element was a quarter of a timed call's input preparation).
    std::uint64_t next_u64() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    // Uniform in [0, 1) with 53 random bits.
    double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
    // Uniform in [lo, hi] as lo + (hi - lo) * u, u in [0,1).
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
    // Uniform integer in [lo, hi] inclusive, unbiased by rejection, r mod span: the draw the
    // case generator and the input hooks have always made (the shipped cases files are its
    // output for seed 2026, so it never changes).
    std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
    // The same distribution by Lemire's multiply-and-shift (no division on almost every draw),
    // another sequence: for the bulk integer inputs of suite/inputs.cpp (generator 2).
    std::int64_t uniform_int_fast(std::int64_t lo, std::int64_t hi);

  private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4];
};

// Stream seed for one input tensor: mixes the inputs' seed (a case seed, or a timed call's
// secret seed) and the tensor's position among the inputs (list members counted in order).
std::uint64_t input_stream_seed(std::uint64_t inputs_seed, int tensor_index);

}  // namespace hb
