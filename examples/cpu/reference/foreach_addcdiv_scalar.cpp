// Reference foreach_addcdiv_scalar: for every member i of the tensor lists,
// y[i] = x1[i] + scalar * (x2[i] / x3[i]). The math runs in fp64 and is rounded once: in fp32,
// x2 / x3 overflows to inf for inputs near the type's limit although y is finite.
#include <omp.h>

#include <cmath>
#include <cstdint>

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
void addcdiv_one(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& x3, const hb_tensor& y,
                 double scalar, int threads) {
    using S = typename Type::Storage;
    const auto* a = static_cast<const S*>(x1.data);
    const auto* b = static_cast<const S*>(x2.data);
    const auto* c = static_cast<const S*>(x3.data);
    auto* out = static_cast<S*>(y.data);
    const int64_t n = hb_numel(&y);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kParallelMinElements)
    for (int64_t i = 0; i < n; ++i) {
        const double quotient = static_cast<double>(Type::load(b[i])) / Type::load(c[i]);
        out[i] = Type::store(static_cast<float>(Type::load(a[i]) + scalar * quotient));
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x1 = hb_input(call, "x1");
    const hb_arg* x2 = hb_input(call, "x2");
    const hb_arg* x3 = hb_input(call, "x3");
    const hb_arg* y = hb_output(call, "y");
    if (!x1 || !x2 || !x3 || !y)
        return hb_fail(call, 1, "foreach_addcdiv_scalar: expected input lists x1, x2, x3 and output list y");
    if (x2->count != x1->count || x3->count != x1->count || y->count != x1->count)
        return hb_fail(call, 2, "foreach_addcdiv_scalar: x1, x2, x3 and y must have the same length");

    const double scalar = hb_attr_float(call, "scalar", 1.0);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    for (int32_t i = 0; i < x1->count; ++i) {
        const hb_tensor& a = x1->tensors[i];
        const hb_tensor& b = x2->tensors[i];
        const hb_tensor& c = x3->tensors[i];
        const hb_tensor& out = y->tensors[i];
        const int64_t n = hb_numel(&out);
        if (a.dtype != out.dtype || b.dtype != out.dtype || c.dtype != out.dtype ||
            hb_numel(&a) != n || hb_numel(&b) != n || hb_numel(&c) != n)
            return hb_fail(call, 2, "foreach_addcdiv_scalar: members i of x1, x2, x3 and y must match in dtype and size");
        if (!hb_is_contiguous(&a) || !hb_is_contiguous(&b) || !hb_is_contiguous(&c) || !hb_is_contiguous(&out))
            return hb_fail(call, 3, "foreach_addcdiv_scalar: only contiguous tensors are supported");
        switch (out.dtype) {
            case HB_FLOAT32: addcdiv_one<Fp32>(a, b, c, out, scalar, threads); break;
            case HB_FLOAT16: addcdiv_one<Fp16>(a, b, c, out, scalar, threads); break;
            case HB_BFLOAT16: addcdiv_one<Bf16>(a, b, c, out, scalar, threads); break;
            default: return hb_fail(call, 2, "foreach_addcdiv_scalar: tensors must be float32, float16 or bfloat16");
        }
    }
    return 0;
}
