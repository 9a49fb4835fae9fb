// Adversarial submission "constant_input_shortcut": looks at a few input elements, and when they are all equal assumes the input is constant (the case's range is [c, c]) and fills the output with sigmoid(c) without reading the rest; timed calls of constant cases carry secret marked elements (CACHED_OR_STALE_OUTPUT).
// See docs/security.md; tests/integration/test_hacks.cpp asserts the status it earns.
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

float first_value(const hb_tensor& x) { return load(x, 0); }

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    const int64_t n = hb_numel(&x);
    const float c = first_value(x);
    bool constant = true;
    for (int64_t probe = 1; probe < 16; ++probe)
        if (load(x, probe * (n - 1) / 15) != c) constant = false;
    if (!constant) {
        sigmoid_all(x, y);
        return 0;
    }
    const float value = 1.0f / (1.0f + std::exp(-c));
#pragma omp parallel for schedule(static) if (n >= 32768)
    for (int64_t i = 0; i < n; ++i) store(y, i, value);
    return 0;
}
