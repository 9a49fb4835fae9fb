// Reference maximum: y = max(x1, x2) with NumPy/PyTorch broadcasting, NaN propagating as in
// torch.maximum. x1, x2 and y share one dtype: float32, float16, bfloat16, int8, int32 or
// int64. fp16/bf16 compare in fp32 (exact) and return the chosen input element unchanged.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

struct F16 {
    uint16_t bits;
};
struct Bf16 {
    uint16_t bits;
};
float to_float(F16 v) { return hb_f16_to_f32(v.bits); }
float to_float(Bf16 v) { return hb_bf16_to_f32(v.bits); }
float to_float(float v) { return v; }

template <typename T>
T max_of(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        return a < b ? b : a;
    } else {
        const float fa = to_float(a), fb = to_float(b);
        if (fa != fa) return a;  // NaN wins
        if (fb != fb) return b;
        return fa < fb ? b : a;
    }
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
void maximum_all(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& y, int threads) {
    const auto* a = static_cast<const T*>(x1.data);
    const auto* b = static_cast<const T*>(x2.data);
    auto* out = static_cast<T*>(y.data);
    const int rank = y.rank;
    const int64_t n = hb_numel(&y);
    if (n == 0) return;
    if (rank == 0) {
        out[0] = max_of(a[0], b[0]);
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
        for (int64_t i = 0; i < inner; ++i) dst[i] = max_of(a[oa + i * ia], b[ob + i * ib]);
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x1_arg = hb_input(call, "x1");
    const hb_arg* x2_arg = hb_input(call, "x2");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x1_arg || !x2_arg || !y_arg || x1_arg->count != 1 || x2_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "maximum: expected input tensors x1, x2 and output tensor y");
    const hb_tensor& x1 = x1_arg->tensors[0];
    const hb_tensor& x2 = x2_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (x1.dtype != x2.dtype || y.dtype != x1.dtype) return hb_fail(call, 2, "maximum: x1, x2 and y must share a dtype");
    if (y.rank < x1.rank || y.rank < x2.rank) return hb_fail(call, 2, "maximum: y has a lower rank than an input");
    if (!hb_is_contiguous(&x1) || !hb_is_contiguous(&x2) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "maximum: only contiguous tensors are supported");
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (y.dtype) {
        case HB_FLOAT32: maximum_all<float>(x1, x2, y, threads); return 0;
        case HB_FLOAT16: maximum_all<F16>(x1, x2, y, threads); return 0;
        case HB_BFLOAT16: maximum_all<Bf16>(x1, x2, y, threads); return 0;
        case HB_INT8: maximum_all<int8_t>(x1, x2, y, threads); return 0;
        case HB_INT32: maximum_all<int32_t>(x1, x2, y, threads); return 0;
        case HB_INT64: maximum_all<int64_t>(x1, x2, y, threads); return 0;
        default: return hb_fail(call, 2, "maximum: dtype must be float32, float16, bfloat16, int8, int32 or int64");
    }
}
