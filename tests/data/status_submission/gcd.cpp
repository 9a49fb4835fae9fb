// gcd for x1 and x2 of y's shape (no broadcasting; enough for public case 13, int64
// [7, 5, 3, 256] twice), computed right, except that a counter left over from the previous
// call is added to y[0]: two calls on identical inputs return different integers
// (NONDETERMINISTIC; integer outputs are compared within their absolute tolerance, 0 for gcd).
#include <cstdint>
#include <type_traits>

#include "hapbench/kernel.h"

namespace {

template <typename T>
T gcd_of(T a, T b) {
    using U = std::make_unsigned_t<T>;
    U u = a < 0 ? U(0) - static_cast<U>(a) : static_cast<U>(a);
    U v = b < 0 ? U(0) - static_cast<U>(b) : static_cast<U>(b);
    while (v != 0) {
        const U r = static_cast<U>(u % v);
        u = v;
        v = r;
    }
    return static_cast<T>(u);
}

template <typename T>
void gcd_all(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& y, int64_t stale) {
    const auto* a = static_cast<const T*>(x1.data);
    const auto* b = static_cast<const T*>(x2.data);
    auto* out = static_cast<T*>(y.data);
    const int64_t n = hb_numel(&y);
    for (int64_t i = 0; i < n; ++i) out[i] = gcd_of(a[i], b[i]);
    if (n > 0) out[0] = static_cast<T>(out[0] + stale);
}

int64_t calls = 0;

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor& x1 = hb_input(call, "x1")->tensors[0];
    const hb_tensor& x2 = hb_input(call, "x2")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    if (hb_numel(&x1) != hb_numel(&y) || hb_numel(&x2) != hb_numel(&y))
        return hb_fail(call, 1, "gcd: this test kernel does not broadcast");
    const int64_t stale = calls++;
    switch (y.dtype) {
        case HB_INT16: gcd_all<int16_t>(x1, x2, y, stale); return 0;
        case HB_INT32: gcd_all<int32_t>(x1, x2, y, stale); return 0;
        case HB_INT64: gcd_all<int64_t>(x1, x2, y, stale); return 0;
        default: return hb_fail(call, 2, "gcd: dtype must be int16, int32 or int64");
    }
}
