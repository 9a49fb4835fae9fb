// The environment the harness runs in, set before main by restarting itself: two libraries read
// their settings when they are loaded, so the program starts again with them.
//
// 1. Nothing of the harness runs while a kernel is timed: its OpenMP helper threads (input
//    fills, conversions, cache eviction, the gate) sleep as soon as a parallel region ends
//    (OMP_WAIT_POLICY=PASSIVE, read by libgomp).
//    By default libgomp's helpers spin for a while after a region before they sleep, and a
//    spinning helper took a CPU from the kernel. At normal priority it held the CPU the worker
//    needed to wake up for its next call (about 1.4 ms a call). Lowered to idle priority
//    (SCHED_IDLE, the previous answer), `perf sched` still showed the scheduler pick it over the
//    kernel's runnable main thread at a tick, for 2 ms of a 5.5 ms call, in 13 to 20 of 60 calls
//    of a case. Ending the helpers before each call instead (omp_pause_resource_all) cost their
//    re-creation and a fresh placement in every fill: 1.4-2.4 s of preparation in one operator
//    against 0.3 s with sleeping helpers.
// 2. The harness's heap asks for 2 MiB pages (GLIBC_TUNABLES glibc.malloc.hugetlb=1, read by
//    glibc; core/huge_pages.hpp says why). It changes no measurement: the kernel's memory is the
//    shared case buffers, not this heap.
#pragma once

namespace hb {

// Whether this process's OpenMP helpers sleep at once (OMP_WAIT_POLICY=PASSIVE, read by
// libgomp when it is loaded).
bool harness_threads_passive();

// Called first in main(): when the wait policy is not passive, or GLIBC_TUNABLES does not name
// glibc.malloc.hugetlb, sets them and starts the program again (execv of its own binary with
// the same arguments), once: the restarted program has HAPBENCH_RESTARTED=1 and does not
// restart again. Returns only when nothing needed setting, after a restart, or when the
// restart failed (then the environment is as it was and the run goes on;
// harness_threads_passive() says so).
void restart_with_harness_environment(char** argv);

}  // namespace hb
