// Tuned softmax: y = e^(x - max) / sum(e^(x - max)) along `dim`, for float32, float16 and
// bfloat16, computing in fp32 and rounding once. A contiguous x is [outer, size, inner]
// around dim. Three shapes of work, all AVX2 + FMA with a polynomial e^x (< 2 ulp) and
// F16C / bit-trick fp16 and bf16 conversion:
//  - rows (inner == 1, size >= 32): one row per step; max, then e^(x - max) into a
//    thread-local fp32 row (it stays in L1/L2) and its sum, then the scaled store;
//  - long rows with fewer rows than threads: the threads share each row (partial max and
//    sum per thread, combined, then each writes its part);
//  - column blocks (inner >= 64): up to 512 neighbouring slices at a time, their rows
//    streamed front to back in three passes with the per-slice max and sum in L1; one
//    block per thread when there are enough blocks, else the threads share a block's rows
//    and combine their partial maxima and sums;
//  - panels (1 < inner < 64, or rows shorter than 32): 8 to 32 independent slices side by
//    side in vector lanes, walking the softmax axis; short rows are transposed into a
//    local panel first.
// NaN in a slice makes its max NaN and the whole slice NaN; a slice with +inf or only -inf
// is NaN too (inf - inf), as in torch. Without AVX2, FMA and F16C a scalar loop is built.
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

// Below this many elements the fork costs more than the threads save.
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


// ---- Pieces -------------------------------------------------------------------------------

// The first `count` (< 8) lanes, the rest -inf (neutral for the max; e^-inf adds 0).
template <typename T>
inline __m256 load_partial(const typename T::Storage* p, int64_t count) {
    float lanes[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (int64_t i = 0; i < count; ++i) lanes[i] = T::to_float(p[i]);
    return _mm256_loadu_ps(lanes);
}

template <typename T>
inline void store_partial(typename T::Storage* p, __m256 v, int64_t count) {
    float lanes[8];
    _mm256_storeu_ps(lanes, v);
    for (int64_t i = 0; i < count; ++i) p[i] = T::from_float(lanes[i]);
}

template <typename T>
inline __m256 load_n(const typename T::Storage* p, int64_t count) {
    return count >= 8 ? T::load8(p) : load_partial<T>(p, count);
}

template <typename T>
inline void store_n(typename T::Storage* p, __m256 v, int64_t count) {
    if (count >= 8) T::store8(p, v);
    else store_partial<T>(p, v, count);
}

inline float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// max_ps drops NaN, so NaN lanes are tracked on the side and win at the end.
inline __m256 nan_where(__m256 max, __m256 nan_lanes) { return _mm256_blendv_ps(max, _mm256_set1_ps(NAN), nan_lanes); }

// Max of x[begin, end) (NaN if any is NaN).
template <typename T>
float range_max(const typename T::Storage* x, int64_t n) {
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, nan = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = T::load8(x + i), b = T::load8(x + i + 8);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
        m0 = _mm256_max_ps(m0, a);
        m1 = _mm256_max_ps(m1, b);
    }
    for (; i < n; i += 8) {
        const __m256 a = load_n<T>(x + i, n - i);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
        m0 = _mm256_max_ps(m0, a);
    }
    if (_mm256_movemask_ps(nan)) return NAN;
    return hmax(_mm256_max_ps(m0, m1));
}

// Sum of e^(x - max) over x[0, n); writes the terms to e when it is not null.
template <typename T>
float range_exp_sum(const typename T::Storage* x, int64_t n, float max, float* e) {
    const __m256 m = _mm256_set1_ps(max);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = exp8(_mm256_sub_ps(T::load8(x + i), m));
        const __m256 b = exp8(_mm256_sub_ps(T::load8(x + i + 8), m));
        if (e) _mm256_storeu_ps(e + i, a), _mm256_storeu_ps(e + i + 8, b);
        s0 = _mm256_add_ps(s0, a);
        s1 = _mm256_add_ps(s1, b);
    }
    for (; i < n; i += 8) {
        const __m256 a = exp8(_mm256_sub_ps(load_n<T>(x + i, n - i), m));
        if (e) {
            float lanes[8];
            _mm256_storeu_ps(lanes, a);
            std::memcpy(e + i, lanes, static_cast<size_t>(std::min<int64_t>(8, n - i)) * sizeof(float));
        }
        s0 = _mm256_add_ps(s0, a);
    }
    return hsum(_mm256_add_ps(s0, s1));
}

