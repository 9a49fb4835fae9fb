// Tuned add_rms_norm_dynamic_quant: per row of N, in fp32,
//   s = x1 + x2;  u = s * (1 / sqrt(mean(s^2) + epsilon)) * gamma
//   scale = max(max|u|, 1e-12) / 127;  y = round_half_even(u * (1 / scale)) saturated to int8
// xOut = s in the input dtype, scaleOut = scale. Rows are spread over the threads; each row
// is read from memory once (x1 and x2 in 8-lane AVX2 steps, F16C or bit-shift widening), s
// kept in a per-thread fp32 row buffer (at most 64 KiB, in L2) for the second and third
// passes, and xOut and y written with non-temporal stores where the row allows (every byte
// of them is written, so reading their lines for ownership would only cost bandwidth).
// Multiplying by 1/r and 1/scale instead of dividing moves a value by at most an ulp: y may
// differ by 1 on a rounding tie, as the proto allows. A row whose scale is not finite (a
// NaN or infinity in s, an infinite gamma) quantizes to all zeros, as the NaN rule demands.
// Without AVX2, FMA and F16C the same file builds a scalar loop.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define HB_TUNED_SIMD 1
#endif

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

constexpr int64_t kParallelMinElements = 32768;

float load_scalar(bool bf16, uint16_t v) { return bf16 ? hb_bf16_to_f32(v) : hb_f16_to_f32(v); }
uint16_t store_scalar(bool bf16, float v) { return bf16 ? hb_f32_to_bf16(v) : hb_f32_to_f16(v); }

int8_t quantize_scalar(float q) {
    return q != q ? 0 : static_cast<int8_t>(std::min(std::max(std::nearbyint(q), -128.0f), 127.0f));
}

#ifdef HB_TUNED_SIMD

