// Baseline for add_rms_norm_dynamic_quant: a threaded C++ loop, OpenMP over rows, in fp32
// as the operator defines it. Per row: s = x1 + x2 into a per-thread fp32 row buffer (xOut
// written from it, squares summed), u = (s / r) * gamma with its max |u| (the row in cache),
// then y = round(u / scale) with NaN quotients mapped to 0. oneDNN 2.6 has no RMS
// normalization (its layer_normalization always subtracts the mean) and no dynamic
// quantization (its reorder takes scales given in advance): a primitive chain (binary add,
// a reduction, binary ops, a reorder per row) would pass over memory several times.
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

// Saturation to int8 with comparisons, which vectorize (fminf/fmaxf are library calls).
inline float clamp_int8(float v) { return v < -128.f ? -128.f : (v > 127.f ? 127.f : v); }

// One row of fp16/bf16 to fp32 and back, vectorized (F16C, bit shifts) on the calling
// thread: baseline_support's widen_to_f32 / narrow_from_f32 open their own parallel loops.
void widen_row_f32(const FlatTensor& src, float* dst) {
    const auto* s = static_cast<const std::uint16_t*>(src.data);
    std::int64_t i = 0;
    if (src.dtype == HB_FLOAT16) {
#ifdef __F16C__
        for (; i + 8 <= src.n; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
#endif
        for (; i < src.n; ++i) dst[i] = hb_f16_to_f32(s[i]);
    } else {
#pragma omp simd
        for (std::int64_t j = 0; j < src.n; ++j) dst[j] = hb_bf16_to_f32(s[j]);
    }
}

void narrow_row_f32(const float* src, const FlatTensor& dst) {
    auto* d = static_cast<std::uint16_t*>(dst.data);
    std::int64_t i = 0;
    if (dst.dtype == HB_FLOAT16) {
#ifdef __F16C__
        for (; i + 8 <= dst.n; i += 8)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                             _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
        for (; i < dst.n; ++i) d[i] = hb_f32_to_f16(src[i]);
    } else {
#pragma omp simd
        for (std::int64_t j = 0; j < dst.n; ++j) d[j] = hb_f32_to_bf16(src[j]);
    }
}

// Widens n elements to fp32 (F16C for fp16, a shift for bf16: vectorized, unlike the
// scalar to_f32 in a loop) and narrows back, rounding to nearest even.
template <typename Element>
void widen_row(const Element* src, float* dst, std::int64_t n) {
    FlatTensor t;
    t.data = const_cast<Element*>(src);
    t.dtype = std::is_same_v<Element, Half> ? HB_FLOAT16 : HB_BFLOAT16;
    t.n = n;
    widen_row_f32(t, dst);
}

template <typename Element>
void run_rows(const Element* x1, const Element* x2, const Element* gamma, std::int8_t* y, Element* x_out,
              float* scale_out, std::int64_t rows, std::int64_t row, float epsilon) {
    std::vector<float> g(static_cast<std::size_t>(row));
    widen_row(gamma, g.data(), row);
    const float* gp = g.data();
#pragma omp parallel
    {
        std::vector<float> buffer(static_cast<std::size_t>(2 * row));
        float* s = buffer.data();
        float* b = s + row;
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t base = r * row;
            widen_row(x1 + base, s, row);
            widen_row(x2 + base, b, row);
            float sum = 0.f;
#pragma omp simd reduction(+ : sum)
            for (std::int64_t i = 0; i < row; ++i) {
                s[i] += b[i];
                sum += s[i] * s[i];
            }
            FlatTensor out;
            out.data = x_out + base;
            out.dtype = std::is_same_v<Element, Half> ? HB_FLOAT16 : HB_BFLOAT16;
            out.n = row;
            narrow_row_f32(s, out);
            const float rms = std::sqrt(sum / static_cast<float>(row) + epsilon);
            float max_abs = 0.f;
            bool nan = false;
#pragma omp simd reduction(max : max_abs) reduction(| : nan)
            for (std::int64_t i = 0; i < row; ++i) {
                s[i] = (s[i] / rms) * gp[i];
                const float u = std::fabs(s[i]);
                nan |= u != u;
                max_abs = u > max_abs ? u : max_abs;
            }
            const float scale = nan ? NAN : std::fmax(max_abs, 1e-12f) / 127.0f;
            scale_out[r] = scale;
            std::int8_t* yr = y + base;
#pragma omp simd
            for (std::int64_t i = 0; i < row; ++i) {
                const float q = s[i] / scale;
                yr[i] = q != q ? 0 : static_cast<std::int8_t>(clamp_int8(std::nearbyint(q)));
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