// y[0, n) = e^(x - max) * scale, the exponential evaluated again.
template <typename T>
void range_write(const typename T::Storage* x, typename T::Storage* y, int64_t n, float max, float scale) {
    const __m256 m = _mm256_set1_ps(max), s = _mm256_set1_ps(scale);
    for (int64_t i = 0; i < n; i += 8)
        store_n<T>(y + i, _mm256_mul_ps(exp8(_mm256_sub_ps(load_n<T>(x + i, n - i), m)), s), n - i);
}

// ---- Rows (inner == 1) --------------------------------------------------------------------

template <typename T>
void softmax_rows(const typename T::Storage* x, typename T::Storage* y, int64_t rows, int64_t size, int threads) {
#pragma omp parallel num_threads(threads) if (rows * size >= kParallelMinElements)
    {
        std::vector<float> e(static_cast<size_t>(size));
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
            const auto* xr = x + r * size;
            auto* yr = y + r * size;
            const float max = range_max<T>(xr, size);
            const __m256 scale = _mm256_set1_ps(1.0f / range_exp_sum<T>(xr, size, max, e.data()));
            int64_t i = 0;
            for (; i + 8 <= size; i += 8) T::store8(yr + i, _mm256_mul_ps(_mm256_loadu_ps(e.data() + i), scale));
            if (i < size) {
                float lanes[8] = {};
                std::memcpy(lanes, e.data() + i, static_cast<size_t>(size - i) * sizeof(float));
                store_partial<T>(yr + i, _mm256_mul_ps(_mm256_loadu_ps(lanes), scale), size - i);
            }
        }
    }
}

// One long row shared by the team: per-thread max and sum, combined by rescaling each
// partial sum to the global max, then each thread writes its part.
template <typename T>
void softmax_long_row(const typename T::Storage* x, typename T::Storage* y, int64_t size, int threads) {
    std::vector<float> maxes(static_cast<size_t>(threads), -INFINITY), sums(static_cast<size_t>(threads), 0.0f);
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), count = omp_get_num_threads();
        const int64_t begin = size * t / count, end = size * (t + 1) / count;
        const float local_max = range_max<T>(x + begin, end - begin);
        maxes[static_cast<size_t>(t)] = local_max;
        sums[static_cast<size_t>(t)] = end > begin ? range_exp_sum<T>(x + begin, end - begin, local_max, nullptr) : 0.0f;
#pragma omp barrier
        float max = -INFINITY;
        bool nan = false;
        for (int k = 0; k < count; ++k) {
            nan = nan || std::isnan(maxes[static_cast<size_t>(k)]);
            max = std::max(max, maxes[static_cast<size_t>(k)]);
        }
        if (nan) max = NAN;
        float sum = 0.0f;
        // A part of only -inf adds nothing (its own sum is NaN: -inf - (-inf)); when every
        // part is -inf the sum stays 0 and the row comes out NaN, as it should.
        for (int k = 0; k < count; ++k)
            if (maxes[static_cast<size_t>(k)] != -INFINITY)
                sum += sums[static_cast<size_t>(k)] * std::exp(maxes[static_cast<size_t>(k)] - max);
        range_write<T>(x + begin, y + begin, end - begin, max, 1.0f / sum);
    }
}

// ---- Panels (1 < inner < 64, or short rows) -----------------------------------------------

constexpr int64_t kPanel = 32;  // lanes per panel: four vectors

