// One CPU for each of the worker's threads, set by the harness from outside the sandbox.
//
// Unbound, a kernel's OpenMP helper sometimes woke on the CPU of the thread that woke it,
// while the other CPU stood idle, and stayed there for the whole call: the call took twice
// its time. Linux stops looking for an idle CPU at wake-up when the cache domain looks busy
// (the harness keeps it busy between calls), and an idle CPU pulls work only at its next
// balance. Measured with `perf sched` on tuned sigmoid (2 vCPUs): every wake-up of the
// helper went to CPU 0 beside the kernel's main thread; 13 to 58 of 60 calls of a case were
// twice as long, a share that changed from run to run and moved the median with it.
//
// The rule, the one OMP_PROC_BIND=spread would give an OpenMP pool: the worker's main thread
// on the first CPU of the allotment, its other threads one CPU each in thread-id order,
// round robin when there are more threads than CPUs. A worker with one thread keeps the
// whole allotment, so that threads a kernel starts inside a call can spread. The worker
// cannot change any of it (sched_setaffinity answers EPERM inside the sandbox).
#pragma once

#include <sys/types.h>

#include <vector>

namespace hb::cpu {

// The threads of process `pid`: the main thread (pid itself) first, then the others by id.
// Empty when the process is gone.
std::vector<pid_t> thread_ids(pid_t pid);

// The CPUs thread k of `threads` is bound to (see the rule above).
std::vector<int> cpus_for_thread(std::size_t k, std::size_t thread_count, const std::vector<int>& allotment);

class ThreadPlacement {
  public:
    explicit ThreadPlacement(std::vector<int> allotment) : allotment_(std::move(allotment)) {}
    // Binds the threads of `pid` by the rule when they are not the ones last bound. Threads
    // that exit meanwhile are skipped. Returns whether it bound anything.
    bool update(pid_t pid);
    void forget() { placed_.clear(); }
    int placements() const { return placements_; }

  private:
    std::vector<int> allotment_;
    std::vector<pid_t> placed_;
    int placements_ = 0;
};

}  // namespace hb::cpu
