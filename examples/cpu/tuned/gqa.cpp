// Tuned gqa, and mha (tuned/mha.cpp links here: MHA is the case G = 1): blocked attention with
// an online softmax that never writes the score matrix to memory.
//
// A task is up to 8 query rows of one (batch, KV head), taken from its G query heads' positions
// (row r = g * S + i), so every key and value row it loads serves all of them. It walks the keys
// the rows may see in blocks of 32: the block's keys are widened to fp32 into a transposed
// L1 tile [D][32] and its values into [32][D]; a register-blocked AVX-512 kernel computes the
// 8 x 32 scores (two zmm accumulators per row, the query value broadcast); masked scores become
// -inf; each row's running maximum, exponentials (a Cephes-style polynomial with scalef) and
// running sum are updated, its output accumulator rescaled, and a second register-blocked
// kernel adds P V (4 rows x 64 columns per pass). The accumulators stay in an L1 buffer of
// 8 x D floats; y = O / l is rounded once to the output dtype. OpenMP over tasks.
//
// The operator's semantics, kept exactly: scores are (q . k) * scale; a NaN score makes its row
// NaN, a +inf one too (inf - inf); a row whose maximum is -inf, or that sees no key, is 0. A
// masked key takes no part: its score is replaced before the maximum, and when a value block
// holds inf or NaN the rows multiply only their allowed keys (with finite values a masked key's
// zero weight adds exactly 0, so the vector kernel runs the whole block). Without AVX-512 the
// same blocked algorithm runs in plain loops.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

constexpr int64_t kRows = 8;   // query rows per task
constexpr int64_t kKeys = 32;  // keys per block

struct Attention {
    const uint16_t *q = nullptr, *k = nullptr, *v = nullptr;
    uint16_t* y = nullptr;
    bool f16 = true;
    int64_t batch = 1, s = 1, skv = 1, heads = 1, kv_heads = 1, d = 1, group = 1;
    int64_t dp = 16;  // D rounded up to 16 (value and output rows)
    float scale = 1;
    bool causal = false;
};

inline float to_f32(uint16_t h, bool f16) {
#if defined(__F16C__)
    if (f16) return _cvtsh_ss(h);
#endif
    return f16 ? hb_f16_to_f32(h) : hb_bf16_to_f32(h);
}

inline uint16_t from_f32(float x, bool f16) {
#if defined(__F16C__)
    if (f16) return static_cast<uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
#endif
    return f16 ? hb_f32_to_f16(x) : hb_f32_to_bf16(x);
}

// n half values into fp32 (dst has room for a multiple of 16).
inline void widen(const uint16_t* src, int64_t n, bool f16, float* dst) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
        const __m512 f = f16 ? _mm512_cvtph_ps(h) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
        _mm512_storeu_ps(dst + i, f);
    }
#endif
    for (; i < n; ++i) dst[i] = to_f32(src[i], f16);
}

// True when some of the n half values is inf or NaN.
inline bool any_nonfinite(const uint16_t* src, int64_t n, bool f16) {
    const uint16_t exponent = f16 ? 0x7c00 : 0x7f80;
    bool found = false;
    for (int64_t i = 0; i < n; ++i) found |= (src[i] & exponent) == exponent;
    return found;
}

#if defined(__AVX512F__)

// e^x for x <= 0 or NaN (the shifted scores): Cephes' single-precision polynomial on
// x - n ln 2, scaled by 2^n with scalef (denormals included); exactly 0 below -103.9 (and for
// -inf), NaN stays NaN (vmaxps/vminps return their second operand when it is NaN).
inline __m512 exp_ps(__m512 x) {
    const __m512 clamped = _mm512_min_ps(_mm512_set1_ps(88.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), clamped);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512 e = _mm512_scalef_ps(p, n);
    return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, _mm512_set1_ps(-103.9f), _CMP_LT_OQ), _mm512_setzero_ps());
}

