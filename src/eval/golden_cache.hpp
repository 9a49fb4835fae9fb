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

// The most the golden cache may hold: $HAPBENCH_GOLDEN_CACHE_BYTES, default 8 GiB; the
// least recently written entries go first.
std::uint64_t golden_cache_limit_bytes();

class GoldenCache {
  public:
    explicit GoldenCache(std::string dir);
    // `kind` is "golden" or "same_precision".
    static std::string key(const Operator& op, const Problem& problem, std::uint64_t input_seed, const std::string& kind);
    // The values, when an entry exists and matches the problem's output specs.
    std::optional<ValueArgs<double>> load(const std::string& key, const Problem& problem) const;
    void store(const std::string& key, const ValueArgs<double>& values) const;
    const std::string& dir() const { return dir_; }

  private:
    std::string path_of(const std::string& key) const;
    std::string dir_;
};

}  // namespace hb