template <bool BF16>
inline __m256 load8(const uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (BF16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    else return _mm256_cvtph_ps(h);
}

// fp32 -> fp16 (F16C) or bf16 (round to nearest even, NaN kept quiet), 8 lanes.
template <bool BF16>
inline __m128i pack8(__m256 v) {
    if constexpr (!BF16) {
        return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    } else {
        const __m256i bits = _mm256_castps_si256(v);
        const __m256i top = _mm256_srli_epi32(bits, 16);
        const __m256i bias = _mm256_add_epi32(_mm256_and_si256(top, _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7fff));
        const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
        const __m256i quiet = _mm256_or_si256(top, _mm256_set1_epi32(0x40));
        const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        const __m256i halves = _mm256_blendv_epi8(rounded, quiet, is_nan);
        return _mm_packus_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
    }
}

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// 32 quotients to 32 int8: cvtps rounds half to even; the two packs saturate to [-128, 127].
inline __m256i quantize32(__m256 a, __m256 b, __m256 c, __m256 d) {
    const __m256i ab = _mm256_packs_epi32(_mm256_cvtps_epi32(a), _mm256_cvtps_epi32(b));
    const __m256i cd = _mm256_packs_epi32(_mm256_cvtps_epi32(c), _mm256_cvtps_epi32(d));
    const __m256i bytes = _mm256_packs_epi16(ab, cd);
    return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

template <bool BF16>
void run_row(const uint16_t* x1, const uint16_t* x2, const float* gamma, uint16_t* x_out, int8_t* y, float* scale_out,
             float* s, int64_t n, float epsilon) {
    // Pass 1: s = x1 + x2 into the row buffer, xOut, and the sum of squares (4 accumulators).
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    const bool stream_x = (reinterpret_cast<uintptr_t>(x_out) & 15) == 0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = _mm256_add_ps(load8<BF16>(x1 + i), load8<BF16>(x2 + i));
        const __m256 b = _mm256_add_ps(load8<BF16>(x1 + i + 8), load8<BF16>(x2 + i + 8));
        _mm256_store_ps(s + i, a);
        _mm256_store_ps(s + i + 8, b);
        if (stream_x) {
            _mm_stream_si128(reinterpret_cast<__m128i*>(x_out + i), pack8<BF16>(a));
            _mm_stream_si128(reinterpret_cast<__m128i*>(x_out + i + 8), pack8<BF16>(b));
        } else {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(x_out + i), pack8<BF16>(a));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(x_out + i + 8), pack8<BF16>(b));
        }
        if ((i & 16) == 0) {
            acc0 = _mm256_fmadd_ps(a, a, acc0);
            acc1 = _mm256_fmadd_ps(b, b, acc1);
        } else {
            acc2 = _mm256_fmadd_ps(a, a, acc2);
            acc3 = _mm256_fmadd_ps(b, b, acc3);
        }
    }
    float tail_sum = 0.0f;
    for (; i < n; ++i) {
        const float v = load_scalar(BF16, x1[i]) + load_scalar(BF16, x2[i]);
        s[i] = v;
        x_out[i] = store_scalar(BF16, v);
        tail_sum += v * v;
    }
    const float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3))) + tail_sum;
    const float inv_rms = 1.0f / std::sqrt(sum / static_cast<float>(n) + epsilon);

    // Pass 2: u = s * (1/r) * gamma in place, and max|u| with any NaN remembered (maxps
    // drops NaN operands).
    const __m256 r8 = _mm256_set1_ps(inv_rms);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 max0 = _mm256_setzero_ps(), max1 = max0, nan_seen = max0;
    for (i = 0; i + 16 <= n; i += 16) {
        const __m256 a = _mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(s + i), r8), _mm256_loadu_ps(gamma + i));
        const __m256 b = _mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(s + i + 8), r8), _mm256_loadu_ps(gamma + i + 8));
        _mm256_store_ps(s + i, a);
        _mm256_store_ps(s + i + 8, b);
        nan_seen = _mm256_or_ps(nan_seen, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
        max0 = _mm256_max_ps(max0, _mm256_and_ps(a, abs_mask));
        max1 = _mm256_max_ps(max1, _mm256_and_ps(b, abs_mask));
    }
    float max_abs = hmax(_mm256_max_ps(max0, max1));
    bool nan = _mm256_movemask_ps(nan_seen) != 0;
    for (; i < n; ++i) {
        s[i] = s[i] * inv_rms * gamma[i];
        const float m = std::fabs(s[i]);
        nan |= m != m;
        max_abs = m > max_abs ? m : max_abs;
    }
    const float scale = nan ? NAN : std::max(max_abs, 1e-12f) / 127.0f;
    *scale_out = scale;
    if (!std::isfinite(scale)) {  // every quotient is NaN or 0: y is all zeros
        std::memset(y, 0, static_cast<size_t>(n));
        return;
    }

    // Pass 3: y = round(u * (1/scale)), 32 at a time; streamed where y is 32-byte aligned.
    const __m256 q8 = _mm256_set1_ps(1.0f / scale);
    i = 0;
    for (; i < n && (reinterpret_cast<uintptr_t>(y + i) & 31) != 0; ++i) y[i] = quantize_scalar(s[i] / scale);
    for (; i + 32 <= n; i += 32) {
        const __m256i q = quantize32(_mm256_mul_ps(_mm256_loadu_ps(s + i), q8), _mm256_mul_ps(_mm256_loadu_ps(s + i + 8), q8),
                                     _mm256_mul_ps(_mm256_loadu_ps(s + i + 16), q8),
                                     _mm256_mul_ps(_mm256_loadu_ps(s + i + 24), q8));
        _mm256_stream_si256(reinterpret_cast<__m256i*>(y + i), q);
    }
    for (; i < n; ++i) y[i] = quantize_scalar(s[i] / scale);
}

#else

template <bool BF16>
void run_row(const uint16_t* x1, const uint16_t* x2, const float* gamma, uint16_t* x_out, int8_t* y, float* scale_out,
             float* s, int64_t n, float epsilon) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        s[i] = load_scalar(BF16, x1[i]) + load_scalar(BF16, x2[i]);
        x_out[i] = store_scalar(BF16, s[i]);
        sum += s[i] * s[i];
    }
    const float inv_rms = 1.0f / std::sqrt(sum / static_cast<float>(n) + epsilon);
    float max_abs = 0.0f;
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
        s[i] = s[i] * inv_rms * gamma[i];
        const float m = std::fabs(s[i]);
        nan |= m != m;
        max_abs = m > max_abs ? m : max_abs;
    }
    const float scale = nan ? NAN : std::max(max_abs, 1e-12f) / 127.0f;
    *scale_out = scale;
    for (int64_t i = 0; i < n; ++i) y[i] = quantize_scalar(s[i] / scale);
}

