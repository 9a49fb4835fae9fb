// Figures every reporter derives the same way from a run: an operator's mean s_i and its
// failures in one line, times for people, the hardware line.
#pragma once

#include <string>

#include "eval/results.hpp"

namespace hb {

// Mean score_i over the operator's passing cases (0 when none passed).
double mean_passing_score(const OperatorResult& op);
// "2 PRECISION_FAIL, 1 CRASH", or why the operator has no cases.
std::string failures_summary(const OperatorResult& op);
// A --no-perf run times nothing: its s_i are absent, not zeros.
inline bool perf_measured(const RunResult& run) { return !run.no_perf; }
// "cpu-example (published)", or why there is none.
std::string hardware_line(const RunResult& run);
// A time in microseconds with 3 significant figures, "-" when not positive or not finite.
std::string format_us(double us);

}  // namespace hb
