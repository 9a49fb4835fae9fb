// The whole judgement of one call's outputs against the references of its inputs, in the
// order every caller needs it (eval's correctness and verified timed calls, the baseline's
// check, `hapbench compare`): outputs of data-dependent length first (verify/written_length:
// LENGTH_OVER_CAPACITY, WRONG_LENGTH), then the precision gate on exactly the written prefix
// (PRECISION_FAIL), the distinct-index rule included.
#pragma once

#include <optional>
#include <string>

#include "core/status.hpp"
#include "ops/problem.hpp"
#include "ops/values.hpp"
#include "verify/precision_gate.hpp"

namespace hb {

struct OutputVerdictSummary {
    CaseStatus status = CaseStatus::pass;  // pass, length_over_capacity, wrong_length or precision_fail
    std::string reason;
    std::optional<GateResult> gate;  // absent when a length failed first
};

// `candidate` carries the reported written lengths (TensorValues::written_length) of
// variable-length outputs; the same-precision reference is asked for only when a failing
// output's fallback needs it.
OutputVerdictSummary judge_outputs(const Problem& problem, const ValueArgs<double>& candidate,
                                   const ValueArgs<double>& golden, const SamePrecisionReference& same_precision,
                                   const ValueArgs<double>& inputs);

}  // namespace hb
