// Tuned gelu: approximate="none": y = x * Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2;
// approximate="tanh": y = 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3);
// for float32, float16 and bfloat16. AVX2 + FMA with polynomial e^x and erfc (< 1e-6
// relative in fp32), F16C / bit-trick fp16 and bf16 conversion, OpenMP ranges split on
// 64-byte lines of y, and non-temporal stores for large outputs. Without AVX2, FMA and F16C
// the same file builds a scalar loop.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define HB_TUNED_SIMD 1
#endif

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

// ---- Threading ----------------------------------------------------------------------------

// Below this many elements per thread the fork costs more than it saves.
constexpr int64_t kMinElementsPerThread = 16384;
// Outputs at least this large bypass the caches: the harness starts every call cold, so a
// normal store would first read each output line from memory.
constexpr int64_t kStreamMinBytes = 1 << 20;

// Calls body(begin, end) once per thread with ranges of [0, n) whose inner boundaries fall on
// 64-byte lines of `out`, so no two threads write the same cache line.
template <typename Body>
void for_each_thread_range(const void* out, int64_t elem_bytes, int64_t n, int threads, Body body) {
    const int64_t useful = std::max<int64_t>(1, n / kMinElementsPerThread);
    const int team = static_cast<int>(std::min<int64_t>(std::max(threads, 1), useful));
    if (team <= 1) {
        body(int64_t{0}, n);
        return;
    }
    const int64_t line = 64 / elem_bytes;
    const auto address = reinterpret_cast<uintptr_t>(out);
    const int64_t head = address % elem_bytes ? 0 : std::min<int64_t>(n, (64 - address % 64) % 64 / elem_bytes);
    const int64_t lines = (n - head + line - 1) / line;
#pragma omp parallel num_threads(team)
    {
        const int t = omp_get_thread_num();
        const int count = omp_get_num_threads();
        const int64_t begin = t == 0 ? 0 : std::min(n, head + lines * t / count * line);
        const int64_t end = t == count - 1 ? n : std::min(n, head + lines * (t + 1) / count * line);
        if (begin < end) body(begin, end);
    }
}

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

[[maybe_unused]] float gelu_erf(float x) {
    if (x == -INFINITY) return 0.0f;
    return 0.5f * x * std::erfc(-x * 0.70710678118654752f);
}

[[maybe_unused]] float gelu_tanh(float x) {
    if (x == -INFINITY) return 0.0f;
    const float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return x / (1.0f + std::exp(-2.0f * u));
}

#ifdef HB_TUNED_SIMD

// ---- Vector math --------------------------------------------------------------------------

// e^(r + n ln2) = e^r 2^n for |r| <= ln2/2: e^r = 1 + r + r^2 Q(r) with Q a degree-4 fit
// (error 8e-9), and 2^n applied as two factors so that n from -159 to 128 needs no special
// case: n = 128 overflows to inf, n below -126 gives correctly rounded subnormals, then 0.
inline __m256 exp_reduced8(__m256 r, __m256i n) {
    __m256 q = _mm256_set1_ps(1.392617612e-3f);
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(8.363173075e-3f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(4.166655466e-2f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.666657703e-1f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.5f));
    const __m256 p = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(r, r), q, r), _mm256_set1_ps(1.0f));
    const __m256i n1 = _mm256_srai_epi32(n, 1);
    const __m256i n2 = _mm256_sub_epi32(n, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// e^x for 8 lanes, < 2 ulp: n = round(x / ln2), r = x - n ln2 with ln2 split in two so that
// n * high part is exact. Clamping to [-110, 89] keeps n in the range exp_reduced8 handles.
inline __m256 exp8(__m256 x) {
    // min/max return their second operand when one is NaN, so NaN survives the clamp.
    x = _mm256_max_ps(_mm256_set1_ps(-110.0f), _mm256_min_ps(_mm256_set1_ps(89.0f), x));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440054690583e-4f), r);
    return exp_reduced8(r, _mm256_cvtps_epi32(n));
}

