// Stage 4 of a case: the timed calls whose outputs measure/cold_measure kept, each checked
// by the precision gate against the golden of its own inputs (regenerated from the call's
// secret seed). A kernel that returns wrong outputs on a fraction f of its timed calls
// escapes with probability at most (1 - f)^V per case for V verified calls (sampling without
// replacement only lowers it): with V = 3, a kernel wrong on half its calls, enough to move
// the median, is caught in 87.5% of the cases it does so, and on an operator of 20 cases
// with probability 1 - 0.125^20.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "measure/cold_measure.hpp"
#include "ops/operator.hpp"

namespace hb {

struct TimedCallVerdict {
    int verified = 0;
    bool passed = true;
    int failing_call = 0;
    std::string reason;
    // Calls that passed only by the fresh-input rule (verify/precision_gate.hpp
    // fresh_input_allowance), one line each for the case's audit.
    std::vector<std::string> allowances;
};

// Each call is judged as the case's own inputs are, except that the fallback's region counts
// take the fresh-input rule (fresh_input_allowance). Goldens of the kept calls are computed concurrently, on up to `threads` threads.
TimedCallVerdict verify_timed_calls(const Operator& op, const Problem& problem, const std::vector<KeptCall>& kept,
                                    int threads);

}  // namespace hb
