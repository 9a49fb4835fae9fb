// A correct sigmoid that uses much of what a legitimate kernel may use: std::thread and
// OpenMP, thread_local, heap and aligned allocation, exceptions, iostream, <algorithm>,
// sysconf, getenv, clock_gettime, a static constructor. The sandbox and the object check
// must let all of it through (tests/integration/test_hacks.cpp: no false positives).
#include <omp.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

thread_local int calls_on_this_thread = 0;
std::vector<int> table;

__attribute__((constructor)) void build_table() { table.assign(16, 1); }

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

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    const int64_t n = hb_numel(&x);
    ++calls_on_this_thread;
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const long page = sysconf(_SC_PAGESIZE);
    const char* home = std::getenv("HOME");
    (void)home;
    try {
        if (page <= 0) throw std::runtime_error("no page size");
    } catch (const std::exception& e) {
        std::cerr << e.what() << '\n';
        return 1;
    }
    // Scratch from the heap, aligned, and half of the work on a std::thread.
    std::unique_ptr<float, decltype(&std::free)> scratch(static_cast<float*>(std::aligned_alloc(64, ((n * 4 + 63) / 64) * 64)), &std::free);
    auto part = [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) scratch.get()[i] = 1.0f / (1.0f + std::exp(-load(x, i)));
    };
    std::thread helper(part, 0, n / 2);
    part(n / 2, n);
    helper.join();
#pragma omp parallel for schedule(static) if (n >= 32768)
    for (int64_t i = 0; i < n; ++i) store(y, i, scratch.get()[i] * static_cast<float>(table[0]));
    std::vector<int> v = {3, 1, 2};
    std::sort(v.begin(), v.end());
    if (calls_on_this_thread == 1) std::cout << "sandbox_legit: first call, " << v.front() << '\n';
    return 0;
}