// Argument reduction in fp64 for 4 lanes: for |arg| near 88 an fp32 argument alone carries a
// rounding error of 4e-6 relative into e^arg. Returns r = arg - n ln2 in fp32 and n.
inline __m128 reduce4(__m256d arg, __m128i* n_out) {
    // min/max return their second operand when one is NaN, so NaN survives the clamp.
    arg = _mm256_max_pd(_mm256_set1_pd(-110.0), _mm256_min_pd(_mm256_set1_pd(89.0), arg));
    const __m256d n = _mm256_round_pd(_mm256_mul_pd(arg, _mm256_set1_pd(1.4426950408889634)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    *n_out = _mm256_cvtpd_epi32(n);
    return _mm256_cvtpd_ps(_mm256_fnmadd_pd(n, _mm256_set1_pd(0.6931471805599453), arg));
}

// e^arg for 8 lanes whose arguments are given in fp64, 4 and 4.
inline __m256 exp_of_fp64_args8(__m256d arg_low, __m256d arg_high) {
    __m128i n_low, n_high;
    const __m128 r_low = reduce4(arg_low, &n_low);
    const __m128 r_high = reduce4(arg_high, &n_high);
    return exp_reduced8(_mm256_set_m128(r_high, r_low), _mm256_set_m128i(n_high, n_low));
}

// erfc(z) / 2 for z = |x| / sqrt 2 as t e^(-z^2 + P(t)) / 2 with t = 1 / (1 + z/2) and P a
// degree-9 fit of ln(erfc(z) / t) + z^2 on z in [0, 12] (error 6e-8). This keeps the relative
// error small far into the tail, where 1 + erf(x / sqrt 2) would cancel to 0. z^2 = x^2 / 2
// is carried as an exact high + low pair so that e^(-z^2) keeps its accuracy for large z.
inline __m256 half_erfc_of_abs8(__m256 x) {
    const __m256 ax = _mm256_min_ps(_mm256_set1_ps(17.0f), _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x));
    const __m256 z = _mm256_mul_ps(ax, _mm256_set1_ps(0.70710678118654752f));
    const __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(z, _mm256_set1_ps(0.5f), _mm256_set1_ps(1.0f)));
    __m256 p = _mm256_set1_ps(0.162216509f);
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.7735308569f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.371054795f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.9757168795f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.1454376762f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.11539792f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.07304037724f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.3788860683f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.9994990129f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.26548872f));
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 sq_hi = _mm256_mul_ps(ax, ax);
    const __m256 sq_lo = _mm256_fmsub_ps(ax, ax, sq_hi);  // exact rounding error of ax * ax
    const __m256 arg = _mm256_fnmadd_ps(sq_hi, half, _mm256_fnmadd_ps(sq_lo, half, p));
    return _mm256_mul_ps(_mm256_mul_ps(half, t), exp8(arg));
}

inline __m256 gelu_erf8(__m256 x) {
    const __m256 c = half_erfc_of_abs8(x);
    // Phi(x) = c for x < 0 and 1 - c otherwise; blendv selects on the sign bit of x.
    const __m256 phi = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), c), c, x);
    const __m256 y = _mm256_mul_ps(x, phi);
    // gelu(-inf) is 0 in the limit; -inf * 0 would give NaN.
    const __m256 minus_inf = _mm256_cmp_ps(x, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ);
    return _mm256_andnot_ps(minus_inf, y);
}

// -2u = x (c0 + c1 x^2) in fp64, for the same reason as reduce4: -2u reaches 90 while the
// result still matters.
inline __m256d minus_two_u4(__m128 x) {
    const __m256d xd = _mm256_cvtps_pd(x);
    const __m256d c0 = _mm256_set1_pd(-2.0 * 0.79788456080286536);
    const __m256d c1 = _mm256_set1_pd(-2.0 * 0.79788456080286536 * 0.044715);
    return _mm256_mul_pd(xd, _mm256_fmadd_pd(_mm256_mul_pd(xd, xd), c1, c0));
}

