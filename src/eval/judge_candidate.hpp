// Stage 2 of a case: the candidate's correctness calls on the base inputs, judged. Two
// calls, the outputs poisoned differently before each (verify/call_comparison.hpp): what
// neither wrote is OUTPUT_UNWRITTEN, what differs beyond the gate's tau is NONDETERMINISTIC;
// then the precision gate on the first call's outputs. A failed call (crash, sandbox
// violation, work left running, ...) gets its own status.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "eval/prepare_case.hpp"
#include "targets/target.hpp"

namespace hb {

struct Judgement {
    CaseStatus status = CaseStatus::pass;
    std::string message;
    std::optional<GateResult> gate;
    std::int64_t nondeterministic_elements = 0;  // differing elements within the tolerance
};

CaseStatus status_of(RunOutcome outcome);

// The case must be loaded in `session`; its slot 0 receives the base inputs.
Judgement judge_candidate(KernelSession& session, const PreparedCase& prepared, Clock::time_point deadline);

// Two-trial mode, trial 2 (methodology 3): inputs from seed + 1 with 0.01 added to every
// floating input, one call, judged against references of those inputs.
Judgement judge_second_trial(KernelSession& session, const PreparedCase& prepared, std::uint64_t eval_seed,
                             Clock::time_point deadline);

// Writes `inputs` into input slot `slot` of the loaded case.
void write_inputs(const CaseBuffers& buffers, int slot, const std::vector<Arg>& inputs);

}  // namespace hb
