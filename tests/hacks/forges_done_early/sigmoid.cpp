// Adversarial submission "forges_done_early": maps the harness's control page (descriptor 5), writes the call's done marker and rings the done pipe (descriptor 9) at once, then computes: the clock would stop before the work (ASYNC_WORK: the worker keeps running after it said it was done).
// See docs/security.md; tests/integration/test_hacks.cpp asserts the status it earns.
#include <sys/mman.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <thread>
#include <omp.h>

#include <cmath>
#include <cstdint>

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

void sigmoid_all(const hb_tensor& x, const hb_tensor& y) {
    const int64_t n = hb_numel(&x);
#pragma omp parallel for schedule(static) if (n >= 32768)
    for (int64_t i = 0; i < n; ++i) store(y, i, 1.0f / (1.0f + std::exp(-load(x, i))));
}

// The first words of the control page: armed, request, done, sequence (control_page.hpp).
struct Doorbell {
    std::atomic<uint32_t> armed, request, done;
    uint32_t sequence;
};

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    static Doorbell* page = static_cast<Doorbell*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 5, 0));
    if (page != MAP_FAILED) {
        page->done.store(page->sequence);
        const char byte = 1;
        if (write(9, &byte, 1) != 1) return hb_fail(call, 1, "cannot ring the done pipe");
    }
    // The work the early "done" was meant to hide.
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    sigmoid_all(x, y);
    return 0;
}