// scores[r][0..31] = (q_r . k_c) * scale for R rows against the transposed key tile.
template <int R>
void block_scores(const float* q, int64_t d, const float* kt, float scale, float* scores) {
    __m512 acc[R][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int64_t e = 0; e < d; ++e) {
        const __m512 k0 = _mm512_loadu_ps(kt + e * kKeys), k1 = _mm512_loadu_ps(kt + e * kKeys + 16);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const __m512 qv = _mm512_set1_ps(q[r * d + e]);
            acc[r][0] = _mm512_fmadd_ps(qv, k0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(qv, k1, acc[r][1]);
        }
    }
    const __m512 sv = _mm512_set1_ps(scale);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        _mm512_storeu_ps(scores + r * kKeys, _mm512_mul_ps(acc[r][0], sv));
        _mm512_storeu_ps(scores + r * kKeys + 16, _mm512_mul_ps(acc[r][1], sv));
    }
}

// o[r][c0 .. c0 + 16 NV) += sum over the block's keys of p[r][c] v[c][...], R rows.
template <int R, int NV>
void block_pv(const float* p, const float* vt, int64_t dp, int64_t keys, int64_t c0, float* o) {
    __m512 acc[R][NV];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_loadu_ps(o + r * dp + c0 + 16 * i);
    for (int64_t c = 0; c < keys; ++c) {
        __m512 vv[NV];
#pragma GCC unroll 4
        for (int i = 0; i < NV; ++i) vv[i] = _mm512_loadu_ps(vt + c * dp + c0 + 16 * i);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const __m512 pv = _mm512_set1_ps(p[r * kKeys + c]);
#pragma GCC unroll 4
            for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_fmadd_ps(pv, vv[i], acc[r][i]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int i = 0; i < NV; ++i) _mm512_storeu_ps(o + r * dp + c0 + 16 * i, acc[r][i]);
}

template <int R>
void block_pv_rows(const float* p, const float* vt, int64_t dp, int64_t keys, float* o) {
    int64_t c0 = 0;
    for (; c0 + 64 <= dp; c0 += 64) block_pv<R, 4>(p, vt, dp, keys, c0, o);
    switch ((dp - c0) / 16) {
        case 3: block_pv<R, 3>(p, vt, dp, keys, c0, o); break;
        case 2: block_pv<R, 2>(p, vt, dp, keys, c0, o); break;
        case 1: block_pv<R, 1>(p, vt, dp, keys, c0, o); break;
        default: break;
    }
}

#endif  // __AVX512F__

void scores_for_rows(int64_t rows, const float* q, int64_t d, const float* kt, float scale, float* scores) {
#if defined(__AVX512F__)
    switch (rows) {
        case 1: block_scores<1>(q, d, kt, scale, scores); return;
        case 2: block_scores<2>(q, d, kt, scale, scores); return;
        case 3: block_scores<3>(q, d, kt, scale, scores); return;
        case 4: block_scores<4>(q, d, kt, scale, scores); return;
        case 5: block_scores<5>(q, d, kt, scale, scores); return;
        case 6: block_scores<6>(q, d, kt, scale, scores); return;
        case 7: block_scores<7>(q, d, kt, scale, scores); return;
        default: block_scores<8>(q, d, kt, scale, scores); return;
    }
#else
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < kKeys; ++c) {
            float dot = 0;
            for (int64_t e = 0; e < d; ++e) dot += q[r * d + e] * kt[e * kKeys + c];
            scores[r * kKeys + c] = dot * scale;
        }
#endif
}

// o[r] += sum over the block's keys of p[r][c] v[c] for every row (masked weights are 0).
void pv_for_rows(int64_t rows, const float* p, const float* vt, int64_t dp, int64_t keys, float* o) {
#if defined(__AVX512F__)
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) block_pv_rows<4>(p + r * kKeys, vt, dp, keys, o + r * dp);
    switch (rows - r) {
        case 3: block_pv_rows<3>(p + r * kKeys, vt, dp, keys, o + r * dp); break;
        case 2: block_pv_rows<2>(p + r * kKeys, vt, dp, keys, o + r * dp); break;
        case 1: block_pv_rows<1>(p + r * kKeys, vt, dp, keys, o + r * dp); break;
        default: break;
    }
#else
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < keys; ++c)
            for (int64_t e = 0; e < dp; ++e) o[r * dp + e] += p[r * kKeys + c] * vt[c * dp + e];
#endif
}

