// Tuned rms_norm: y = x / sqrt(mean(x^2) + epsilon) * gamma over rows of D = numel(gamma)
// elements (gamma names the trailing dims of x), for float32, float16 and bfloat16 x and
// gamma. gamma is converted to fp32 once per call; each row is read twice (the second time
// from cache: one row is at most a few hundred KiB) with AVX2 + FMA, four accumulators for
// the sum of squares, F16C / bit-trick fp16 and bf16 conversion, rows spread over the
// threads. Without AVX2, FMA and F16C the same file builds a scalar loop.
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

// ---- dtypes -------------------------------------------------------------------------------

// Storage and conversions per dtype: scalar always, 8 lanes of __m256 with SIMD.
template <hb_dtype D>
struct Dtype;

template <>
struct Dtype<HB_FLOAT32> {
    using Storage = float;
    static float to_float(float v) { return v; }
    static float from_float(float v) { return v; }
#ifdef HB_TUNED_SIMD
    static constexpr uintptr_t kStreamAlign = 32;
    static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
    static void store8(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
    static void stream8(float* p, __m256 v) { _mm256_stream_ps(p, v); }
#endif
};

template <>
struct Dtype<HB_FLOAT16> {
    using Storage = uint16_t;
    static float to_float(uint16_t v) { return hb_f16_to_f32(v); }
    static uint16_t from_float(float v) { return hb_f32_to_f16(v); }
#ifdef HB_TUNED_SIMD
    static constexpr uintptr_t kStreamAlign = 16;
    static __m256 load8(const uint16_t* p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    // F16C rounds to nearest even, keeps NaN quiet and makes subnormals, as hb_f32_to_f16.
    static __m128i pack(__m256 v) { return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static void store8(uint16_t* p, __m256 v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), pack(v)); }
    static void stream8(uint16_t* p, __m256 v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), pack(v)); }
#endif
};

template <>
struct Dtype<HB_BFLOAT16> {
    using Storage = uint16_t;
    static float to_float(uint16_t v) { return hb_bf16_to_f32(v); }
    static uint16_t from_float(float v) { return hb_f32_to_bf16(v); }
#ifdef HB_TUNED_SIMD
    static constexpr uintptr_t kStreamAlign = 16;
    static __m256 load8(const uint16_t* p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    // Round to nearest even by adding 0x7fff plus the lowest kept bit; NaN keeps its top
    // bits with the quiet bit set (a carry could otherwise turn it into infinity).
    static __m128i pack(__m256 v) {
        const __m256i bits = _mm256_castps_si256(v);
        const __m256i top = _mm256_srli_epi32(bits, 16);
        const __m256i bias = _mm256_add_epi32(_mm256_and_si256(top, _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7fff));
        const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
        const __m256i quiet = _mm256_or_si256(top, _mm256_set1_epi32(0x40));
        const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        const __m256i halves = _mm256_blendv_epi8(rounded, quiet, is_nan);
        return _mm_packus_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
    }
    static void store8(uint16_t* p, __m256 v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), pack(v)); }
    static void stream8(uint16_t* p, __m256 v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), pack(v)); }
#endif
};


float gamma_at(const hb_tensor& g, int64_t i) {
    switch (g.dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(g.data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(g.data)[i]);
        default: return static_cast<const float*>(g.data)[i];
    }
}

#ifdef HB_TUNED_SIMD

template <typename T>
inline __m256 load_partial(const typename T::Storage* p, int64_t count) {
    float lanes[8] = {};
    for (int64_t i = 0; i < count; ++i) lanes[i] = T::to_float(p[i]);
    return _mm256_loadu_ps(lanes);
}

template <typename T>
inline void store_partial(typename T::Storage* p, __m256 v, int64_t count) {
    float lanes[8];
    _mm256_storeu_ps(lanes, v);
    for (int64_t i = 0; i < count; ++i) p[i] = T::from_float(lanes[i]);
}

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

