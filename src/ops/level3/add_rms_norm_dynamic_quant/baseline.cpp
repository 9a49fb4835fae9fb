// Baseline for add_rms_norm_dynamic_quant: a threaded C++ loop, OpenMP over rows, in fp32
// as the operator defines it. Per row: s = x1 + x2 into a per-thread fp32 row buffer (xOut
// written from it, squares summed), u = (s / r) * gamma with its max |u| (the row in cache),
// then y = round(u / scale) with NaN quotients mapped to 0. oneDNN 2.6 has no RMS
// normalization (its layer_normalization always subtracts the mean) and no dynamic
// quantization (its reorder takes scales given in advance): a primitive chain (binary add,
// a reduction, binary ops, a reorder per row) would pass over memory several times.
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

template <typename Element>
void run_rows(const Element* x1, const Element* x2, const Element* gamma, std::int8_t* y, Element* x_out,
              float* scale_out, std::int64_t rows, std::int64_t row, float epsilon) {
    std::vector<float> g(static_cast<std::size_t>(row));
    for (std::int64_t i = 0; i < row; ++i) g[static_cast<std::size_t>(i)] = to_f32(gamma[i]);
    const float* gp = g.data();
#pragma omp parallel
    {
        std::vector<float> buffer(static_cast<std::size_t>(row));
        float* s = buffer.data();
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t base = r * row;
            float sum = 0.f;
#pragma omp simd reduction(+ : sum)
            for (std::int64_t i = 0; i < row; ++i) {
                const float v = to_f32(x1[base + i]) + to_f32(x2[base + i]);
                s[i] = v;
                x_out[base + i] = from_f32<Element>(v);
                sum += v * v;
            }
            const float rms = std::sqrt(sum / static_cast<float>(row) + epsilon);
            float max_abs = 0.f;
            bool nan = false;
#pragma omp simd reduction(max : max_abs) reduction(| : nan)
            for (std::int64_t i = 0; i < row; ++i) {
                const float u = std::fabs((s[i] / rms) * gp[i]);
                nan |= u != u;
                max_abs = u > max_abs ? u : max_abs;
            }
            const float scale = nan ? NAN : std::fmax(max_abs, 1e-12f) / 127.0f;
            scale_out[r] = scale;
#pragma omp simd
            for (std::int64_t i = 0; i < row; ++i) {
                const float q = ((s[i] / rms) * gp[i]) / scale;
                y[base + i] = q != q ? 0 : static_cast<std::int8_t>(std::fmin(std::fmax(std::nearbyint(q), -128.f), 127.f));
            }
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x1_arg = hb_input(call, "x1");
    const hb_arg* x2_arg = hb_input(call, "x2");
    const hb_arg* gamma_arg = hb_input(call, "gamma");
    const hb_arg* y_arg = hb_output(call, "y");
    const hb_arg* x_out_arg = hb_output(call, "xOut");
    const hb_arg* scale_arg = hb_output(call, "scaleOut");
    if (!x1_arg || !x2_arg || !gamma_arg || !y_arg || !x_out_arg || !scale_arg)
        return hb_fail(call, 1, "add_rms_norm_dynamic_quant: expected inputs x1, x2, gamma and outputs y, xOut, scaleOut");
    const hb_tensor& x1 = x1_arg->tensors[0];
    const hb_tensor& x2 = x2_arg->tensors[0];
    const hb_tensor& gamma = gamma_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    const hb_tensor& x_out = x_out_arg->tensors[0];
    const hb_tensor& scale = scale_arg->tensors[0];
    for (const hb_tensor* t : {&x1, &x2, &gamma, &y, &x_out, &scale})
        if (!hb_is_contiguous(t)) return hb_fail(call, 2, "add_rms_norm_dynamic_quant: only contiguous tensors are supported");
    if (x1.rank < 1 || x2.dtype != x1.dtype || gamma.dtype != x1.dtype || x_out.dtype != x1.dtype ||
        y.dtype != HB_INT8 || scale.dtype != HB_FLOAT32 || hb_numel(&x2) != hb_numel(&x1) ||
        hb_numel(&gamma) != x1.shape[x1.rank - 1])
        return hb_fail(call, 2, "add_rms_norm_dynamic_quant: x2, gamma and xOut must have x1's dtype, gamma [N], y int8");
    const std::int64_t row = x1.shape[x1.rank - 1];
    if (row == 0 || hb_numel(&x1) == 0) return 0;
    const auto epsilon = static_cast<float>(hb_attr_float(call, "epsilon", 1e-6));
    const std::int64_t rows = hb_numel(&x1) / row;
    auto run = [&](auto element) {
        using Element = decltype(element);
        run_rows(static_cast<const Element*>(x1.data), static_cast<const Element*>(x2.data),
                 static_cast<const Element*>(gamma.data), static_cast<std::int8_t*>(y.data),
                 static_cast<Element*>(x_out.data), static_cast<float*>(scale.data), rows, row, epsilon);
    };
    switch (x1.dtype) {
        case HB_FLOAT16: run(Half{}); return 0;
        case HB_BFLOAT16: run(BFloat16{}); return 0;
        default: return hb_fail(call, 2, "add_rms_norm_dynamic_quant: x1 must be float16 or bfloat16");
    }
}
