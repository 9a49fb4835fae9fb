// Tuned moe_gating_top_k_softmax: x seen as R rows of E logits; per row, in fp32,
//   p = e^(x - max) / sum;  the k experts with the largest logits (NaN above +inf, equal
//   logits by the lower index: softmax keeps the order of x, so ranking x is ranking p
//   exactly, where probabilities rounded to fp32 would tie);  y = their p, expert_idx =
//   the experts (E for a finished row), row_idx[r, j] = j * R + r.
// e^x is a degree-6 polynomial after range reduction (under 1e-7 relative error, 0 below
// -87, NaN kept); a logit's order key is its float's bits made monotone as an int32 (-0 as
// +0, NaN above all). Two schedules, both with OpenMP over rows:
//  - k <= 32 (the usual gating): 8 rows at a time, one row per lane. The group is transposed
//    to expert-major columns, so the max, the keys, e^(x - max) and the sum are vertical
//    vector operations whatever E is, and the top k are kept by an insertion network of k
//    registers per lane (on AVX-512 one int64 key|~index max and min per step; on AVX2 a
//    key compare with an index tie-break and blends). A column that ranks before no lane's
//    k-th entry is skipped.
//  - larger k: per row, keys and exponentials in 8-lane steps; where k is under a quarter of E
//    the top k are kept sorted and a vector compare against the k-th key skips every group
//    of 8 logits with no candidate; otherwise a selection and a sort of the composites.
// Without AVX2, FMA and F16C the same file builds a scalar loop.
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define HB_TUNED_SIMD 1
#endif

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

constexpr int64_t kParallelMinElements = 16384;

float load_scalar(hb_dtype t, const void* p, int64_t i) {
    switch (t) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(p)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
        default: return static_cast<const float*>(p)[i];
    }
}

void store_scalar(hb_dtype t, void* p, int64_t i, float v) {
    switch (t) {
        case HB_FLOAT16: static_cast<uint16_t*>(p)[i] = hb_f32_to_f16(v); break;
        case HB_BFLOAT16: static_cast<uint16_t*>(p)[i] = hb_f32_to_bf16(v); break;
        default: static_cast<float*>(p)[i] = v; break;
    }
}

// Monotone int32 key of a logit: larger logit, larger key; -0 and +0 equal; NaN largest.
int32_t order_key(float x) {
    if (x != x) return INT32_MAX;
    int32_t b;
    const float canonical = x + 0.0f;  // -0 + 0 = +0
    std::memcpy(&b, &canonical, sizeof b);
    return b ^ ((b >> 31) & 0x7fffffff);
}

// Key and index in one number: larger first, and among equal keys the lower index first.
uint64_t composite(int32_t key, int64_t index) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(key) ^ 0x80000000u) << 32) |
           (0xffffffffu - static_cast<uint32_t>(index));
}
int64_t index_of(uint64_t c) { return 0xffffffffu - static_cast<uint32_t>(c & 0xffffffffu); }

// The k largest composites of keys[0, n), sorted descending, into best[0, k) (room for n).
// Where k is a large share of n, most logits would be inserted one by one: a selection of
// all n composites and a sort of the first k cost less.
void select_top(const int32_t* keys, int64_t n, int64_t k, uint64_t* best) {
    const auto larger = [](uint64_t a, uint64_t b) { return a > b; };
    if (4 * k >= n) {
        for (int64_t i = 0; i < n; ++i) best[i] = composite(keys[i], i);
        if (k < n) std::nth_element(best, best + k, best + n, larger);
        std::sort(best, best + k, larger);
        return;
    }
    for (int64_t i = 0; i < k; ++i) best[i] = composite(keys[i], i);
    std::sort(best, best + k, larger);
    int32_t threshold = static_cast<int32_t>((best[k - 1] >> 32) ^ 0x80000000u);
    auto insert = [&](int64_t i) {
        const uint64_t c = composite(keys[i], i);
        if (c <= best[k - 1]) return;
        int64_t p = std::upper_bound(best, best + k, c, [](uint64_t v, uint64_t e) { return v > e; }) - best;
        std::memmove(best + p + 1, best + p, static_cast<size_t>(k - 1 - p) * sizeof(uint64_t));
        best[p] = c;
        threshold = static_cast<int32_t>((best[k - 1] >> 32) ^ 0x80000000u);
    };
    int64_t i = k;
#ifdef HB_TUNED_SIMD
    // A later logit with a key equal to the k-th one loses the tie (higher index), so only
    // keys above the threshold are candidates.
    for (; i + 8 <= n; i += 8) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys + i));
        int mask = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(v, _mm256_set1_epi32(threshold))));
        while (mask) {
            const int j = __builtin_ctz(static_cast<unsigned>(mask));
            mask &= mask - 1;
            insert(i + j);
        }
    }
