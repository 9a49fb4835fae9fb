// How a case is timed (methodology section 4), as one typed value: warmup, the stopping
// rule's bounds, how many timed calls are verified, and the memory for fresh-input slots.
// measure/cold_measure.hpp carries it out; eval fills it from the command line.
#pragma once

#include <cstdint>
#include <string>

#include "measure/stopping_rule.hpp"

namespace hb {

struct TimingPlan {
    // Cold calls on fresh inputs before the timed calls (after the two correctness calls,
    // which warm the same code and thread pool); at least one on every slot a timed call
    // reads, so that no timed call is a slot's first.
    int warmup = 1;
    StoppingBounds stopping;
    // Timed calls whose outputs are kept and checked against the golden of their own inputs,
    // chosen at random among all timed calls after each returns.
    int verified_calls = 3;
    // Memory for input slots a case may use (each timed call reads a slot the harness has
    // just filled with fresh values); at least two slots whatever this says.
    std::uint64_t slot_pool_bytes = 512ull << 20;
    // 3: the base slot and two timed ones, so consecutive timed calls read different
    // addresses. More slots bought nothing (every timed call's values are fresh anyway) and
    // cost memory and timing noise: on a 2-vCPU AMD EPYC PVM guest, whose hypervisor shadows
    // page tables, a case cycling through 16 slots of tens of MB drew calls 1.5 to 3 times
    // slower than one alternating between two, for the whole case (tuned masked_scale
    // case 2: 4.4 to 5.0 ms and a wide spread, against 3.5 ms and a narrow one).
    int max_slots = 3;
    // Calls that do nothing, timed to measure (and subtract) the doorbell's own round trip.
    int null_calls = 32;

    // Input slots for a case whose inputs take `input_bytes`: slot 0 holds the base inputs.
    int slots_for(std::uint64_t input_bytes) const;
    std::string describe() const;
};

}  // namespace hb
