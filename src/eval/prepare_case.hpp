// Stage 1 of a case: its base inputs and the references its outputs are judged against
// (the fp64 golden, and the same-precision reference when the gate's fallback asks for it),
// taken from the golden cache when it holds them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/golden_cache.hpp"
#include "eval/results.hpp"
#include "ops/operator.hpp"
#include "verify/output_verdict.hpp"

namespace hb {

class PreparedCase {
  public:
    // Generates the base inputs; the golden comes from `cache` when it has it (cache may be null).
    PreparedCase(const Operator& op, Problem problem, std::uint64_t eval_seed, GoldenCache* cache,
                 PhaseTimes& phases);

    const Problem& problem() const { return problem_; }
    const Operator& op() const { return op_; }
    // The base inputs and the golden; after drop_references, generated or read (from the
    // cache, else computed) again when asked for.
    const std::vector<Arg>& inputs() const;
    std::uint64_t input_seed() const { return input_seed_; }
    const ValueArgs<double>& golden() const;
    const std::string& golden_source() const { return golden_source_; }
    // fp64 values of the base inputs (index-gather checks read them); made on first use.
    const ValueArgs<double>& input_values() const;
    // The same-precision reference, computed (or read from the cache) on first use.
    const ValueArgs<double>& same_precision() const;

    // Lengths and the gate on `candidate` outputs of the base inputs (written lengths in the Args).
    OutputVerdictSummary judge(const std::vector<Arg>& candidate) const;

    // Frees the base inputs and every reference once the candidate's outputs of them are
    // judged and nothing is expected to read them again: the case's timed calls and their
    // verification then run in that much less memory (the harness's peak, each MB of which a
    // fresh process pays for with a first touch; 270 MB on a 22.7-million-element elementwise
    // case). Whatever is asked for later is made again.
    void drop_references() const;

  private:
    const Operator& op_;
    Problem problem_;
    std::uint64_t input_seed_;
    GoldenCache* cache_;
    std::string load_golden() const;  // from the cache ("cache"), else computed and stored ("computed")
    mutable std::vector<Arg> inputs_;  // empty once dropped
    mutable std::optional<ValueArgs<double>> golden_;
    std::string golden_source_;
    mutable std::optional<ValueArgs<double>> input_values_;
    mutable std::optional<ValueArgs<double>> same_precision_;
};

// Lengths and the gate on `candidate` against references computed from `inputs` (a verified
// timed call's own inputs), with the same-precision reference only when the fallback needs it.
OutputVerdictSummary judge_against_inputs(const Operator& op, const Problem& problem, const std::vector<Arg>& inputs,
                                const std::vector<Arg>& candidate);

}  // namespace hb
