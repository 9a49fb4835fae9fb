// Whether a worker went quiet when it said a call was done (ASYNC_WORK otherwise): its CPU
// time, read by the harness from the kernel's accounting (clock_getcpuclockid), must not
// grow after the call beyond what the worker's own loop costs, and a sample of output bytes
// at positions the harness draws in its own memory, per call, must not change. Work left on
// another thread, a signal handler or a timer after the call "returned" shows in both.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/keyed_digest.hpp"
#include "targets/target.hpp"

namespace hb::cpu {

// The worker's total CPU time (all threads, user and system), in ns; -1 when unreadable.
double process_cpu_ns(pid_t pid);

// How many of the worker's threads are runnable now (state R in /proc/PID/task/TID/stat).
// An idle worker's threads all sleep; a thread left spinning is always runnable, even where
// the kernel has not yet accounted its CPU time (a tickless core updates a running thread's
// time only when it is switched out).
int runnable_threads(pid_t pid);
// True when some thread of the worker stays runnable for `patience_ns` (checked every
// `poll_ns`): on a loaded machine an honest thread can wait a while for a core before it goes
// to sleep; a thread left spinning is runnable at every look.
bool stays_runnable(pid_t pid, double patience_ns, double poll_ns = 0.5e6);
inline constexpr double kRunnablePatienceNs = 20e6;
// How often the harness looks, right after a call, whether the worker has gone back to sleep.
inline constexpr double kQuietPollNs = 20e3;

// CPU a worker may use after a call and between calls without having left work running:
// the doorbell loop, the done write, thread pools going to sleep, kernel accounting.
double idle_cpu_allowance_ns(double window_ns);

// Unsettled calls (more CPU than the allowance after a call or between calls, outputs
// unchanged) are tolerated while rare: a thread pool's thread descheduled at the end of a
// parallel region on a loaded machine finishes its bookkeeping late. Their times are never
// used, so a kernel that defers work on some calls gains nothing from those; one that does it
// often enough to matter is async_work: at least `kUnsettledFloor` unsettled calls making up
// more than half of the calls of the session's current case (below half, the median of the
// timed calls it kept is an honest call's time). The running kernel accounts CPU time lazily,
// so a thread's work can land in the next interval read: an honest pool's bookkeeping, or a
// spinning thread's whole run showing up inside a later call (more CPU in the call than its
// window times the cores is work done outside it).
inline constexpr int kUnsettledFloor = 3;
bool too_many_unsettled(int unsettled, int calls);

// How long to watch after a call: a tenth of the call, within [50 us, 2 ms]; thorough (the
// correctness calls, two per case): twice the call, within [2 ms, 20 ms].
double settle_ns(double window_ns, bool thorough);

class OutputSample {
  public:
    // Draws fresh positions in every output tensor (up to 64 per tensor, first and last
    // bytes included) and reads them; or, every_byte, takes a keyed digest of each output
    // whole, with a key drawn here (core/keyed_digest.hpp: a copy of the outputs cost fresh
    // memory the size of every output, twice a case).
    OutputSample(const std::vector<ArgView>& outputs, std::mt19937_64& rng, bool every_byte);
    // True when the bytes at the same positions still hold what they held at construction.
    bool unchanged() const;

  private:
    struct Probe {
        const unsigned char* address;
        unsigned char value;
    };
    struct Digest {
        const unsigned char* address;
        std::size_t bytes;
        std::uint64_t value;
    };
    std::vector<Probe> probes_;
    DigestKey key_;
    std::vector<Digest> digests_;
};

}  // namespace hb::cpu