// The row's block of 32 scores into weights: the NaN-propagating maximum m, p = e^(s - m)
// (masked scores are -inf: weight 0), l = l alpha + sum p, o *= alpha. Returns nothing; m, l
// and the accumulators are updated in place.
void online_softmax_row(float* s, float& m, float& l, float* o, int64_t dp) {
    float block_max = -INFINITY;
    bool nan = false;
    for (int64_t c = 0; c < kKeys; ++c) {
        nan |= s[c] != s[c];
        block_max = s[c] > block_max ? s[c] : block_max;
    }
    const float m_new = (nan || m != m) ? NAN : (block_max > m ? block_max : m);
    const float shift = m_new == -INFINITY ? 0.0f : m_new;
    float sum = 0;
#if defined(__AVX512F__)
    const __m512 sh = _mm512_set1_ps(shift);
    const __m512 p0 = exp_ps(_mm512_sub_ps(_mm512_loadu_ps(s), sh)), p1 = exp_ps(_mm512_sub_ps(_mm512_loadu_ps(s + 16), sh));
    _mm512_storeu_ps(s, p0);
    _mm512_storeu_ps(s + 16, p1);
    sum = _mm512_reduce_add_ps(_mm512_add_ps(p0, p1));
#else
    for (int64_t c = 0; c < kKeys; ++c) sum += (s[c] = std::exp(s[c] - shift));
#endif
    // The accumulated part's factor: 0 when nothing was accumulated (m = -inf), NaN stays NaN.
    const float alpha = m == -INFINITY ? 0.0f : std::exp(m - shift);
    if (alpha != 1.0f)
        for (int64_t e = 0; e < dp; ++e) o[e] *= alpha;
    l = l * alpha + sum;
    m = m_new;
}