#endif

template <bool BF16>
void run_all(const hb_tensor& x1, const hb_tensor& x2, const float* gamma, const hb_tensor& y, const hb_tensor& x_out,
             const hb_tensor& scale, float epsilon, int threads) {
    const auto* a = static_cast<const uint16_t*>(x1.data);
    const auto* b = static_cast<const uint16_t*>(x2.data);
    auto* xo = static_cast<uint16_t*>(x_out.data);
    auto* q = static_cast<int8_t*>(y.data);
    auto* sc = static_cast<float*>(scale.data);
    const int64_t row = x1.shape[x1.rank - 1];
    const int64_t rows = row == 0 ? 0 : hb_numel(&x1) / row;
#pragma omp parallel num_threads(threads) if (rows > 1 && rows * row >= kParallelMinElements)
    {
        // A 32-byte aligned row buffer (the 16 floats of padding cover the alignment shift).
        std::vector<float> buffer(static_cast<size_t>(row + 16));
        float* s = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(buffer.data()) + 31) & ~uintptr_t{31});
#pragma omp for schedule(static) nowait
        for (int64_t r = 0; r < rows; ++r)
            run_row<BF16>(a + r * row, b + r * row, gamma, xo + r * row, q + r * row, sc + r, s, row, epsilon);
#ifdef HB_TUNED_SIMD
        _mm_sfence();  // this thread's streamed stores are visible when the call returns
#endif
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x1 = hb_input(call, "x1");
    const hb_arg* x2 = hb_input(call, "x2");
    const hb_arg* gamma = hb_input(call, "gamma");
    const hb_arg* y = hb_output(call, "y");
    const hb_arg* x_out = hb_output(call, "xOut");
    const hb_arg* scale = hb_output(call, "scaleOut");
    if (!x1 || !x2 || !gamma || !y || !x_out || !scale)
        return hb_fail(call, 1, "add_rms_norm_dynamic_quant: expected inputs x1, x2, gamma and outputs y, xOut, scaleOut");
    const hb_tensor& a = x1->tensors[0];
    for (const hb_arg* arg : {x1, x2, gamma, y, x_out, scale})
        if (!hb_is_contiguous(&arg->tensors[0]))
            return hb_fail(call, 3, "add_rms_norm_dynamic_quant: only contiguous tensors are supported");
    if (a.rank < 1 || (a.dtype != HB_FLOAT16 && a.dtype != HB_BFLOAT16) || x2->tensors[0].dtype != a.dtype ||
        gamma->tensors[0].dtype != a.dtype || hb_numel(&gamma->tensors[0]) != a.shape[a.rank - 1] ||
        y->tensors[0].dtype != HB_INT8 || scale->tensors[0].dtype != HB_FLOAT32)
        return hb_fail(call, 2, "add_rms_norm_dynamic_quant: float16/bfloat16 x1, x2, gamma [N]; y int8, scaleOut float32");
    const int64_t row = a.shape[a.rank - 1];
    if (row == 0 || hb_numel(&a) == 0) return 0;
    const bool bf16 = a.dtype == HB_BFLOAT16;
    std::vector<float> g(static_cast<size_t>(row + 16), 0.0f);  // widened once per call
    const auto* gp = static_cast<const uint16_t*>(gamma->tensors[0].data);
    for (int64_t i = 0; i < row; ++i) g[static_cast<size_t>(i)] = load_scalar(bf16, gp[i]);
    const float epsilon = static_cast<float>(hb_attr_float(call, "epsilon", 1e-6));
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    if (bf16) run_all<true>(a, x2->tensors[0], g.data(), y->tensors[0], x_out->tensors[0], scale->tensors[0], epsilon, threads);
    else run_all<false>(a, x2->tensors[0], g.data(), y->tensors[0], x_out->tensors[0], scale->tensors[0], epsilon, threads);
    return 0;
}