#endif
    for (; i < n; ++i)
        if (keys[i] > threshold) insert(i);
}

#ifdef HB_TUNED_SIMD

// e^x for x <= 0 (or NaN): 2^n * e^r with n = round(x log2 e), |r| <= ln2 / 2, a degree-6
// Taylor polynomial (relative error < 1.2e-7); 0 below -87; NaN kept.
inline __m256 exp_nonpositive(__m256 x) {
    const __m256 nan_mask = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    const __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
    const __m256 t = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), t);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    const __m256 e = _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
    return _mm256_blendv_ps(e, x, nan_mask);
}

inline __m256i order_keys8(__m256 x) {
    const __m256 canonical = _mm256_add_ps(x, _mm256_setzero_ps());
    const __m256i b = _mm256_castps_si256(canonical);
    const __m256i key = _mm256_xor_si256(b, _mm256_and_si256(_mm256_srai_epi32(b, 31), _mm256_set1_epi32(0x7fffffff)));
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return _mm256_blendv_epi8(key, _mm256_set1_epi32(INT32_MAX), is_nan);
}

inline __m256 load8(hb_dtype t, const void* p, int64_t i) {
    switch (t) {
        case HB_FLOAT16:
            return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(p) + i)));
        case HB_BFLOAT16: {
            const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(p) + i));
            return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
        }
        default: return _mm256_loadu_ps(static_cast<const float*>(p) + i);
    }
}

// fp32 -> fp16 (F16C, nearest even) and bf16 (nearest even, NaN kept quiet), 8 lanes.
inline __m128i pack8_f16(__m256 v) { return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline __m128i pack8_bf16(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i top = _mm256_srli_epi32(bits, 16);
    const __m256i bias = _mm256_add_epi32(_mm256_and_si256(top, _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7fff));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
    const __m256i quiet = _mm256_or_si256(top, _mm256_set1_epi32(0x40));
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i halves = _mm256_blendv_epi8(rounded, quiet, is_nan);
    return _mm_packus_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
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

// Widens a row into xf, its keys into keys, e^(x - max) into e; returns the sum.
float row_pass(hb_dtype t, const void* x, int64_t n, float* xf, int32_t* keys, float* e) {
    __m256 max8 = _mm256_set1_ps(-INFINITY), nan8 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = load8(t, x, i);
        _mm256_storeu_ps(xf + i, v);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(keys + i), order_keys8(v));
        nan8 = _mm256_or_ps(nan8, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        max8 = _mm256_max_ps(max8, v);
    }
    float max = hmax(max8);
    bool nan = _mm256_movemask_ps(nan8) != 0;
    for (; i < n; ++i) {
        xf[i] = load_scalar(t, x, i);
        keys[i] = order_key(xf[i]);
        nan |= xf[i] != xf[i];
        max = xf[i] > max ? xf[i] : max;
    }
    if (nan) max = NAN;
    const __m256 m8 = _mm256_set1_ps(max);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    for (i = 0; i + 16 <= n; i += 16) {
        const __m256 a = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(xf + i), m8));
        const __m256 b = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(xf + i + 8), m8));
        _mm256_storeu_ps(e + i, a);
        _mm256_storeu_ps(e + i + 8, b);
        s0 = _mm256_add_ps(s0, a);
        s1 = _mm256_add_ps(s1, b);
    }
    float sum = hsum(_mm256_add_ps(s0, s1));
    for (; i < n; ++i) {
        e[i] = std::exp(xf[i] - max);
        sum += e[i];
    }
    return sum;
}

// Up to kNetworkMaxK chosen experts per row: 8 rows at a time, one row per lane. The group is
// transposed into [E][8] (expert-major), so the max, the order keys, e^(x - max) and the sum
// are vertical vector operations whatever E is, and the top k are kept by an insertion
// network of k sorted key/index registers per lane: each expert column is compared down the
// network (a lane takes it where it ranks before the entry: a larger key, or an equal key
// with a lower index), and a column that ranks before no lane's k-th entry is skipped.
constexpr int64_t kNetworkMaxK = 32;

