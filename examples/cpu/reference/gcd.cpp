// Reference gcd: y = gcd(x1, x2) with NumPy/PyTorch broadcasting, as torch.gcd: the result
// is non-negative, gcd(a, 0) = |a|, gcd(0, 0) = 0. x1, x2 and y share one dtype: int16,
// int32 or int64. Euclid's algorithm on the unsigned magnitudes.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "hapbench/kernel.h"

namespace {

template <typename T>
T gcd_of(T a, T b) {
    using U = std::make_unsigned_t<T>;
    // Magnitudes in the unsigned type: exact even for the most negative value.
    U u = a < 0 ? U(0) - static_cast<U>(a) : static_cast<U>(a);
    U v = b < 0 ? U(0) - static_cast<U>(b) : static_cast<U>(b);
    while (v != 0) {
        const U r = static_cast<U>(u % v);
        u = v;
        v = r;
    }
    return static_cast<T>(u);
}

// Input strides over the output's dims: 0 where the input has size 1 or lacks the dim.
std::vector<int64_t> broadcast_strides(const hb_tensor& in, int rank) {
    std::vector<int64_t> strides(static_cast<size_t>(rank), 0);
    int64_t step = 1;
    for (int k = 0; k < in.rank; ++k) {
        const int d_in = in.rank - 1 - k, d_out = rank - 1 - k;
        if (in.shape[d_in] != 1) strides[static_cast<size_t>(d_out)] = step;
        step *= in.shape[d_in];
    }
    return strides;
}

template <typename T>
void gcd_all(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& y, int threads) {
    const auto* a = static_cast<const T*>(x1.data);
    const auto* b = static_cast<const T*>(x2.data);
    auto* out = static_cast<T*>(y.data);
    const int rank = y.rank;
    const int64_t n = hb_numel(&y);
    if (n == 0) return;
    if (rank == 0) {
        out[0] = gcd_of(a[0], b[0]);
        return;
    }
    const std::vector<int64_t> sa = broadcast_strides(x1, rank), sb = broadcast_strides(x2, rank);
    const int64_t inner = y.shape[rank - 1];
    const int64_t rows = n / inner;
    const int64_t ia = sa[static_cast<size_t>(rank - 1)], ib = sb[static_cast<size_t>(rank - 1)];
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 32768)
    for (int64_t r = 0; r < rows; ++r) {
        // The row's offsets in x1 and x2 from its index over the outer dims.
        int64_t oa = 0, ob = 0, rest = r;
        for (int d = rank - 2; d >= 0; --d) {
            const int64_t index = rest % y.shape[d];
            rest /= y.shape[d];
            oa += index * sa[static_cast<size_t>(d)];
            ob += index * sb[static_cast<size_t>(d)];
        }
        T* dst = out + r * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] = gcd_of(a[oa + i * ia], b[ob + i * ib]);
    }
}

}  // namespace

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
    if (y.rank < x1.rank || y.rank < x2.rank) return hb_fail(call, 2, "gcd: y has a lower rank than an input");
    if (!hb_is_contiguous(&x1) || !hb_is_contiguous(&x2) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "gcd: only contiguous tensors are supported");
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (y.dtype) {
        case HB_INT16: gcd_all<int16_t>(x1, x2, y, threads); return 0;
        case HB_INT32: gcd_all<int32_t>(x1, x2, y, threads); return 0;
        case HB_INT64: gcd_all<int64_t>(x1, x2, y, threads); return 0;
        default: return hb_fail(call, 2, "gcd: dtype must be int16, int32 or int64");
    }
}
