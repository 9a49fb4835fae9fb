// Adversarial submission "content_cache": memoizes outputs keyed on a hash of the whole input: every timed call has unseen content, so the cache never hits and the kernel earns only what its real work earns (PASS; its log counts the misses).
// See docs/security.md; tests/integration/test_hacks.cpp asserts the status it earns.
#include <cstdio>
#include <cstring>
#include <unordered_map>
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
    static std::unordered_map<std::uint64_t, std::vector<unsigned char>> cache;
    const std::size_t in_bytes = static_cast<std::size_t>(hb_numel(&x)) * (x.dtype == HB_FLOAT32 ? 4 : 2);
    const std::size_t out_bytes = static_cast<std::size_t>(hb_numel(&y)) * (y.dtype == HB_FLOAT32 ? 4 : 2);
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < in_bytes; ++i) h = (h ^ static_cast<const unsigned char*>(x.data)[i]) * 1099511628211ull;
    if (auto it = cache.find(h); it != cache.end()) {
        std::memcpy(y.data, it->second.data(), out_bytes);
        std::fprintf(stderr, "content_cache: hit\n");
        return 0;
    }
    std::fprintf(stderr, "content_cache: miss\n");
    sigmoid_all(x, y);
    cache[h].assign(static_cast<unsigned char*>(y.data), static_cast<unsigned char*>(y.data) + out_bytes);
    return 0;
}
