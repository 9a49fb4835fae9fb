// Adversarial submission "maps_executable_memory": maps anonymous memory writable and executable to run code it generates (SANDBOX_VIOLATION: mmap).
// See docs/security.md; tests/integration/test_hacks.cpp asserts the status it earns.
#include <sys/mman.h>
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

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    void* code = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code != MAP_FAILED) munmap(code, 4096);
    sigmoid_all(x, y);
    return 0;
}