void run(const Attention& a, int threads) {
    const int64_t rows = a.group * a.s, blocks = (rows + kRows - 1) / kRows;
    const int64_t tasks = a.batch * a.kv_heads * blocks;
    const int64_t d = a.d, dp = a.dp;
#pragma omp parallel num_threads(threads)
    {
        std::vector<float> q(static_cast<size_t>(kRows * d)), kt(static_cast<size_t>(d * kKeys));
        std::vector<float> vt(static_cast<size_t>(kKeys * dp)), scores(static_cast<size_t>(kRows * kKeys));
        std::vector<float> o(static_cast<size_t>(kRows * dp)), row(static_cast<size_t>(dp + 16));
        float m[kRows], l[kRows];
        int64_t count[kRows];
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < tasks; ++task) {
            const int64_t b = task / (a.kv_heads * blocks), kvh = task / blocks % a.kv_heads, r0 = task % blocks * kRows;
            const int64_t nr = std::min(kRows, rows - r0);
            int64_t most = 0;
            for (int64_t r = 0; r < nr; ++r) {
                const int64_t h = kvh * a.group + (r0 + r) / a.s, i = (r0 + r) % a.s;
                count[r] = a.causal ? std::clamp<int64_t>(i + a.skv - a.s + 1, 0, a.skv) : a.skv;
                most = std::max(most, count[r]);
                widen(a.q + ((b * a.s + i) * a.heads + h) * d, d, a.f16, row.data());
                std::copy(row.begin(), row.begin() + d, q.begin() + r * d);
                m[r] = -INFINITY;
                l[r] = 0;
            }
            std::fill(o.begin(), o.end(), 0.0f);
            for (int64_t j0 = 0; j0 < most; j0 += kKeys) {
                const int64_t nc = std::min(kKeys, most - j0);
                // The block's keys, transposed, and values, in fp32 (zeros past the block).
                bool finite_values = true;
                for (int64_t c = 0; c < kKeys; ++c) {
                    float* vr = vt.data() + c * dp;
                    if (c < nc) {
                        const int64_t at = ((b * a.skv + j0 + c) * a.kv_heads + kvh) * d;
                        widen(a.k + at, d, a.f16, row.data());
                        for (int64_t e = 0; e < d; ++e) kt[static_cast<size_t>(e * kKeys + c)] = row[static_cast<size_t>(e)];
                        widen(a.v + at, d, a.f16, vr);
                        finite_values = finite_values && !any_nonfinite(a.v + at, d, a.f16);
                        std::fill(vr + d, vr + dp, 0.0f);
                    } else {
                        for (int64_t e = 0; e < d; ++e) kt[static_cast<size_t>(e * kKeys + c)] = 0.0f;
                        std::fill(vr, vr + dp, 0.0f);
                    }
                }
                scores_for_rows(nr, q.data(), d, kt.data(), a.scale, scores.data());
                for (int64_t r = 0; r < nr; ++r) {
                    float* s = scores.data() + r * kKeys;
                    for (int64_t c = std::max<int64_t>(0, std::min(nc, count[r] - j0)); c < kKeys; ++c) s[c] = -INFINITY;
                    online_softmax_row(s, m[r], l[r], o.data() + r * dp, dp);
                }
                if (finite_values) {
                    pv_for_rows(nr, scores.data(), vt.data(), dp, nc, o.data());
                } else {
                    // Only the allowed keys' values are multiplied (0 * inf would be NaN).
                    for (int64_t r = 0; r < nr; ++r) {
                        const int64_t allowed = std::max<int64_t>(0, std::min(nc, count[r] - j0));
                        for (int64_t c = 0; c < allowed; ++c) {
                            const float w = scores[static_cast<size_t>(r * kKeys + c)];
                            const float* vr = vt.data() + c * dp;
                            float* orow = o.data() + r * dp;
                            for (int64_t e = 0; e < d; ++e) orow[e] += w * vr[e];
                        }
                    }
                }
            }
            for (int64_t r = 0; r < nr; ++r) {
                const int64_t h = kvh * a.group + (r0 + r) / a.s, i = (r0 + r) % a.s;
                uint16_t* yr = a.y + ((b * a.s + i) * a.heads + h) * d;
                const float* orow = o.data() + r * dp;
                if (l[r] == 0.0f) {
                    for (int64_t e = 0; e < d; ++e) yr[e] = 0;  // no key, or a maximum of -inf
                    continue;
                }
                const float inv = 1.0f / l[r];
                for (int64_t e = 0; e < d; ++e) yr[e] = from_f32(orow[e] * inv, a.f16);
            }
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const char* op = call->op_name ? call->op_name : "gqa";
    char message[160];
    const hb_arg* qa = hb_input(call, "query");
    const hb_arg* ka = hb_input(call, "key");
    const hb_arg* va = hb_input(call, "value");
    const hb_arg* ya = hb_output(call, "y");
    if (!qa || !ka || !va || !ya) {
        std::snprintf(message, sizeof message, "%s: expected inputs query, key, value and output y", op);
        return hb_fail(call, 1, message);
    }
    const hb_tensor &q = qa->tensors[0], &k = ka->tensors[0], &v = va->tensors[0], &y = ya->tensors[0];
    for (const hb_tensor* t : {&q, &k, &v, &y})
        if (t->rank != 4 || !hb_is_contiguous(t) || t->dtype != q.dtype || (t->dtype != HB_FLOAT16 && t->dtype != HB_BFLOAT16)) {
            std::snprintf(message, sizeof message, "%s: tensors must be contiguous 4-D float16 or bfloat16 of one dtype", op);
            return hb_fail(call, 2, message);
        }
    Attention a;
    a.q = static_cast<const uint16_t*>(q.data);
    a.k = static_cast<const uint16_t*>(k.data);
    a.v = static_cast<const uint16_t*>(v.data);
    a.y = static_cast<uint16_t*>(y.data);
    a.f16 = q.dtype == HB_FLOAT16;
    a.batch = q.shape[0];
    a.s = q.shape[1];
    a.heads = q.shape[2];
    a.d = q.shape[3];
    a.skv = k.shape[1];
    a.kv_heads = k.shape[2];
    if (a.kv_heads < 1 || a.heads % a.kv_heads != 0 || k.shape[3] != a.d || v.shape[3] != a.d || v.shape[2] != a.kv_heads) {
        std::snprintf(message, sizeof message, "%s: KV heads must divide query heads and D must match", op);
        return hb_fail(call, 2, message);
    }
    a.group = a.heads / a.kv_heads;
    a.dp = (a.d + 15) / 16 * 16;
    const double given = hb_attr_float(call, "scaleValue", -1.0);
    a.scale = static_cast<float>(given > 0 ? given : 1.0 / std::sqrt(static_cast<double>(a.d)));
    a.causal = hb_attr_int(call, "is_causal", 0) != 0;
    run(a, call->num_threads > 0 ? call->num_threads : omp_get_max_threads());
    return 0;
}
