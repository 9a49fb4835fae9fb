// Cold timing of one loaded case (methodology section 4), the one place where timed calls
// are made: the doorbell's own round trip measured by null calls, warmup calls (on fresh
// inputs, at least one on every slot a timed call reads but slot 0, where the caller made its
// correctness calls), then timed calls until the stopping rule is satisfied. Before every call the
// harness, through its own mapping of the worker's buffers, writes the call's inputs (fresh
// ones for timed calls, fresh_inputs.hpp), poisons the outputs and the workspace, and evicts
// all of them from every cache level (cache_flush.hpp). A few timed calls, chosen at random
// after each returns (a reservoir sample, so the kernel cannot know which), have their
// outputs kept for the caller to verify against the golden of their own inputs.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "measure/fresh_inputs.hpp"
#include "measure/stopping_rule.hpp"
#include "measure/timing_plan.hpp"
#include "targets/target.hpp"

namespace hb {

struct KeptCall {
    int call = 0;             // 1-based timed call
    std::uint64_t seed = 0;   // its inputs' seed
    std::vector<Arg> outputs;
    std::vector<std::int64_t> written_lengths;
};

// One timed call's time from the two clocks (docs/security.md, "The clock"): the worker's
// own measure of the call, which is precise but in the kernel's hands, is used only inside
// the bounds the harness's window sets: at most the window, at least the window less the
// doorbell's round trip at its 95th percentile. So an honest call is timed to the
// nanosecond, and a forged worker clock moves a time by no more than the doorbell's jitter.
struct CallTime {
    double ns = 0;
    bool clamped = false;  // the worker's measure fell outside the bounds
};
CallTime call_time(double window_ns, double worker_ns, double overhead_high_ns);

struct ColdMeasurement {
    RunOutcome outcome = RunOutcome::ok;  // a call failed: which and why in message
    std::string message;
    std::vector<double> samples_ns;  // timed calls (call_time), in call order
    std::vector<double> windows_ns;  // the harness's raw windows
    double overhead_ns = 0;          // median window of the null calls
    double overhead_high_ns = 0;     // their 95th percentile
    int clamped_calls = 0;           // calls whose worker measure fell outside the window's bounds
    int unsettled_calls = 0;         // calls after which the worker was busy (CallResult): not in samples_ns
    std::vector<KeptCall> kept;
    StoppingState stop;
    int warmup_calls = 0;
    double prepare_s = 0;  // writing fresh inputs, poisoning, flushing (harness time, not timed)
};

// Fills every byte of every output and the workspace with `byte`, then evicts them and the
// inputs of `slot` from the caches.
void prepare_call_buffers(const CaseBuffers& buffers, int slot, unsigned char poison);

// Before a warmup or timed call: poisons (0xff) only what could carry state from one call to
// the next, the workspace and outputs of data-dependent length (whose capacity past the
// reported length the call need not write), then evicts everything as above. Every other
// output must be written whole by the call, so what it held cannot survive the call, and
// rewriting it (as many bytes as the inputs, often) would double the harness's time per call;
// unwritten outputs are the correctness calls' finding.
void prepare_timed_call_buffers(const CaseBuffers& buffers, int slot);

ColdMeasurement measure_cold(KernelSession& session, const Problem& problem, const Operator& op, const TimingPlan& plan,
                             const TimedInputSeeds& seeds, std::mt19937_64& choice_rng, Clock::time_point deadline);

}  // namespace hb
