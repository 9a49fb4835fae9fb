// The distinct-index rule of selections (proto index_gather `distinct: true`, top_k), applied
// to a case's gate result: an index output that gathers the right values but names an element
// of its slice twice fails, with the repeat in its verdict's reason. run_precision_gate
// applies it as its last step.
#pragma once

#include "ops/problem.hpp"
#include "ops/values.hpp"
#include "verify/precision_gate.hpp"

namespace hb {

// For every output whose proto index_gather sets `distinct`, checks the candidate's indices
// (verify/index_gather.hpp) and, on a repeat, fails that output's verdict and the result.
void apply_distinct_index_rule(const Problem& problem, const ValueArgs<double>& candidate_outputs, GateResult& result);

}  // namespace hb
