// Stage 6 of a case: its anchors and score (methodology section 5): T_HW from the hardware
// model and the operator's work model, the capped baseline, the IMPOSSIBLE_TIME audit, and
// score_i with the speedup over the baseline.
#pragma once

#include "eval/results.hpp"
#include "hap/hardware_model.hpp"
#include "ops/operator.hpp"

namespace hb {

// T_HW, bottleneck and per-unit times of the case.
void bound_case(CaseResult& c, const Operator& op, const Problem& problem, const HardwareModel& model);

// The capped T_base, and for a passing, timed case the impossible-time check and score_i.
// On a calibrated model a time below T_HW by less than `calibrated_margin` is allowed
// (measured peaks can be beaten slightly).
void score_case(CaseResult& c, const HardwareModel& model, double calibrated_margin);

// The operator's composite score and geometric-mean speedup from its cases.
void score_operator(OperatorResult& o);

}  // namespace hb