// Softmax of `width` (<= kPanel) side-by-side slices: element k of lane i at p[k * stride + i].
// `e` (size * kPanel floats, or null) keeps the exponentials between the last two passes.
template <typename T>
void softmax_panel(const typename T::Storage* x, typename T::Storage* y, int64_t size, int64_t stride, int64_t width,
                   float* e) {
    const int vectors = static_cast<int>((width + 7) / 8);
    __m256 max[4], nan[4], sum[4];
    for (int v = 0; v < 4; ++v) max[v] = _mm256_set1_ps(-INFINITY), nan[v] = sum[v] = _mm256_setzero_ps();
    for (int64_t k = 0; k < size; ++k)
        for (int v = 0; v < vectors; ++v) {
            const __m256 a = load_n<T>(x + k * stride + 8 * v, width - 8 * v);
            nan[v] = _mm256_or_ps(nan[v], _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
            max[v] = _mm256_max_ps(max[v], a);
        }
    for (int v = 0; v < vectors; ++v) max[v] = nan_where(max[v], nan[v]);
    for (int64_t k = 0; k < size; ++k)
        for (int v = 0; v < vectors; ++v) {
            const __m256 a = exp8(_mm256_sub_ps(load_n<T>(x + k * stride + 8 * v, width - 8 * v), max[v]));
            if (e) _mm256_storeu_ps(e + k * kPanel + 8 * v, a);
            sum[v] = _mm256_add_ps(sum[v], a);
        }
    for (int v = 0; v < vectors; ++v) sum[v] = _mm256_div_ps(_mm256_set1_ps(1.0f), sum[v]);
    for (int64_t k = 0; k < size; ++k)
        for (int v = 0; v < vectors; ++v) {
            const __m256 a = e ? _mm256_loadu_ps(e + k * kPanel + 8 * v)
                               : exp8(_mm256_sub_ps(load_n<T>(x + k * stride + 8 * v, width - 8 * v), max[v]));
            store_n<T>(y + k * stride + 8 * v, _mm256_mul_ps(a, sum[v]), width - 8 * v);
        }
}

// Exponentials are kept between passes while a panel's share fits in L2.
constexpr int64_t kKeepMaxBytes = 512 * 1024;

template <typename T>
void softmax_inner(const typename T::Storage* x, typename T::Storage* y, int64_t outer, int64_t size, int64_t inner,
                   int threads) {
    const int64_t panels = (inner + kPanel - 1) / kPanel;
    const bool keep = size * kPanel * static_cast<int64_t>(sizeof(float)) <= kKeepMaxBytes;
#pragma omp parallel num_threads(threads) if (outer * size * inner >= kParallelMinElements && outer * panels > 1)
    {
        std::vector<float> e(keep ? static_cast<size_t>(size * kPanel) : 0);
#pragma omp for schedule(static)
        for (int64_t job = 0; job < outer * panels; ++job) {
            const int64_t o = job / panels, i0 = job % panels * kPanel;
            const int64_t at = o * size * inner + i0;
            softmax_panel<T>(x + at, y + at, size, inner, std::min(kPanel, inner - i0), keep ? e.data() : nullptr);
        }
    }
}

// ---- Column blocks (inner >= 64) ----------------------------------------------------------

// A slab [size, inner] is walked in blocks of up to kBlock neighbouring columns: each block
// streams its rows front to back three times (max, sum of e^(x - max), write) with the
// per-column max and sum in L1. Every row piece is at least 64 contiguous elements, which
// the prefetchers follow; 32-lane panels jump a whole row between loads (fp16 [75249, 251]
// over dim 0 took 2.5x longer that way).
constexpr int64_t kBlock = 512;
constexpr int64_t kBlockMinInner = 64;

// max[c] = max(max[c], x[k][c]) over rows [k0, k1); a NaN wins and stays.
template <typename T>
void block_max(const typename T::Storage* x, int64_t k0, int64_t k1, int64_t stride, int64_t width, float* max) {
    const int64_t vectors = (width + 7) / 8;
    for (int64_t k = k0; k < k1; ++k)
        for (int64_t v = 0; v < vectors; ++v) {
            const __m256 a = load_n<T>(x + k * stride + 8 * v, width - 8 * v);
            // max_ps(a, m) returns m when either is NaN: a NaN max stays, a NaN a is blended in.
            const __m256 m = _mm256_max_ps(a, _mm256_loadu_ps(max + 8 * v));
            _mm256_storeu_ps(max + 8 * v, _mm256_blendv_ps(m, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q)));
        }
}

// sum[c] += e^(x[k][c] - max[c]) over rows [k0, k1).
template <typename T>
void block_sum(const typename T::Storage* x, int64_t k0, int64_t k1, int64_t stride, int64_t width, const float* max,
               float* sum) {
    const int64_t vectors = (width + 7) / 8;
    for (int64_t k = k0; k < k1; ++k)
        for (int64_t v = 0; v < vectors; ++v) {
            const __m256 a = exp8(_mm256_sub_ps(load_n<T>(x + k * stride + 8 * v, width - 8 * v), _mm256_loadu_ps(max + 8 * v)));
            _mm256_storeu_ps(sum + 8 * v, _mm256_add_ps(_mm256_loadu_ps(sum + 8 * v), a));
        }
}

// y[k][c] = e^(x[k][c] - max[c]) * scale[c] over rows [k0, k1).
template <typename T>
void block_write(const typename T::Storage* x, typename T::Storage* y, int64_t k0, int64_t k1, int64_t stride,
                 int64_t width, const float* max, const float* scale) {
    const int64_t vectors = (width + 7) / 8;
    for (int64_t k = k0; k < k1; ++k)
        for (int64_t v = 0; v < vectors; ++v) {
            const __m256 a = exp8(_mm256_sub_ps(load_n<T>(x + k * stride + 8 * v, width - 8 * v), _mm256_loadu_ps(max + 8 * v)));
            store_n<T>(y + k * stride + 8 * v, _mm256_mul_ps(a, _mm256_loadu_ps(scale + 8 * v)), width - 8 * v);
        }
}

