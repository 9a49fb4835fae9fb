// How a case is timed (methodology section 4), as one typed value: warmup, the stopping
// rule's bounds, how many timed calls are verified, the input slots timed calls take in turn.
// measure/cold_measure.hpp carries it out; eval fills it from the command line.
#pragma once

#include <cstdint>
#include <string>

#include "measure/stopping_rule.hpp"

namespace hb {

struct TimingPlan {
    // Cold calls on fresh inputs before the timed calls (after the correctness calls, which
    // warm the same code and thread pool, on slot 0, the base inputs' slot); at least one on
    // every other slot, so that no timed call is a slot's first. Slot 0 takes none of them:
    // the correctness calls were its first calls. (It took one until 2026-12-03; on a warm
    // levels 1-2 run with the reference kernels, 480 such calls and their fresh inputs were
    // 18 s of 211, and dropping them moved no case's median: the first timed call, now
    // on slot 0, lies as close to its case's median as before, median ratio 1.002.)
    int warmup = 1;
    StoppingBounds stopping;
    // Timed calls whose outputs are kept and checked against the golden of their own inputs,
    // chosen at random among all timed calls after each returns.
    int verified_calls = 3;
    // Input slots of a case: the one the correctness calls read (the base inputs) and one
    // more; timed calls take them in turn, so consecutive timed calls read different
    // addresses. More slots bought nothing (every timed call's values are fresh anyway) and
    // cost memory and timing noise: on a 2-vCPU AMD EPYC PVM guest, whose hypervisor shadows
    // page tables, a case cycling through 16 slots of tens of MB drew calls 1.5 to 3 times
    // slower than one alternating between two, for the whole case (tuned masked_scale case 2:
    // 4.4 to 5.0 ms and a wide spread, against 3.5 ms and a narrow one). There, too, the first
    // touch of shared memory (4 KiB pages) costs about 2.6 ms a MB in each process that maps
    // it (a 256 MB memfd: 104 ms to populate, 572 ms to write the first time, 12 ms the
    // second), so a third slot of 90 MB cost the harness and the worker about 0.5 s together.
    static constexpr int input_slots = 2;
    // Calls that do nothing, timed to measure (and subtract) the doorbell's own round trip.
    int null_calls = 32;

    // Warmup calls a case with `slots` input slots makes: `warmup`, and at least one on each
    // slot but the base inputs'.
    int warmup_calls(int slots = input_slots) const;
    std::string describe() const;
};

}  // namespace hb
