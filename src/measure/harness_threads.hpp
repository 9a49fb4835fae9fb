// The harness's own OpenMP helper threads (input fills, conversions, comparisons) run at idle
// priority (SCHED_IDLE) so that they never stand between the kernel's threads and a CPU.
#pragma once

namespace hb {

// After a parallel region libgomp's helper threads spin for a while before they sleep. At
// normal priority that spin holds a CPU the worker needs to wake up for its next call (it
// waited about 1.4 ms a call for it, 1 s of a 10 s operator) and that the kernel's own
// threads need inside the call. At idle priority any other thread that wakes takes the CPU at
// once, while the spin still keeps an otherwise idle CPU awake (a virtual CPU that halts
// between calls wakes the kernel's threads late: measured as lower, noisier scores). Every
// helper of the calling thread's pool is lowered; the calling thread keeps its priority.
// Returns how many threads were lowered.
int lower_harness_helpers_to_idle();

}  // namespace hb
