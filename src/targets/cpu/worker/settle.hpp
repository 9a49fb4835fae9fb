// How long the worker waits after a call before fingerprinting its outputs again (ASYNC_WORK):
// as long as the call took, within [1, 10] ms; 50 ms when the call left more threads alive
// than it found, since a thread the kernel left behind may not be scheduled for a while on a
// busy machine. Honest kernels keep their thread pools from the first call on, so they do
// not pay the long pause.
#pragma once

namespace hb::worker {

// Threads of this process now (the "Threads:" line of /proc/self/status; 0 if unreadable).
int thread_count();

void settle_pause(double call_ns, bool threads_grew);

}  // namespace hb::worker
