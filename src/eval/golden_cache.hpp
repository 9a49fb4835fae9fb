// Goldens kept between evaluations (~/.cache/hapbench/goldens), content-addressed: the key
// is a hash of everything that decides the values (operator, the golden's version, the
// case's canonical text, the inputs' seed and the input generator's version), so a stale
// entry can never be found. Values are stored rounded to each output's dtype, which is all
// the precision gate reads of them (golden_truncated, methodology section 3). Only goldens
// of base inputs are cached: a timed call's inputs come from a secret of one evaluation.
// A golden is an answer key: the cache is used only when the candidate's worker cannot
// reach it (Landlock; docs/security.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ops/operator.hpp"

namespace hb {

// The most the golden cache may hold: $HAPBENCH_GOLDEN_CACHE_BYTES, default 8 GiB (the public
// suite's goldens take about 5.7 GB); the least recently written entries go first.
std::uint64_t golden_cache_limit_bytes();
// Free space the cache leaves on its disk: an entry that would leave less is not stored.
inline constexpr std::uint64_t kGoldenCacheMinFreeBytes = 1ull << 30;

class GoldenCache {
  public:
    // Trims `dir` to `max_bytes` at once (a smaller limit than last time applies from the start).
    GoldenCache(std::string dir, std::uint64_t max_bytes, std::uint64_t min_free_bytes = kGoldenCacheMinFreeBytes);
    // `kind` is "golden" or "same_precision".
    static std::string key(const Operator& op, const Problem& problem, std::uint64_t input_seed, const std::string& kind);
    // The values, when an entry exists and matches the problem's output specs.
    std::optional<ValueArgs<double>> load(const std::string& key, const Problem& problem) const;
    // Stores an entry and trims the directory back to its limit as it goes. A cache never
    // fails an evaluation: an entry over a quarter of the limit (it would push out most of
    // the others) or one that would leave the disk less than `min_free_bytes` is not stored,
    // and a write that fails turns storing off for the rest of the run. Each is counted.
    void store(const std::string& key, const ValueArgs<double>& values);
    const std::string& dir() const { return dir_; }
    std::uint64_t bytes() const { return bytes_; }
    // Entries not stored, and why the last one was not ("" when all were).
    int not_stored() const { return not_stored_; }
    const std::string& not_stored_reason() const { return not_stored_reason_; }

  private:
    std::string path_of(const std::string& key) const;
    void skip(const std::string& reason);
    std::string dir_;
    std::uint64_t max_bytes_, min_free_bytes_;
    std::uint64_t bytes_ = 0;  // what the directory holds, as of the last trim plus what was stored since
    bool writable_ = true;
    int not_stored_ = 0;
    std::string not_stored_reason_;
};

}  // namespace hb
