// CPU affinity as lists of CPU numbers: what a thread may run on, and binding one, this
// process's or another's (the harness binds the worker's threads, calibration its own).
#pragma once

#include <sys/types.h>

#include <vector>

namespace hb {

// The CPUs thread `tid` may run on (0: the calling thread), ascending; empty when unreadable.
std::vector<int> cpus_of(pid_t tid);

// The CPUs this process may run on, as cpus_of(0), or {0} when they cannot be read.
std::vector<int> allowed_cpus();

// Lets thread `tid` (0: the calling thread) run on `cpus` only. False when the kernel refused
// (no such thread any more, no permission, no allowed CPU in the list).
bool bind_to_cpus(pid_t tid, const std::vector<int>& cpus);

}  // namespace hb
