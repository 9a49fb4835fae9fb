// Stage 6 of a case: its anchors and score (methodology section 5): T_HW from the hardware
// model and the operator's work model, the capped baseline, the IMPOSSIBLE_TIME audit, and
// score_i with the speedup over the baseline.
#pragma once

#include "eval/results.hpp"
#include "hap/convention.hpp"
#include "hap/hardware_model.hpp"
#include "ops/operator.hpp"

namespace hb {

// T_HW under `convention` (the score's anchor), bottleneck and per-unit times of the case,
// and hapbench's bound (t_hw_bound_us), which no kernel beats whatever the convention.
void bound_case(CaseResult& c, const Operator& op, const Problem& problem, const HardwareModel& model,
                Convention convention);

// The capped T_base, and for a passing, timed case the impossible-time check (against
// hapbench's bound) and score_i (against the convention's T_HW, so a time between the two
// scores above 1, as the reference scores it, with an audit note). On a calibrated model a
// time below the bound by less than `calibrated_margin` is allowed (measured peaks can be
// beaten slightly).
void score_case(CaseResult& c, const HardwareModel& model, double calibrated_margin, Convention convention);

// The operator's composite score and geometric-mean speedup from its cases.
void score_operator(OperatorResult& o);

}  // namespace hb
