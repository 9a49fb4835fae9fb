// Adversarial submission "pointer_cache": caches its output keyed on the input pointer (every address it has seen, so that slots taken in turn hit too): a timed call whose inputs reuse an address with new content gets the stale output (CACHED_OR_STALE_OUTPUT).
// See docs/security.md; tests/integration/test_hacks.cpp asserts the status it earns.
#include <cstring>
#include <map>
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

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    static std::map<const void*, std::vector<unsigned char>> cached;  // input address -> output bytes
    const std::size_t bytes = static_cast<std::size_t>(hb_numel(&y)) * (y.dtype == HB_FLOAT32 ? 4 : 2);
    if (const auto hit = cached.find(x.data); hit != cached.end() && hit->second.size() == bytes) {
        std::memcpy(y.data, hit->second.data(), bytes);
        return 0;
    }
    sigmoid_all(x, y);
    cached[x.data].assign(static_cast<unsigned char*>(y.data), static_cast<unsigned char*>(y.data) + bytes);
    return 0;
}
