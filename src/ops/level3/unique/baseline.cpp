// Baseline for unique: plain threaded C++ as PyTorch's CPU unique works (oneDNN has no sort or
// unique primitive): (key, position) pairs, keys ordering values as the operator does (-0 ==
// +0, every NaN one value after +inf), sorted by libstdc++'s parallel sort on the OpenMP
// threads; runs of equal keys collapse to their first occurrence (whose bits y keeps), give
// counts and the inverse; sorted=false re-ranks the runs by first position.
#include <omp.h>

#include <parallel/algorithm>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "ops/baseline_support.hpp"

using std::int64_t;
using std::uint64_t;
using std::uint16_t;
using std::int8_t;
using std::uint8_t;
using std::int32_t;
using std::size_t;

namespace {

// An unsigned key whose order is the order of values: floats by value with -0 == +0 and
// every NaN largest; signed integers with the sign bit flipped.
uint64_t float_key(double v) {
    if (v != v) return ~uint64_t{0};
    if (v == 0) v = 0.0;
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
}

uint64_t key_of(const void* x, int64_t i, hb_dtype t) {
    switch (t) {
        case HB_FLOAT32: return float_key(static_cast<const float*>(x)[i]);
        case HB_FLOAT16: return float_key(hb_f16_to_f32(static_cast<const uint16_t*>(x)[i]));
        case HB_BFLOAT16: return float_key(hb_bf16_to_f32(static_cast<const uint16_t*>(x)[i]));
        case HB_INT8: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<const int8_t*>(x)[i])) ^ (uint64_t{1} << 63);
        case HB_UINT8: return static_cast<const uint8_t*>(x)[i];
        case HB_INT32: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<const int32_t*>(x)[i])) ^ (uint64_t{1} << 63);
        case HB_INT64: return static_cast<uint64_t>(static_cast<const int64_t*>(x)[i]) ^ (uint64_t{1} << 63);
        default: return 0;
    }
}

size_t element_bytes(hb_dtype t) {
    switch (t) {
        case HB_INT8: case HB_UINT8: return 1;
        case HB_FLOAT16: case HB_BFLOAT16: return 2;
        case HB_FLOAT32: case HB_INT32: return 4;
        case HB_INT64: return 8;
        default: return 0;
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    hb_arg* y_arg = hb_output(call, "y");
    hb_arg* inverse_arg = hb_output(call, "inverse");
    hb_arg* counts_arg = hb_output(call, "counts");
    if (!x_arg || !y_arg || !y_arg->written_length) return hb_fail(call, 1, "unique: expected input `x` and output `y` (with a written length)");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    const size_t bytes = element_bytes(x.dtype);
    const int64_t n = hb_numel(&x);
    if (bytes == 0 || y.dtype != x.dtype) return hb_fail(call, 2, "unique: unsupported dtype, or y's differs from x's");
    if (!hb_is_contiguous(&x)) return hb_fail(call, 3, "unique: only contiguous tensors are supported");
    if (y.shape[0] < n) return hb_fail(call, 2, "unique: y's capacity is below numel(x)");
    const bool sorted = hb_attr_int(call, "sorted", 1) != 0;
    const bool want_inverse = inverse_arg && inverse_arg->present;
    const bool want_counts = counts_arg && counts_arg->present;
    if (want_counts && !counts_arg->written_length) return hb_fail(call, 1, "unique: counts has no written length");

    std::vector<std::pair<uint64_t, int64_t>> keyed(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) keyed[i] = {key_of(x.data, i, x.dtype), i};
    __gnu_parallel::sort(keyed.begin(), keyed.end());  // by value, then position: runs start at first occurrences

    // Runs of equal keys: their first position and length, in value order.
    std::vector<int64_t> first, count, run_of(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
        if (k == 0 || keyed[k].first != keyed[k - 1].first) {
            first.push_back(keyed[k].second);
            count.push_back(0);
        }
        ++count.back();
        run_of[keyed[k].second] = static_cast<int64_t>(first.size()) - 1;
    }
    const int64_t distinct = static_cast<int64_t>(first.size());
    // Position in y of each run: its value rank, or its rank by first occurrence.
    std::vector<int64_t> slot(static_cast<size_t>(distinct));
    std::iota(slot.begin(), slot.end(), 0);
    if (!sorted) {
        // Walking x in order meets each run first at its first occurrence.
        int64_t next = 0;
        for (int64_t i = 0; i < n; ++i)
            if (first[run_of[i]] == i) slot[run_of[i]] = next++;
    }

    const auto* src = static_cast<const char*>(x.data);
    auto* dst = static_cast<char*>(y.data);
    for (int64_t r = 0; r < distinct; ++r) std::memcpy(dst + slot[r] * bytes, src + first[r] * bytes, bytes);
    *y_arg->written_length = distinct;
    if (want_counts) {
        auto* c = static_cast<int64_t*>(counts_arg->tensors[0].data);
        for (int64_t r = 0; r < distinct; ++r) c[slot[r]] = count[r];
        *counts_arg->written_length = distinct;
    }
    if (want_inverse) {
        auto* inv = static_cast<int64_t*>(inverse_arg->tensors[0].data);
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; ++i) inv[i] = slot[run_of[i]];
    }
    return 0;
}
