// The page of shared memory through which hapbench starts each call in a worker and learns
// that it returned, and the descriptors the worker inherits (see docs/security.md).
//
// A call: the harness writes `kind` and `slot`, then sends one byte on the arm pipe; the
// worker wakes, stores the arm's sequence number in `armed` and spins on `request`; the
// harness reads its clock and stores the same number in `request`; the worker calls the
// kernel, stores rc, the written lengths and the message, stores the number in `done` and
// writes one byte on the done pipe; the harness, blocked on that pipe, reads its clock.
// The worker spins only between arm and request, so no wake-up latency falls into the
// timed window at its start; the one at its end is measured by null calls and subtracted.
//
// Everything here is written by code the kernel shares an address space with, so the
// harness trusts none of it: `done` only tells it when to look, and what it then reads
// (return code, lengths, message) is bounded and checked.
#pragma once

#include <atomic>
#include <cstdint>

namespace hb::cpu {

// Descriptors of a worker, fixed by the harness before exec.
constexpr int command_fd = 3;        // harness -> worker: JSON lines (case set-up, exit)
constexpr int event_fd = 4;          // worker -> harness: JSON lines (ready, workspace, faults)
constexpr int control_fd = 5;        // the control page (read-write)
constexpr int input_region_fd = 6;   // input slots (opened read-only: the worker cannot write them)
constexpr int output_region_fd = 7;  // outputs and workspace (read-write)
constexpr int arm_fd = 8;            // harness -> worker: one byte per call
constexpr int done_fd = 9;           // worker -> harness: one byte per call
constexpr int last_channel_fd = 9;

constexpr int max_outputs = 64;
constexpr int message_capacity = 1024;

enum class CallKind : std::uint32_t {
    kernel = 1,  // call hapbench_kernel on the inputs of `slot`
    null = 2,    // return at once: the doorbell's own round trip
    leave = 3,   // stop waiting for calls and read the command channel again
};

struct ControlPage {
    std::atomic<std::uint32_t> armed;
    std::atomic<std::uint32_t> request;
    std::atomic<std::uint32_t> done;
    std::uint32_t sequence;  // the number of the call being armed (harness-written)
    CallKind kind;
    std::uint32_t slot;
    std::int32_t rc;
    std::int32_t pad;
    std::int64_t written_length[max_outputs];  // per output argument, for variable-length outputs
    double worker_call_ns;                     // the worker's own measure of the call (diagnostic only)
    char message[message_capacity];
};
static_assert(sizeof(ControlPage) <= 4096, "the control page is one page");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "lock-free atomics across processes");

}  // namespace hb::cpu
