// The inputs of timed calls (methodology section 4, docs/security.md): every timed call reads
// values drawn afresh, by the case's own rules and the operator's input hooks, from a seed
// derived from a secret of this evaluation. The secret lives only in the harness's memory
// (never in a file, an argument or a worker), so no timed input repeats an earlier one, is
// a permutation of one, or can be predicted; the harness regenerates a call's inputs from
// its seed to verify the outputs it kept.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "ops/operator.hpp"

namespace hb {

class TimedInputSeeds {
  public:
    TimedInputSeeds();  // a secret from the operating system's entropy
    explicit TimedInputSeeds(std::uint64_t secret) : secret_(secret) {}
    // The seed of timed call `call` (1-based) of a case.
    std::uint64_t seed(const Problem& problem, int call) const;

  private:
    std::uint64_t secret_;
};

// Fills `inputs` (allocated or borrowed) with the inputs of the seed.
void fill_timed_inputs(const Problem& problem, const Operator& op, std::uint64_t seed, std::vector<Arg>& inputs);

}  // namespace hb
