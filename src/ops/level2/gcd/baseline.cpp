// Baseline for gcd: a threaded C++ loop over the broadcast output (OpenMP over row pieces),
// binary GCD on the magnitudes with count-trailing-zeros, the algorithm torch and
// libstdc++ use. oneDNN has no gcd, modulo or integer-division primitive.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "hapbench/kernel.h"
#include "ops/broadcast.hpp"

#pragma GCC visibility push(hidden)

namespace {

std::vector<std::int64_t> shape_of(const hb_tensor& t) { return {t.shape, t.shape + t.rank}; }

// gcd of the magnitudes; the result is non-negative. |INT_MIN| wraps in Int, but the
// unsigned magnitude is exact, so only gcd(INT_MIN, 0 or INT_MIN) overflows on the cast
// back (hapbench never generates INT_MIN).
template <typename Int>
Int binary_gcd(Int a, Int b) {
    using U = std::make_unsigned_t<std::conditional_t<sizeof(Int) < 4, std::int32_t, Int>>;
    U u = a < 0 ? U(0) - static_cast<U>(a) : static_cast<U>(a);
    U v = b < 0 ? U(0) - static_cast<U>(b) : static_cast<U>(b);
    if (u == 0) return static_cast<Int>(v);
    if (v == 0) return static_cast<Int>(u);
    const int shift = __builtin_ctzll(u | v);
    u >>= __builtin_ctzll(u);
    do {
        v >>= __builtin_ctzll(v);
        if (u > v) std::swap(u, v);
        v -= u;
    } while (v != 0);
    return static_cast<Int>(u << shift);
}

template <typename Int>
void gcd_loop(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& y) {
    const auto* a = static_cast<const Int*>(x1.data);
    const auto* b = static_cast<const Int*>(x2.data);
    auto* out = static_cast<Int*>(y.data);
    const hb::BroadcastPlan plan(shape_of(x1), shape_of(x2));
    const std::int64_t sa = plan.inner_stride_a(), sb = plan.inner_stride_b();
    hb::for_each_broadcast_piece(plan, [&](std::int64_t o, std::int64_t ia, std::int64_t ib, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) out[o + i] = binary_gcd<Int>(a[ia + i * sa], b[ib + i * sb]);
    });
}

}  // namespace

#pragma GCC visibility pop

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x1_arg = hb_input(call, "x1");
    const hb_arg* x2_arg = hb_input(call, "x2");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x1_arg || !x2_arg || !y_arg || x1_arg->count != 1 || x2_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "gcd: expected input tensors x1, x2 and output tensor y");
    const hb_tensor& x1 = x1_arg->tensors[0];
    const hb_tensor& x2 = x2_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (x1.dtype != x2.dtype || y.dtype != x1.dtype) return hb_fail(call, 2, "gcd: x1, x2 and y must share a dtype");
    if (!hb_is_contiguous(&x1) || !hb_is_contiguous(&x2) || !hb_is_contiguous(&y))
        return hb_fail(call, 2, "gcd: only contiguous tensors are supported");
    if (y.rank < x1.rank || y.rank < x2.rank) return hb_fail(call, 2, "gcd: y must have the broadcast shape");
    switch (y.dtype) {
        case HB_INT16: gcd_loop<std::int16_t>(x1, x2, y); return 0;
        case HB_INT32: gcd_loop<std::int32_t>(x1, x2, y); return 0;
        case HB_INT64: gcd_loop<std::int64_t>(x1, x2, y); return 0;
        default: return hb_fail(call, 2, "gcd: dtype must be int16, int32 or int64");
    }
}
