// Adversarial submission "finishes_while_runnable": on the timed calls it computes all but a
// slice of the output, wakes a helper thread and returns at once; the helper stays runnable,
// spins past the harness's wake-up (about 100 us) and then writes the slice, ending well
// within the settle interval. The harness reads the worker's CPU time only once no thread of
// it is runnable, so that wait does not charge the helper; the output sample drawn when the
// harness saw "done", before the wait, sees the slice change (ASYNC_WORK). When the harness
// wakes only after the helper (on the helper's CPU), the window holds the helper's work.
// The correctness calls (every output byte of which the harness checks) and the warmups are
// computed whole, so only the timed calls' sample, 64 bytes an output, can catch it.
// (Writes that end within the harness's own wake-up latency are the one doorbell round trip
// docs/security.md lists as not covered.)
// See docs/security.md; tests/integration/test_hacks.cpp asserts the status it earns.
#include <omp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>

#include <cmath>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load(const hb_tensor& t, int64_t i) {
    switch (t.dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        default: return static_cast<const float*>(t.data)[i];
    }
}

void store(const hb_tensor& t, int64_t i, float v) {
    switch (t.dtype) {
        case HB_FLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_f16(v); break;
        case HB_BFLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_bf16(v); break;
        default: static_cast<float*>(t.data)[i] = v;
    }
}

void sigmoid_range(const hb_tensor& x, const hb_tensor& y, int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) store(y, i, 1.0f / (1.0f + std::exp(-load(x, i))));
}

// The helper sleeps on a condition variable between calls: it is runnable only while it writes.
std::mutex mutex;
std::condition_variable wake;
bool pending = false;
hb_tensor job_x{}, job_y{};
int64_t job_begin = 0, job_end = 0;

void helper() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
        wake.wait(lock, [] { return pending; });
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
        while (std::chrono::steady_clock::now() < until) {
        }
        sigmoid_range(job_x, job_y, job_begin, job_end);
        pending = false;
    }
}

int calls = 0;

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    static std::thread worker_thread(helper);
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    const int64_t n = hb_numel(&x);
    // Calls 1-2 are the correctness calls, 3-4 the warmups (one per timed slot): done whole
    // and at once.
    if (++calls <= 4 || n < 64) {
        sigmoid_range(x, y, 0, n);
        return 0;
    }
    // A slice of 1/16 of the output from its middle (the first and last bytes are always
    // sampled) is left to the helper.
    const int64_t begin = n / 2, end = begin + n / 16;
    sigmoid_range(x, y, 0, begin);
    sigmoid_range(x, y, end, n);
    {
        std::lock_guard<std::mutex> lock(mutex);
        job_x = x;
        job_y = y;
        job_begin = begin;
        job_end = end;
        pending = true;
    }
    wake.notify_one();
    return 0;
}
