// Adversarial submission "shift_cache": caches the first call's input and output and answers later calls with the cached output rotated by the shift that maps the cached input onto the new one (the old timed inputs were circular shifts); fresh inputs are no shift of anything (CACHED_OR_STALE_OUTPUT).
// See docs/security.md; tests/integration/test_hacks.cpp asserts the status it earns.
#include <cstring>
#include <vector>
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

std::vector<unsigned char> cached_x, cached_y;

int64_t element_bytes(const hb_tensor& t) { return t.dtype == HB_FLOAT32 ? 4 : 2; }

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    const int64_t n = hb_numel(&x), e = element_bytes(x);
    const auto* xb = static_cast<const unsigned char*>(x.data);
    auto* yb = static_cast<unsigned char*>(y.data);
    if (cached_x.empty()) {
        sigmoid_all(x, y);
        cached_x.assign(xb, xb + n * e);
        cached_y.assign(yb, yb + n * e);
        return 0;
    }
    // new[i] = cached[(i + s) mod n]: find s from the first element, and rotate the output.
    int64_t shift = 0;
    for (int64_t s = 0; s < n; ++s)
        if (std::memcmp(&cached_x[static_cast<size_t>(s * e)], xb, static_cast<size_t>(e)) == 0) {
            shift = s;
            break;
        }
    std::memcpy(yb, &cached_y[static_cast<size_t>(shift * e)], static_cast<size_t>((n - shift) * e));
    std::memcpy(yb + (n - shift) * e, &cached_y[0], static_cast<size_t>(shift * e));
    return 0;
}
