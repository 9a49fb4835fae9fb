// Baseline for foreach_norm: per list member the p-norm of all its elements (torch
// vector_norm semantics: p = +-inf max/min |x|, p = 0 non-zero count, else
// (sum |x|^p)^(1/p)), written to a 0-d tensor in the input dtype.
// Plain OpenMP C++ for every dtype, accumulating in fp32 blocks (fp16/bf16 converted on load):
// oneDNN 2.6 on this AVX2 CPU implements reduction_norm_lp_* only as ref:any (about 12x
// slower than this loop for 4M fp32 elements, measured), has no f16/bf16 reduction at all,
// and its jit max/sum reductions would need a separate abs pass and do not propagate NaN.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

// Sum of term(i): fp32 within blocks of 4096 (vectorized), block sums added in fp64, so
// that the error stays that of a short fp32 sum (as with a framework's cascade summation)
// instead of growing with n as one running fp32 accumulator per lane would.
template <typename Term>
double blocked_sum(std::int64_t n, Term term) {
    constexpr std::int64_t block = 4096;
    const std::int64_t blocks = (n + block - 1) / block;
    double total = 0;
#pragma omp parallel for reduction(+ : total) schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t end = std::min(n, (b + 1) * block);
        float partial = 0.f;
#pragma omp simd reduction(+ : partial)
        for (std::int64_t i = b * block; i < end; ++i) partial += term(i);
        total += partial;
    }
    return total;
}

template <typename Element>
float member_norm(const Element* x, std::int64_t n, double order) {
    if (std::isinf(order)) {
        const bool want_max = order > 0;
        float extreme = want_max ? 0.f : std::numeric_limits<float>::infinity();
        int saw_nan = 0;
        if (want_max) {
#pragma omp parallel for simd reduction(max : extreme) reduction(| : saw_nan)
            for (std::int64_t i = 0; i < n; ++i) {
                const float a = std::fabs(to_f32(x[i]));
                saw_nan |= a != a;
                extreme = a > extreme ? a : extreme;
            }
        } else {
#pragma omp parallel for simd reduction(min : extreme) reduction(| : saw_nan)
            for (std::int64_t i = 0; i < n; ++i) {
                const float a = std::fabs(to_f32(x[i]));
                saw_nan |= a != a;
                extreme = a < extreme ? a : extreme;
            }
        }
        return saw_nan ? std::numeric_limits<float>::quiet_NaN() : extreme;
    }
    if (order == 0) {
        // NaN != 0 counts as non-zero, as in torch; an integer count stays exact past 2^24.
        std::int64_t count = 0;
#pragma omp parallel for simd reduction(+ : count)
        for (std::int64_t i = 0; i < n; ++i) count += to_f32(x[i]) != 0.f;
        return static_cast<float>(count);
    }
    if (order == 1) return static_cast<float>(blocked_sum(n, [&](std::int64_t i) { return std::fabs(to_f32(x[i])); }));
    if (order == 2) {
        const double sum = blocked_sum(n, [&](std::int64_t i) {
            const float v = to_f32(x[i]);
            return v * v;
        });
        return std::sqrt(static_cast<float>(sum));
    }
    const float power = static_cast<float>(order);
    const double sum = blocked_sum(n, [&](std::int64_t i) { return std::pow(std::fabs(to_f32(x[i])), power); });
    return std::pow(static_cast<float>(sum), 1.f / power);
}

}  // namespace
extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x = hb_input(call, "x");
    hb_arg* y = hb_output(call, "y");
    if (!x || !y) return hb_fail(call, 1, "foreach_norm: expected input x and output y");
    if (!hb_attr_find(call, "scalar")) return hb_fail(call, 1, "foreach_norm: attribute scalar is missing");
    const double order = hb_attr_float(call, "scalar", 2.0);
    if (y->count != x->count) return hb_fail(call, 1, "foreach_norm: output list length differs from input list length");
    for (std::int32_t m = 0; m < x->count; ++m) {
        const hb_tensor& in = x->tensors[m];
        hb_tensor& out = y->tensors[m];
        if (out.dtype != in.dtype || hb_numel(&out) != 1)
            return hb_fail(call, 1, "foreach_norm: each output must be a 0-d tensor of the input dtype");
        if (!hb_is_contiguous(&in)) return hb_fail(call, 1, "foreach_norm: the baseline needs contiguous tensors");
        const bool known = with_float_element(in.dtype, [&](auto element) {
            using Element = decltype(element);
            const float norm = member_norm(static_cast<const Element*>(in.data), hb_numel(&in), order);
            *static_cast<Element*>(out.data) = from_f32<Element>(norm);
        });
        if (!known) return hb_fail(call, 2, "foreach_norm: unsupported dtype (float32, float16, bfloat16 only)");
    }
    return 0;
}
