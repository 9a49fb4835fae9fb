// Reference foreach_norm: for every member of the list x, the p-norm (p = `scalar`) over all
// its elements, written as a 0-d tensor in x's dtype: p = inf: max |x|; p = -inf: min |x|;
// p = 0: count of non-zeros; otherwise (sum |x|^p)^(1/p). Accumulates in fp64.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

struct Fp32 {
    using Storage = float;
    static float load(float v) { return v; }
    static float store(float v) { return v; }
};
struct Fp16 {
    using Storage = uint16_t;
    static float load(uint16_t v) { return hb_f16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_f16(v); }
};
struct Bf16 {
    using Storage = uint16_t;
    static float load(uint16_t v) { return hb_bf16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_bf16(v); }
};

constexpr int64_t kParallelMinElements = 32768;

template <typename Type>
double norm_of(const hb_tensor& x, double p, int threads) {
    const auto* in = static_cast<const typename Type::Storage*>(x.data);
    const int64_t n = hb_numel(&x);
    if (std::isinf(p)) {
        // max/min reductions drop NaN, so NaN is tracked on the side and wins at the end.
        double extreme = p > 0 ? 0.0 : std::numeric_limits<double>::infinity();
        int saw_nan = 0;
        if (p > 0) {
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements) reduction(max : extreme) reduction(| : saw_nan)
            for (int64_t i = 0; i < n; ++i) {
                const double v = std::fabs(Type::load(in[i]));
                if (std::isnan(v)) saw_nan = 1;
                else if (v > extreme) extreme = v;
            }
        } else {
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements) reduction(min : extreme) reduction(| : saw_nan)
            for (int64_t i = 0; i < n; ++i) {
                const double v = std::fabs(Type::load(in[i]));
                if (std::isnan(v)) saw_nan = 1;
                else if (v < extreme) extreme = v;
            }
        }
        return saw_nan ? std::numeric_limits<double>::quiet_NaN() : extreme;
    }
    double sum = 0.0;
    if (p == 0.0) {
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements) reduction(+ : sum)
        for (int64_t i = 0; i < n; ++i) sum += Type::load(in[i]) != 0.0f ? 1.0 : 0.0;  // NaN counts
        return sum;
    }
    if (p == 1.0) {
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements) reduction(+ : sum)
        for (int64_t i = 0; i < n; ++i) sum += std::fabs(static_cast<double>(Type::load(in[i])));
        return sum;
    }
    if (p == 2.0) {
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements) reduction(+ : sum)
        for (int64_t i = 0; i < n; ++i) {
            const double v = Type::load(in[i]);
            sum += v * v;
        }
        return std::sqrt(sum);
    }
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements) reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) sum += std::pow(std::fabs(static_cast<double>(Type::load(in[i]))), p);
    return std::pow(sum, 1.0 / p);
}

template <typename Type>
void norm_one(const hb_tensor& x, const hb_tensor& y, double p, int threads) {
    const double norm = norm_of<Type>(x, p, threads);
    *static_cast<typename Type::Storage*>(y.data) = Type::store(static_cast<float>(norm));
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x = hb_input(call, "x");
    const hb_arg* y = hb_output(call, "y");
    if (!x || !y) return hb_fail(call, 1, "foreach_norm: expected input list x and output list y");
    if (y->count != x->count) return hb_fail(call, 2, "foreach_norm: x and y must have the same length");

    const double p = hb_attr_float(call, "scalar", 2.0);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    for (int32_t i = 0; i < x->count; ++i) {
        const hb_tensor& in = x->tensors[i];
        const hb_tensor& out = y->tensors[i];
        if (out.dtype != in.dtype || hb_numel(&out) != 1)
            return hb_fail(call, 2, "foreach_norm: every y member must be one element of its x member's dtype");
        if (!hb_is_contiguous(&in))
            return hb_fail(call, 3, "foreach_norm: only contiguous tensors are supported");
        switch (in.dtype) {
            case HB_FLOAT32: norm_one<Fp32>(in, out, p, threads); break;
            case HB_FLOAT16: norm_one<Fp16>(in, out, p, threads); break;
            case HB_BFLOAT16: norm_one<Bf16>(in, out, p, threads); break;
            default: return hb_fail(call, 2, "foreach_norm: tensors must be float32, float16 or bfloat16");
        }
    }
    return 0;
}