inline void fill(float* p, int64_t width, float value) {
    for (int64_t v = 0; v < (width + 7) / 8; ++v) _mm256_storeu_ps(p + 8 * v, _mm256_set1_ps(value));
}

inline void invert(float* p, int64_t width) {
    for (int64_t v = 0; v < (width + 7) / 8; ++v)
        _mm256_storeu_ps(p + 8 * v, _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_loadu_ps(p + 8 * v)));
}

// Enough blocks for every thread: each job is one block of one slab, on one thread.
template <typename T>
void softmax_block_jobs(const typename T::Storage* x, typename T::Storage* y, int64_t outer, int64_t size,
                        int64_t inner, int64_t blocks, int64_t width, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads) if (outer * size * inner >= kParallelMinElements && outer * blocks > 1)
    for (int64_t job = 0; job < outer * blocks; ++job) {
        alignas(32) float max[kBlock], sum[kBlock];
        const int64_t o = job / blocks, i0 = job % blocks * width, w = std::min(width, inner - i0);
        const auto* xb = x + o * size * inner + i0;
        fill(max, w, -INFINITY);
        fill(sum, w, 0.0f);
        block_max<T>(xb, 0, size, inner, w, max);
        block_sum<T>(xb, 0, size, inner, w, max, sum);
        invert(sum, w);
        block_write<T>(xb, y + o * size * inner + i0, 0, size, inner, w, max, sum);
    }
}

// Fewer blocks than threads: the team shares each block's rows, so that every thread streams
// one contiguous stretch of memory (threads that split a row's columns instead fetch each
// other's lines through the prefetchers: fp32 [18452, 256] over dim 0 ran 2x slower).
// Partial maxima and sums per thread are combined after each pass.
template <typename T>
void softmax_block_rows(const typename T::Storage* x, typename T::Storage* y, int64_t outer, int64_t size,
                        int64_t inner, int64_t blocks, int64_t width, int threads) {
    std::vector<float> partial(static_cast<size_t>(threads) * kBlock);
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), count = omp_get_num_threads();
        const int64_t k0 = size * t / count, k1 = size * (t + 1) / count;
        float* mine = partial.data() + static_cast<size_t>(t) * kBlock;
        alignas(32) float max[kBlock], scale[kBlock];
        for (int64_t job = 0; job < outer * blocks; ++job) {
            const int64_t o = job / blocks, i0 = job % blocks * width, w = std::min(width, inner - i0);
            const auto* xb = x + o * size * inner + i0;
            fill(mine, w, -INFINITY);
            block_max<T>(xb, k0, k1, inner, w, mine);
#pragma omp barrier
            fill(max, w, -INFINITY);
            for (int u = 0; u < count; ++u) block_max<Dtype<HB_FLOAT32>>(partial.data() + static_cast<size_t>(u) * kBlock, 0, 1, 0, w, max);
#pragma omp barrier
            fill(mine, w, 0.0f);
            block_sum<T>(xb, k0, k1, inner, w, max, mine);
#pragma omp barrier
            fill(scale, w, 0.0f);
            for (int u = 0; u < count; ++u)
                for (int64_t v = 0; v < (w + 7) / 8; ++v)
                    _mm256_storeu_ps(scale + 8 * v, _mm256_add_ps(_mm256_loadu_ps(scale + 8 * v),
                                                                  _mm256_loadu_ps(partial.data() + static_cast<size_t>(u) * kBlock + 8 * v)));
            invert(scale, w);
            block_write<T>(xb, y + o * size * inner + i0, k0, k1, inner, w, max, scale);
#pragma omp barrier
        }
    }
}

template <typename T>
void softmax_blocks(const typename T::Storage* x, typename T::Storage* y, int64_t outer, int64_t size, int64_t inner,
                    int threads) {
    // Blocks of equal width (a multiple of 8, at most kBlock) covering the inner dim.
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    const int64_t width = ((inner + blocks - 1) / blocks + 7) / 8 * 8;
    if (outer * blocks >= threads || outer * size * inner < kParallelMinElements || size < 2 * threads)
        return softmax_block_jobs<T>(x, y, outer, size, inner, blocks, width, threads);
    softmax_block_rows<T>(x, y, outer, size, inner, blocks, width, threads);
}