template <typename T>
void rms_row(const typename T::Storage* x, const float* g, typename T::Storage* y, int64_t n, float epsilon) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256 a = T::load8(x + i), b = T::load8(x + i + 8), c = T::load8(x + i + 16), d = T::load8(x + i + 24);
        s0 = _mm256_fmadd_ps(a, a, s0);
        s1 = _mm256_fmadd_ps(b, b, s1);
        s2 = _mm256_fmadd_ps(c, c, s2);
        s3 = _mm256_fmadd_ps(d, d, s3);
    }
    for (; i + 8 <= n; i += 8) {
        const __m256 a = T::load8(x + i);
        s0 = _mm256_fmadd_ps(a, a, s0);
    }
    if (i < n) {
        const __m256 a = load_partial<T>(x + i, n - i);
        s1 = _mm256_fmadd_ps(a, a, s1);
    }
    const float sum = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    const __m256 scale = _mm256_set1_ps(1.0f / std::sqrt(sum / static_cast<float>(n) + epsilon));
    for (i = 0; i + 8 <= n; i += 8)
        T::store8(y + i, _mm256_mul_ps(_mm256_mul_ps(T::load8(x + i), scale), _mm256_loadu_ps(g + i)));
    if (i < n) {
        float lanes[8] = {};
        std::memcpy(lanes, g + i, static_cast<size_t>(n - i) * sizeof(float));
        store_partial<T>(y + i, _mm256_mul_ps(_mm256_mul_ps(load_partial<T>(x + i, n - i), scale), _mm256_loadu_ps(lanes)),
                         n - i);
    }
}

#else

template <typename T>
void rms_row(const typename T::Storage* x, const float* g, typename T::Storage* y, int64_t n, float epsilon) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float v = T::to_float(x[i]);
        sum += v * v;
    }
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(n) + epsilon);
    for (int64_t i = 0; i < n; ++i) y[i] = T::from_float(T::to_float(x[i]) * scale * g[i]);
}

#endif

template <hb_dtype D>
void rms_all(const hb_tensor& xt, const float* g, const hb_tensor& yt, int64_t rows, int64_t row, float epsilon,
             int threads) {
    using T = Dtype<D>;
    const auto* x = static_cast<const typename T::Storage*>(xt.data);
    auto* y = static_cast<typename T::Storage*>(yt.data);
#pragma omp parallel for schedule(static) num_threads(threads) if (rows > 1 && rows * row >= kParallelMinElements)
    for (int64_t r = 0; r < rows; ++r) rms_row<T>(x + r * row, g, y + r * row, row, epsilon);
}

bool is_float(hb_dtype t) { return t == HB_FLOAT32 || t == HB_FLOAT16 || t == HB_BFLOAT16; }

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* gamma_arg = hb_input(call, "gamma");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !gamma_arg || !y_arg || x_arg->count != 1 || gamma_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "rms_norm: expected inputs `x`, `gamma` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& gamma = gamma_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&gamma) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "rms_norm: only contiguous tensors are supported");
    if (!is_float(x.dtype) || !is_float(gamma.dtype) || y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "rms_norm: x, gamma must be float tensors and y must have x's dtype and shape");
    if (gamma.rank < 1 || gamma.rank > x.rank) return hb_fail(call, 2, "rms_norm: gamma must name trailing dims of x");
    for (int32_t d = 0; d < gamma.rank; ++d)
        if (gamma.shape[d] != x.shape[x.rank - gamma.rank + d])
            return hb_fail(call, 2, "rms_norm: gamma's shape must equal the trailing dims of x");
    const int64_t row = hb_numel(&gamma);
    if (row == 0 || hb_numel(&x) == 0) return 0;
    const int64_t rows = hb_numel(&x) / row;
    const auto epsilon = static_cast<float>(hb_attr_float(call, "epsilon", 1e-6));
    std::vector<float> g(static_cast<size_t>(row));
    for (int64_t i = 0; i < row; ++i) g[static_cast<size_t>(i)] = gamma_at(gamma, i);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: rms_all<HB_FLOAT32>(x, g.data(), y, rows, row, epsilon, threads); return 0;
        case HB_FLOAT16: rms_all<HB_FLOAT16>(x, g.data(), y, rows, row, epsilon, threads); return 0;
        default: rms_all<HB_BFLOAT16>(x, g.data(), y, rows, row, epsilon, threads); return 0;
    }
}