inline __m256 gelu_tanh8(__m256 x) {
    const __m256 e = exp_of_fp64_args8(minus_two_u4(_mm256_castps256_ps128(x)), minus_two_u4(_mm256_extractf128_ps(x, 1)));
    const __m256 y = _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    const __m256 minus_inf = _mm256_cmp_ps(x, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ);
    return _mm256_andnot_ps(minus_inf, y);
}

// ---- Loops --------------------------------------------------------------------------------

// Fewer than 8 elements: through a local buffer, so nothing is read or written past the end.
template <typename T, typename F>
void map_partial(const typename T::Storage* x, typename T::Storage* y, int64_t count, F f) {
    typename T::Storage in[8] = {};
    typename T::Storage out[8];
    std::memcpy(in, x, static_cast<size_t>(count) * sizeof in[0]);
    T::store8(out, f(T::load8(in)));
    std::memcpy(y, out, static_cast<size_t>(count) * sizeof out[0]);
}

template <typename T, typename F>
void map_range(const typename T::Storage* x, typename T::Storage* y, int64_t n, bool stream, F f) {
    using S = typename T::Storage;
    int64_t i = 0;
    const auto address = reinterpret_cast<uintptr_t>(y);
    if (stream && address % sizeof(S) == 0) {
        // Non-temporal stores need aligned addresses: peel up to the first aligned one.
        const int64_t head = std::min<int64_t>(n, (T::kStreamAlign - address % T::kStreamAlign) % T::kStreamAlign / sizeof(S));
        if (head > 0) map_partial<T>(x, y, head, f);
        for (i = head; i + 8 <= n; i += 8) T::stream8(y + i, f(T::load8(x + i)));
        _mm_sfence();  // make the streamed lines visible before the kernel returns
    } else {
        for (; i + 8 <= n; i += 8) T::store8(y + i, f(T::load8(x + i)));
    }
    if (i < n) map_partial<T>(x + i, y + i, n - i, f);
}

template <hb_dtype D>
void gelu_all(const hb_tensor& x, const hb_tensor& y, bool tanh_form, int threads) {
    using T = Dtype<D>;
    const auto* in = static_cast<const typename T::Storage*>(x.data);
    auto* out = static_cast<typename T::Storage*>(y.data);
    const int64_t n = hb_numel(&x);
    const bool stream = n * static_cast<int64_t>(sizeof(typename T::Storage)) >= kStreamMinBytes;
    const auto f = [tanh_form](__m256 v) { return tanh_form ? gelu_tanh8(v) : gelu_erf8(v); };
    for_each_thread_range(out, sizeof(typename T::Storage), n, threads, [&](int64_t begin, int64_t end) {
        map_range<T>(in + begin, out + begin, end - begin, stream, f);
    });
}

#else  // portable scalar path

template <hb_dtype D>
void gelu_all(const hb_tensor& x, const hb_tensor& y, bool tanh_form, int threads) {
    using T = Dtype<D>;
    const auto* in = static_cast<const typename T::Storage*>(x.data);
    auto* out = static_cast<typename T::Storage*>(y.data);
    for_each_thread_range(out, sizeof(typename T::Storage), hb_numel(&x), threads, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const float v = T::to_float(in[i]);
            out[i] = T::from_float(tanh_form ? gelu_tanh(v) : gelu_erf(v));
        }
    });
}

#endif

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "gelu: expected one input tensor x and one output tensor y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "gelu: y must have the dtype and element count of x");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "gelu: only contiguous tensors are supported");

    const char* approximate = hb_attr_string(call, "approximate", "none");
    const bool tanh_form = std::strcmp(approximate, "tanh") == 0;
    if (!tanh_form && std::strcmp(approximate, "none") != 0)
        return hb_fail(call, 4, "gelu: approximate must be \"none\" or \"tanh\"");
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: gelu_all<HB_FLOAT32>(x, y, tanh_form, threads); return 0;
        case HB_FLOAT16: gelu_all<HB_FLOAT16>(x, y, tanh_form, threads); return 0;
        case HB_BFLOAT16: gelu_all<HB_BFLOAT16>(x, y, tanh_form, threads); return 0;
        default: return hb_fail(call, 2, "gelu: x must be float32, float16 or bfloat16");
    }
}
