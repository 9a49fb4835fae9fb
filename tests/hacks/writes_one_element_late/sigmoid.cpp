// Adversarial submission "writes_one_element_late": every call computes all of the output but
// one element from its middle, returns, and a helper thread writes that element 300 us later.
// The helper sleeps until then, so the worker's CPU time grows by a few microseconds, within
// the idle allowance, and a timed call's sample of 64 bytes an output almost never lands on
// the element. What catches it is the correctness calls' check of every output byte (a keyed
// digest taken when the call says it is done and again after the settle, at least 2 ms): the
// element changes from the harness's poison to its value. ASYNC_WORK.
// See docs/security.md; tests/integration/test_hacks.cpp asserts the status it earns.
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "hapbench/kernel.h"

namespace {

std::mutex mutex;
std::condition_variable wake;
bool pending = false;
const float* job_x = nullptr;
float* job_y = nullptr;
int64_t job_at = 0;

void helper() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
        wake.wait(lock, [] { return pending; });
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        lock.lock();
        job_y[job_at] = 1.0f / (1.0f + std::exp(-job_x[job_at]));
        pending = false;
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    static std::thread worker_thread(helper);
    const hb_tensor& xt = hb_input(call, "x")->tensors[0];
    const hb_tensor& yt = hb_output(call, "y")->tensors[0];
    if (xt.dtype != HB_FLOAT32) return 1;  // the test runs a float32 case
    const auto* x = static_cast<const float*>(xt.data);
    auto* y = static_cast<float*>(yt.data);
    const int64_t n = hb_numel(&xt), late = n / 2 + 1;
    for (int64_t i = 0; i < n; ++i)
        if (i != late) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
    {
        std::lock_guard<std::mutex> lock(mutex);
        job_x = x;
        job_y = y;
        job_at = late;
        pending = true;
    }
    wake.notify_one();
    return 0;
}
