// Stage 4 of a case: the timed calls whose outputs measure/cold_measure kept, each checked
// by the precision gate against the golden of its own inputs (regenerated from the call's
// secret seed). A kernel that returns wrong outputs on a fraction f of its timed calls
// escapes with probability at most (1 - f)^V per case for V verified calls (sampling without
// replacement only lowers it): with V = 3, a kernel wrong on half its calls, enough to move
// the median, is caught in 87.5% of the cases it does so, and on an operator of 20 cases
// with probability 1 - 0.125^20.
#pragma once

#include <cstdint>
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

// How many kept calls are checked at once: up to `threads`, as many as fit in
// kVerificationMemoryBytes by verification_bytes. A check holds the call's regenerated inputs
// and the fp64 values of its inputs, golden and candidate outputs; on a large case that is
// hundreds of MB, whose first touch (page faults and zeroing) costs more than the checks gain
// by running side by side, and the steps of one check already run on every thread (input
// fill, fp64 conversion, comparison, most goldens). Measured on tuned sigmoid, whose case 5
// has 22.7 million elements (8 alternating runs each way, AMD EPYC guest): verification
// 2.5-4.0 s (mean 3.3) -> 2.3-2.7 s (mean 2.5), peak memory 2.8-3.1 -> 2.3 GB, 2 MiB page
// faults 1,080-1,250 -> 850-870; the whole run about 0.5 s faster (median of the pairs).
constexpr std::uint64_t kVerificationMemoryBytes = 512ull << 20;
// Estimated bytes one check holds: each input and output element in its dtype plus two fp64 copies.
std::uint64_t verification_bytes(const Problem& problem);
int verification_width(const Problem& problem, int threads);

// Each call is judged as the case's own inputs are, except that the fallback's region counts
// take the fresh-input rule (fresh_input_allowance). The kept calls are checked
// verification_width at a time.
TimedCallVerdict verify_timed_calls(const Operator& op, const Problem& problem, const std::vector<KeptCall>& kept,
                                    int threads);

}  // namespace hb