// Per-thread buffers of E columns of 8 lanes, 32-byte aligned.
struct GroupBuffers {
    std::vector<float> x_storage;    // the logits, then e^(x - max)
    std::vector<int32_t> key_storage;  // the order keys
    float* x;
    int32_t* key;
    __m256i best_key[kNetworkMaxK], best_idx[kNetworkMaxK];
    explicit GroupBuffers(int64_t experts)
        : x_storage(static_cast<size_t>(experts * 8 + 8)), key_storage(static_cast<size_t>(experts * 8 + 8)) {
        x = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(x_storage.data()) + 31) & ~uintptr_t{31});
        key = reinterpret_cast<int32_t*>((reinterpret_cast<uintptr_t>(key_storage.data()) + 31) & ~uintptr_t{31});
    }
    __m256 column(int64_t j) const { return _mm256_load_ps(x + j * 8); }
    void set_column(int64_t j, __m256 v) { _mm256_store_ps(x + j * 8, v); }
    __m256i keys(int64_t j) const { return _mm256_load_si256(reinterpret_cast<const __m256i*>(key + j * 8)); }
    void set_keys(int64_t j, __m256i v) { _mm256_store_si256(reinterpret_cast<__m256i*>(key + j * 8), v); }
};

// 8 rows x 8 experts in registers: 8 loads, 24 shuffles, 8 column stores.
inline void transpose8(__m256 r[8], float* out) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_store_ps(out + 0, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_store_ps(out + 8, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_store_ps(out + 16, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_store_ps(out + 24, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_store_ps(out + 32, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_store_ps(out + 40, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_store_ps(out + 48, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_store_ps(out + 56, _mm256_permute2f128_ps(u3, u7, 0x31));
}

void transpose_in(hb_dtype t, const void* x, int64_t first_row, int lanes, int64_t experts, float* xt) {
    int64_t done = 0;
    if (lanes == 8) {
        for (; done + 8 <= experts; done += 8) {
            __m256 r[8];
            for (int l = 0; l < 8; ++l) r[l] = load8(t, x, (first_row + l) * experts + done);
            transpose8(r, xt + done * 8);
        }
    }
    for (int l = 0; l < 8; ++l) {
        if (l >= lanes) {
            for (int64_t j = done; j < experts; ++j) xt[j * 8 + l] = 0.0f;
            continue;
        }
        const int64_t base = (first_row + l) * experts;
        int64_t j = done;
        alignas(32) float lane[8];
        for (; j + 8 <= experts; j += 8) {
            _mm256_store_ps(lane, load8(t, x, base + j));
            for (int q = 0; q < 8; ++q) xt[(j + q) * 8 + l] = lane[q];
        }
        for (; j < experts; ++j) xt[j * 8 + l] = load_scalar(t, x, base + j);
    }
}

// K is k as a constant, so the network lives in registers.
template <int K>
void run_group(hb_dtype t, const void* x, int64_t first_row, int lanes, int64_t experts, int64_t rows,
               const uint8_t* finished, void* y, int32_t* expert_idx, int32_t* row_idx, GroupBuffers& g) {
    constexpr int64_t k = K;
    float* xt = g.x;
    transpose_in(t, x, first_row, lanes, experts, xt);
    __m256 max8 = _mm256_set1_ps(-INFINITY), nan8 = _mm256_setzero_ps();
    for (int64_t j = 0; j < experts; ++j) {
        const __m256 v = g.column(j);
        g.set_keys(j, order_keys8(v));
        nan8 = _mm256_or_ps(nan8, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        max8 = _mm256_max_ps(max8, v);
    }
    max8 = _mm256_blendv_ps(max8, _mm256_set1_ps(NAN), nan8);
    __m256 sum = _mm256_setzero_ps();
    for (int64_t j = 0; j < experts; ++j) {
        const __m256 e = exp_nonpositive(_mm256_sub_ps(g.column(j), max8));
        g.set_column(j, e);
        sum = _mm256_add_ps(sum, e);
    }
#ifdef __AVX512F__
    // Key and index as one int64 (key << 32 | ~index): larger first, ties to the lower index,
    // all distinct, so the network is a max and a min per step.
    __m512i best[K];
    for (int64_t p = 0; p < k; ++p) best[p] = _mm512_set1_epi64(INT64_MIN);
    for (int64_t j = 0; j < experts; ++j) {
        __m512i v = _mm512_or_si512(_mm512_slli_epi64(_mm512_cvtepi32_epi64(g.keys(j)), 32),
                                    _mm512_set1_epi64(static_cast<int64_t>(~static_cast<uint32_t>(j))));
        if (_mm512_cmpgt_epi64_mask(v, best[k - 1]) == 0) continue;
        for (int64_t p = 0; p < k; ++p) {
            const __m512i b = best[p];
            best[p] = _mm512_max_epi64(b, v);
            v = _mm512_min_epi64(b, v);
        }
    }
    for (int64_t p = 0; p < k; ++p)
        g.best_idx[p] = _mm256_xor_si256(_mm512_cvtepi64_epi32(best[p]), _mm256_set1_epi32(-1));
#else
    for (int64_t p = 0; p < k; ++p) {
        g.best_key[p] = _mm256_set1_epi32(INT32_MIN);  // below every key (-inf's is 0x807fffff)
        g.best_idx[p] = _mm256_setzero_si256();
    }
    for (int64_t j = 0; j < experts; ++j) {
        __m256i v = g.keys(j);
        if (_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(v, g.best_key[k - 1]))) == 0) continue;
        __m256i vi = _mm256_set1_epi32(static_cast<int32_t>(j));
        for (int64_t p = 0; p < k; ++p) {
            const __m256i bk = g.best_key[p], bi = g.best_idx[p];
            const __m256i before = _mm256_or_si256(_mm256_cmpgt_epi32(v, bk),
                                                   _mm256_and_si256(_mm256_cmpeq_epi32(v, bk), _mm256_cmpgt_epi32(bi, vi)));
            g.best_key[p] = _mm256_blendv_epi8(bk, v, before);
            g.best_idx[p] = _mm256_blendv_epi8(bi, vi, before);
            v = _mm256_blendv_epi8(v, bk, before);
            vi = _mm256_blendv_epi8(vi, bi, before);
        }
    }
#endif
    // y per slot for 8 lanes at once (gather, divide, narrow), then each row's k values copied
    // out; expert_idx and row_idx likewise.
    const __m256i lane_offset = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    alignas(32) float out_f32[K][8];
    alignas(32) uint16_t out_half[K][8];
    alignas(32) int32_t out_idx[K][8];
    for (int64_t p = 0; p < k; ++p) {
        const __m256i at = _mm256_add_epi32(_mm256_slli_epi32(g.best_idx[p], 3), lane_offset);
        const __m256 yv = _mm256_div_ps(_mm256_i32gather_ps(xt, at, 4), sum);
        if (t == HB_FLOAT32) _mm256_store_ps(out_f32[p], yv);
        else _mm_store_si128(reinterpret_cast<__m128i*>(out_half[p]), t == HB_FLOAT16 ? pack8_f16(yv) : pack8_bf16(yv));
        _mm256_store_si256(reinterpret_cast<__m256i*>(out_idx[p]), g.best_idx[p]);
    }
    for (int l = 0; l < lanes; ++l) {
        const int64_t r = first_row + l;
        const bool done = finished && finished[r] != 0;
        if (t == HB_FLOAT32) {
            float* yr = static_cast<float*>(y) + r * k;
            for (int64_t p = 0; p < k; ++p) yr[p] = out_f32[p][l];
        } else {
            uint16_t* yr = static_cast<uint16_t*>(y) + r * k;
            for (int64_t p = 0; p < k; ++p) yr[p] = out_half[p][l];
        }
        int32_t* er = expert_idx + r * k;
        int32_t* rr = row_idx + r * k;
        for (int64_t p = 0; p < k; ++p) {
            er[p] = done ? static_cast<int32_t>(experts) : out_idx[p][l];
            rr[p] = static_cast<int32_t>(p * rows + r);
        }
    }
}

template <int... Ks>
void dispatch_k(std::integer_sequence<int, Ks...>, int64_t k, hb_dtype t, const void* x, int64_t first_row, int lanes,
                int64_t experts, int64_t rows, const uint8_t* finished, void* y, int32_t* expert_idx, int32_t* row_idx,
                GroupBuffers& g) {
    ((k == Ks + 1 ? run_group<Ks + 1>(t, x, first_row, lanes, experts, rows, finished, y, expert_idx, row_idx, g)
                  : void()),
     ...);
}

void run_group_k(int64_t k, hb_dtype t, const void* x, int64_t first_row, int lanes, int64_t experts, int64_t rows,
                 const uint8_t* finished, void* y, int32_t* expert_idx, int32_t* row_idx, GroupBuffers& g) {
    dispatch_k(std::make_integer_sequence<int, kNetworkMaxK>{}, k, t, x, first_row, lanes, experts, rows, finished, y,
               expert_idx, row_idx, g);
}

#else

float row_pass(hb_dtype t, const void* x, int64_t n, float* xf, int32_t* keys, float* e) {
    float max = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
        xf[i] = load_scalar(t, x, i);
        keys[i] = order_key(xf[i]);
        nan |= xf[i] != xf[i];
        max = xf[i] > max ? xf[i] : max;
    }
    if (nan) max = NAN;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        e[i] = std::exp(xf[i] - max);
        sum += e[i];
    }
    return sum;
}

#endif

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* finished_arg = hb_input(call, "finished");
    const hb_arg* y_arg = hb_output(call, "y");
    const hb_arg* idx_arg = hb_output(call, "expert_idx");
    const hb_arg* row_arg = hb_output(call, "row_idx");
    if (!x_arg || !y_arg || !idx_arg || !row_arg)
        return hb_fail(call, 1, "moe_gating_top_k_softmax: expected input x and outputs y, expert_idx, row_idx");
    const hb_tensor& x = x_arg->tensors[0];
    if (x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16 && x.dtype != HB_FLOAT32)
        return hb_fail(call, 2, "moe_gating_top_k_softmax: x must be float16, bfloat16 or float32");
    if (!hb_is_contiguous(&x)) return hb_fail(call, 3, "moe_gating_top_k_softmax: only contiguous tensors are supported");
    const int64_t experts = x.shape[x.rank - 1];
    const int64_t rows = experts ? hb_numel(&x) / experts : 0;
    const int64_t k = hb_attr_int(call, "k", 1);
    if (k < 1 || k > experts) return hb_fail(call, 2, "moe_gating_top_k_softmax: k must be in [1, E]");
    const auto* finished = finished_arg && finished_arg->present
                               ? static_cast<const uint8_t*>(finished_arg->tensors[0].data)
                               : nullptr;
    void* y = y_arg->tensors[0].data;
    auto* expert_idx = static_cast<int32_t*>(idx_arg->tensors[0].data);
    auto* row_idx = static_cast<int32_t*>(row_arg->tensors[0].data);
    const size_t element = x.dtype == HB_FLOAT32 ? 4 : 2;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#ifdef HB_TUNED_SIMD
    if (k <= kNetworkMaxK) {
        const int64_t groups = (rows + 7) / 8;
#pragma omp parallel num_threads(threads) if (groups > 1 && rows * experts >= kParallelMinElements)
        {
            GroupBuffers buffers(experts);
#pragma omp for schedule(static)
            for (int64_t g = 0; g < groups; ++g) {
                const int lanes = static_cast<int>(std::min<int64_t>(8, rows - g * 8));
                run_group_k(k, x.dtype, x.data, g * 8, lanes, experts, rows, finished, y, expert_idx, row_idx, buffers);
            }
        }
        return 0;
    }
#endif
#pragma omp parallel num_threads(threads) if (rows > 1 && rows * experts >= kParallelMinElements)
    {
        std::vector<float> xf(static_cast<size_t>(experts)), e(static_cast<size_t>(experts));
        std::vector<int32_t> keys(static_cast<size_t>(experts));
        std::vector<uint64_t> best(static_cast<size_t>(experts));
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
            const void* xr = static_cast<const char*>(x.data) + static_cast<size_t>(r * experts) * element;
            const float sum = row_pass(x.dtype, xr, experts, xf.data(), keys.data(), e.data());
            select_top(keys.data(), experts, k, best.data());
            const bool done = finished && finished[r] != 0;
            for (int64_t j = 0; j < k; ++j) {
                const int64_t ex = index_of(best[static_cast<size_t>(j)]);
                store_scalar(x.dtype, y, r * k + j, e[static_cast<size_t>(ex)] / sum);
                expert_idx[r * k + j] = static_cast<int32_t>(done ? experts : ex);
                row_idx[r * k + j] = static_cast<int32_t>(j * rows + r);
            }
        }
    }
    return 0;
}