// Rows shorter than 32: eight rows at a time are transposed into an fp32 panel (lane = row),
// normalized there and transposed back.
template <typename T>
void softmax_short_rows(const typename T::Storage* x, typename T::Storage* y, int64_t rows, int64_t size, int threads) {
    using F = Dtype<HB_FLOAT32>;
    const int64_t groups = (rows + 7) / 8;
#pragma omp parallel for schedule(static) num_threads(threads) if (rows * size >= kParallelMinElements)
    for (int64_t g = 0; g < groups; ++g) {
        const int64_t r0 = g * 8, width = std::min<int64_t>(8, rows - r0);
        float panel[32 * 8], e[32 * kPanel];
        for (int64_t r = 0; r < width; ++r)
            for (int64_t k = 0; k < size; ++k) panel[k * 8 + r] = T::to_float(x[(r0 + r) * size + k]);
        softmax_panel<F>(panel, panel, size, 8, width, e);
        for (int64_t r = 0; r < width; ++r)
            for (int64_t k = 0; k < size; ++k) y[(r0 + r) * size + k] = T::from_float(panel[k * 8 + r]);
    }
}

template <hb_dtype D>
void softmax_all(const hb_tensor& xt, const hb_tensor& yt, int64_t outer, int64_t size, int64_t inner, int threads) {
    using T = Dtype<D>;
    const auto* x = static_cast<const typename T::Storage*>(xt.data);
    auto* y = static_cast<typename T::Storage*>(yt.data);
    if (inner >= kBlockMinInner) return softmax_blocks<T>(x, y, outer, size, inner, threads);
    if (inner > 1) return softmax_inner<T>(x, y, outer, size, inner, threads);
    if (size < 32) return softmax_short_rows<T>(x, y, outer, size, threads);
    if (outer < threads && size >= 65536 && threads > 1) {
        for (int64_t r = 0; r < outer; ++r) softmax_long_row<T>(x + r * size, y + r * size, size, threads);
        return;
    }
    softmax_rows<T>(x, y, outer, size, threads);
}

#else  // portable scalar path

template <hb_dtype D>
void softmax_all(const hb_tensor& xt, const hb_tensor& yt, int64_t outer, int64_t size, int64_t inner, int threads) {
    using T = Dtype<D>;
    const auto* x = static_cast<const typename T::Storage*>(xt.data);
    auto* y = static_cast<typename T::Storage*>(yt.data);
#pragma omp parallel for schedule(static) num_threads(threads) if (outer * size * inner >= kParallelMinElements)
    for (int64_t s = 0; s < outer * inner; ++s) {
        const int64_t base = s / inner * size * inner + s % inner;
        float max = -INFINITY;
        for (int64_t k = 0; k < size; ++k) {
            const float v = T::to_float(x[base + k * inner]);
            if (v != v || v > max) max = v;
        }
        float sum = 0.0f;
        for (int64_t k = 0; k < size; ++k) sum += std::exp(T::to_float(x[base + k * inner]) - max);
        for (int64_t k = 0; k < size; ++k)
            y[base + k * inner] = T::from_float(std::exp(T::to_float(x[base + k * inner]) - max) / sum);
    }
}

#endif

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "softmax: expected one input tensor `x` and one output tensor `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "softmax: only contiguous tensors are supported");
    if (y.dtype != x.dtype || hb_numel(&y) != hb_numel(&x))
        return hb_fail(call, 2, "softmax: y must have x's dtype and shape");
    int64_t dim = hb_attr_int(call, "dim", -1);
    if (dim < 0) dim += x.rank;
    if (x.rank < 1 || dim < 0 || dim >= x.rank) return hb_fail(call, 4, "softmax: dim is out of range for x's rank");

    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < dim; ++d) outer *= x.shape[d];
    for (int32_t d = static_cast<int32_t>(dim) + 1; d < x.rank; ++d) inner *= x.shape[d];
    const int64_t size = x.shape[dim];
    if (outer * size * inner == 0) return 0;

    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: softmax_all<HB_FLOAT32>(x, y, outer, size, inner, threads); return 0;
        case HB_FLOAT16: softmax_all<HB_FLOAT16>(x, y, outer, size, inner, threads); return 0;
        case HB_BFLOAT16: softmax_all<HB_BFLOAT16>(x, y, outer, size, inner, threads); return 0;
        default: return hb_fail(call, 2, "softmax: x must be float32, float16 or bfloat16");
    }
}
