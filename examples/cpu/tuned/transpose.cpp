// Tuned transpose: y = torch.permute(x, perm).contiguous(), every dtype moved as raw bytes.
//  1. The permutation is simplified: size-1 dims dropped, and y dims that are also
//     neighbours in x (in the same order) merged, so [B, S, H, D] -> [B, H, S, D] is a copy of
//     D-long rows and [N, C, H, W] -> [N, H, W, C] a batch of [C, H*W] matrix transposes.
//  2. If x's innermost dim stays innermost, y is a sequence of contiguous rows copied with
//     AVX2 loads and (outputs of 1 MiB and more) non-temporal stores, rows split over threads.
//  3. Otherwise the dim contiguous in x (p) and the one contiguous in y (q) form a 2-D
//     transpose per batch index. It runs in square tiles of 64 x 64 bytes (16 x 16 float32):
//     every x line and every y line a tile touches is used whole, so a power-of-two row
//     stride (4 KiB aliasing in L1) cannot evict a line half-used, and y is written in whole
//     64-byte lines, non-temporally when the output is large (no read-for-ownership of lines
//     that are overwritten whole). Register transposes: AVX2 8 x 8 (32-bit) and 4 x 4
//     (64-bit), SSE2 8 x 8 of 16-bit and of bytes; edges are scalar. Tiles are split over
//     threads along q and the batch.
// Without AVX2 the same file builds the scalar paths.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#define HB_TUNED_SIMD 1
#endif

#include "hapbench/kernel.h"

namespace {

struct Dims {
    int rank = 0;
    int64_t shape[HB_MAX_RANK] = {};
    int64_t src[HB_MAX_RANK] = {};  // x's stride (elements) for each y dim
    int64_t dst[HB_MAX_RANK] = {};  // y's stride (elements)
};

// Drops size-1 dims and merges y dims t, t+1 whose x strides nest (src[t] == src[t+1] * shape[t+1]).
Dims simplify(int rank, const int64_t* shape, const int64_t* src) {
    Dims d;
    for (int t = 0; t < rank; ++t) {
        if (shape[t] == 1) continue;
        if (d.rank > 0 && d.src[d.rank - 1] == src[t] * shape[t]) {
            d.shape[d.rank - 1] *= shape[t];
            d.src[d.rank - 1] = src[t];
        } else {
            d.shape[d.rank] = shape[t];
            d.src[d.rank++] = src[t];
        }
    }
    if (d.rank == 0) {
        d.rank = 1;
        d.shape[0] = 1;
        d.src[0] = 1;
    }
    int64_t s = 1;
    for (int t = d.rank - 1; t >= 0; --t) {
        d.dst[t] = s;
        s *= d.shape[t];
    }
    return d;
}

// Offsets in x and y of batch index b over the dims in `batch` (row-major among them).
void batch_offsets(const Dims& d, const int* batch, int batch_rank, int64_t b, int64_t& x_off, int64_t& y_off) {
    x_off = y_off = 0;
    for (int k = batch_rank - 1; k >= 0; --k) {
        const int t = batch[k];
        const int64_t c = b % d.shape[t];
        b /= d.shape[t];
        x_off += c * d.src[t];
        y_off += c * d.dst[t];
    }
}

// ---- contiguous rows -------------------------------------------------------------------------

void copy_bytes(char* dst, const char* src, size_t n, bool stream) {
#ifdef HB_TUNED_SIMD
    if (stream && n >= 256) {
        size_t head = (32 - (reinterpret_cast<uintptr_t>(dst) & 31)) & 31;
        std::memcpy(dst, src, head);
        size_t i = head;
        for (; i + 128 <= n; i += 128) {
            const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
            const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 32));
            const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 64));
            const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 96));
            _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), a);
            _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 32), b);
            _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 64), c);
            _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 96), e);
        }
        std::memcpy(dst + i, src + i, n - i);
        return;
    }
#endif
    (void)stream;
    std::memcpy(dst, src, n);
}

void copy_rows(const char* x, char* y, const Dims& d, size_t elem, bool stream) {
    const int64_t row = d.shape[d.rank - 1];
    const size_t row_bytes = static_cast<size_t>(row) * elem;
    int batch[HB_MAX_RANK];
    for (int t = 0; t < d.rank - 1; ++t) batch[t] = t;
    int64_t rows = 1;
    for (int t = 0; t + 1 < d.rank; ++t) rows *= d.shape[t];
    // Long rows with few of them: cut each row into pieces so every thread gets work.
    const int64_t pieces_per_row = rows >= 4 * omp_get_max_threads() ? 1 : std::max<int64_t>(1, static_cast<int64_t>(row_bytes / 65536));
    const int64_t work = rows * pieces_per_row;
#pragma omp parallel for schedule(static)
    for (int64_t w = 0; w < work; ++w) {
        const int64_t r = w / pieces_per_row, piece = w % pieces_per_row;
        int64_t x_off, y_off;
        batch_offsets(d, batch, d.rank - 1, r, x_off, y_off);
        const size_t begin = row_bytes * static_cast<size_t>(piece) / static_cast<size_t>(pieces_per_row) / 64 * 64;
        const size_t end = piece + 1 == pieces_per_row ? row_bytes
                                                       : row_bytes * static_cast<size_t>(piece + 1) / static_cast<size_t>(pieces_per_row) / 64 * 64;
        copy_bytes(y + static_cast<size_t>(y_off) * elem + begin, x + static_cast<size_t>(x_off) * elem + begin, end - begin, stream);
    }
#ifdef HB_TUNED_SIMD
    if (stream) _mm_sfence();
#endif
}

// ---- 2-D transposes --------------------------------------------------------------------------
// A tile: x holds it as rows along q (stride xs between q rows, contiguous along p); y as
// rows along p (stride ys between p rows, contiguous along q).

template <typename T>
inline void tile_scalar(const T* x, T* y, int64_t xs, int64_t ys, int64_t np, int64_t nq) {
    for (int64_t i = 0; i < np; ++i)
        for (int64_t j = 0; j < nq; ++j) y[i * ys + j] = x[j * xs + i];
}

#ifdef HB_TUNED_SIMD
// 8 x 8 of 32-bit lanes: x rows q..q+7 (8 values of p each) -> y rows p..p+7.
inline void transpose8x8_32(const uint32_t* x, int64_t xs, __m256i out[8]) {
    __m256 r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(reinterpret_cast<const float*>(x + k * xs));
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    out[0] = _mm256_castps_si256(_mm256_permute2f128_ps(s0, s4, 0x20));
    out[1] = _mm256_castps_si256(_mm256_permute2f128_ps(s1, s5, 0x20));
    out[2] = _mm256_castps_si256(_mm256_permute2f128_ps(s2, s6, 0x20));
    out[3] = _mm256_castps_si256(_mm256_permute2f128_ps(s3, s7, 0x20));
    out[4] = _mm256_castps_si256(_mm256_permute2f128_ps(s0, s4, 0x31));
    out[5] = _mm256_castps_si256(_mm256_permute2f128_ps(s1, s5, 0x31));
    out[6] = _mm256_castps_si256(_mm256_permute2f128_ps(s2, s6, 0x31));
    out[7] = _mm256_castps_si256(_mm256_permute2f128_ps(s3, s7, 0x31));
}

// 4 x 4 of 64-bit lanes.
inline void transpose4x4_64(const uint64_t* x, int64_t xs, __m256i out[4]) {
    const __m256d r0 = _mm256_loadu_pd(reinterpret_cast<const double*>(x));
    const __m256d r1 = _mm256_loadu_pd(reinterpret_cast<const double*>(x + xs));
    const __m256d r2 = _mm256_loadu_pd(reinterpret_cast<const double*>(x + 2 * xs));
    const __m256d r3 = _mm256_loadu_pd(reinterpret_cast<const double*>(x + 3 * xs));
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    out[0] = _mm256_castpd_si256(_mm256_permute2f128_pd(t0, t2, 0x20));
    out[1] = _mm256_castpd_si256(_mm256_permute2f128_pd(t1, t3, 0x20));
    out[2] = _mm256_castpd_si256(_mm256_permute2f128_pd(t0, t2, 0x31));
    out[3] = _mm256_castpd_si256(_mm256_permute2f128_pd(t1, t3, 0x31));
}

inline void store256(void* p, __m256i v, bool stream) {
    if (stream) _mm256_stream_si256(static_cast<__m256i*>(p), v);
    else _mm256_storeu_si256(static_cast<__m256i*>(p), v);
}

// 8 x 8 of 16-bit lanes (SSE2 unpacks): x rows q..q+7 of 8 values -> y rows p..p+7.
inline void transpose8x8_16(const uint16_t* x, int64_t xs, __m128i out[8]) {
    __m128i r[8], a[8], b[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + k * xs));
    for (int k = 0; k < 4; ++k) {
        a[2 * k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
        a[2 * k + 1] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
    }
    b[0] = _mm_unpacklo_epi32(a[0], a[2]), b[1] = _mm_unpackhi_epi32(a[0], a[2]);
    b[2] = _mm_unpacklo_epi32(a[1], a[3]), b[3] = _mm_unpackhi_epi32(a[1], a[3]);
    b[4] = _mm_unpacklo_epi32(a[4], a[6]), b[5] = _mm_unpackhi_epi32(a[4], a[6]);
    b[6] = _mm_unpacklo_epi32(a[5], a[7]), b[7] = _mm_unpackhi_epi32(a[5], a[7]);
    for (int k = 0; k < 4; ++k) {
        out[2 * k] = _mm_unpacklo_epi64(b[k], b[k + 4]);
        out[2 * k + 1] = _mm_unpackhi_epi64(b[k], b[k + 4]);
    }
}

// 8 x 8 bytes: x rows q..q+7 of 8 bytes -> out[c] holds y rows p+2c (low 8 bytes) and
// p+2c+1 (high 8 bytes).
inline void transpose8x8_8(const uint8_t* x, int64_t xs, __m128i out[4]) {
    __m128i r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + k * xs));
    const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpacklo_epi8(r[2], r[3]);
    const __m128i a2 = _mm_unpacklo_epi8(r[4], r[5]), a3 = _mm_unpacklo_epi8(r[6], r[7]);
    const __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
    const __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
    out[0] = _mm_unpacklo_epi32(b0, b2);
    out[1] = _mm_unpackhi_epi32(b0, b2);
    out[2] = _mm_unpacklo_epi32(b1, b3);
    out[3] = _mm_unpackhi_epi32(b1, b3);
}

// Square tiles of 64 x 64 bytes: every x line and every y line the tile touches is used
// whole, so a power-of-two row stride (4 KiB aliasing in L1) cannot evict a line half-used,
// and each y row's 64 bytes are stored back to back, so non-temporal stores fill a whole
// write-combining buffer (a line streamed in pieces with other lines in between is flushed
// partially, at a fraction of the bandwidth). Made of 8 x 8 register transposes (4 x 4 for
// 64-bit); `stream` only when every y row of the tile is aligned to the store width.
inline void tile_32(const uint32_t* x, uint32_t* y, int64_t xs, int64_t ys, bool stream) {  // 16 x 16
    for (int pb = 0; pb < 16; pb += 8) {
        __m256i left[8], right[8];
        transpose8x8_32(x + pb, xs, left);
        transpose8x8_32(x + 8 * xs + pb, xs, right);
        for (int k = 0; k < 8; ++k) {
            store256(y + (pb + k) * ys, left[k], stream);
            store256(y + (pb + k) * ys + 8, right[k], stream);
        }
    }
}

inline void tile_64(const uint64_t* x, uint64_t* y, int64_t xs, int64_t ys, bool stream) {  // 8 x 8
    for (int pb = 0; pb < 8; pb += 4) {
        __m256i left[4], right[4];
        transpose4x4_64(x + pb, xs, left);
        transpose4x4_64(x + 4 * xs + pb, xs, right);
        for (int k = 0; k < 4; ++k) {
            store256(y + (pb + k) * ys, left[k], stream);
            store256(y + (pb + k) * ys + 4, right[k], stream);
        }
    }
}

inline void tile_16(const uint16_t* x, uint16_t* y, int64_t xs, int64_t ys, bool stream) {  // 32 x 32
    for (int pb = 0; pb < 32; pb += 8) {
        __m128i c[4][8];
        for (int part = 0; part < 4; ++part) transpose8x8_16(x + 8 * part * xs + pb, xs, c[part]);
        for (int k = 0; k < 8; ++k)
            for (int part = 0; part < 4; ++part) {
                auto* p = reinterpret_cast<__m128i*>(y + (pb + k) * ys + 8 * part);
                if (stream) _mm_stream_si128(p, c[part][k]);
                else _mm_storeu_si128(p, c[part][k]);
            }
    }
}

inline void tile_8(const uint8_t* x, uint8_t* y, int64_t xs, int64_t ys, bool stream) {  // 64 x 64
    for (int pb = 0; pb < 64; pb += 8) {
        __m128i c[8][4];  // c[part][k]: y rows pb + 2k (low half) and pb + 2k + 1 (high half)
        for (int part = 0; part < 8; ++part) transpose8x8_8(x + 8 * part * xs + pb, xs, c[part]);
        for (int k = 0; k < 4; ++k)
            for (int half = 0; half < 2; ++half)
                for (int part = 0; part < 8; ++part) {
                    auto* p = reinterpret_cast<long long*>(y + (pb + 2 * k + half) * ys + 8 * part);
                    const __m128i v = half ? _mm_unpackhi_epi64(c[part][k], c[part][k]) : c[part][k];
                    const long long bits = _mm_cvtsi128_si64(v);
                    if (stream) _mm_stream_si64(p, bits);
                    else std::memcpy(p, &bits, 8);
                }
    }
}
#endif

// One 2-D transpose of np x nq (y side) with x stride xs and y stride ys, columns
// [q_begin, q_end), in square tiles of B = 64 / sizeof(T) elements per side; edges scalar.
template <typename T>
void transpose_2d(const T* x, T* y, int64_t xs, int64_t ys, int64_t np, int64_t q_begin, int64_t q_end, bool stream) {
    constexpr int64_t B = 64 / static_cast<int64_t>(sizeof(T));
    int64_t q = q_begin;
    for (; q + B <= q_end; q += B) {
        int64_t p = 0;
#ifdef HB_TUNED_SIMD
        constexpr size_t store_bytes = sizeof(T) >= 4 ? 32 : sizeof(T) == 2 ? 16 : 8;
        const bool aligned = stream && (reinterpret_cast<uintptr_t>(y + q) % store_bytes) == 0 && (ys * sizeof(T)) % store_bytes == 0;
        for (; p + B <= np; p += B) {
            const T* xt = x + q * xs + p;
            T* yt = y + p * ys + q;
            if constexpr (sizeof(T) == 4) tile_32(reinterpret_cast<const uint32_t*>(xt), reinterpret_cast<uint32_t*>(yt), xs, ys, aligned);
            else if constexpr (sizeof(T) == 8) tile_64(reinterpret_cast<const uint64_t*>(xt), reinterpret_cast<uint64_t*>(yt), xs, ys, aligned);
            else if constexpr (sizeof(T) == 2) tile_16(reinterpret_cast<const uint16_t*>(xt), reinterpret_cast<uint16_t*>(yt), xs, ys, aligned);
            else tile_8(reinterpret_cast<const uint8_t*>(xt), reinterpret_cast<uint8_t*>(yt), xs, ys, aligned);
        }
#endif
        if (p < np) tile_scalar(x + q * xs + p, y + p * ys + q, xs, ys, np - p, B);
    }
    if (q < q_end) tile_scalar(x + q * xs, y + q, xs, ys, np, q_end - q);
}

template <typename T>
void transpose_batched(const T* x, T* y, const Dims& d, int p_dim, bool stream) {
    const int q_dim = d.rank - 1;
    int batch[HB_MAX_RANK];
    int batch_rank = 0;
    for (int t = 0; t < d.rank; ++t)
        if (t != p_dim && t != q_dim) batch[batch_rank++] = t;
    int64_t batches = 1;
    for (int k = 0; k < batch_rank; ++k) batches *= d.shape[batch[k]];
    const int64_t np = d.shape[p_dim], nq = d.shape[q_dim];
    const int64_t xs = d.src[q_dim], ys = d.dst[p_dim];
    // Work items: (batch, strip of q) with strips of whole tiles (64 bytes of y columns).
    constexpr int64_t W = 64 / static_cast<int64_t>(sizeof(T));
    const int64_t threads = omp_get_max_threads();
    int64_t strip = std::max<int64_t>(W, (nq + W - 1) / W * W);
    if (batches < 4 * threads) strip = std::max<int64_t>(W, ((nq * batches + 4 * threads - 1) / (4 * threads) + W - 1) / W * W);
    const int64_t strips = (nq + strip - 1) / strip;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t w = 0; w < batches * strips; ++w) {
        const int64_t b = w / strips, s = w % strips;
        int64_t x_off, y_off;
        batch_offsets(d, batch, batch_rank, b, x_off, y_off);
        transpose_2d(x + x_off, y + y_off, xs, ys, np, s * strip, std::min(nq, (s + 1) * strip), stream);
    }
#ifdef HB_TUNED_SIMD
    if (stream) _mm_sfence();
#endif
}

template <typename T>
void transpose_typed(const void* x, void* y, const Dims& d, bool stream) {
    // The y dim x walks contiguously; none (x's innermost dim was size 1 and dropped) means
    // every x stride exceeds 1: fall back to a generic strided copy of rows.
    int p_dim = -1;
    for (int t = 0; t < d.rank; ++t)
        if (d.src[t] == 1) p_dim = t;
    if (p_dim == d.rank - 1) {
        copy_rows(static_cast<const char*>(x), static_cast<char*>(y), d, sizeof(T), stream);
        return;
    }
    if (p_dim >= 0) {
        transpose_batched(static_cast<const T*>(x), static_cast<T*>(y), d, p_dim, stream);
        return;
    }
    const auto* xs = static_cast<const T*>(x);
    auto* ys = static_cast<T*>(y);
    int64_t n = 1;
    for (int t = 0; t < d.rank; ++t) n *= d.shape[t];
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n; ++j) {
        int64_t rest = j, source = 0;
        for (int t = d.rank - 1; t >= 0; --t) {
            source += (rest % d.shape[t]) * d.src[t];
            rest /= d.shape[t];
        }
        ys[j] = xs[source];
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    hb_arg* y_arg = hb_output(call, "y");
    const hb_attr* perm = hb_attr_find(call, "perm");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "transpose: expected input `x` and output `y`");
    if (!perm || perm->type != HB_ATTR_INT_LIST) return hb_fail(call, 1, "transpose: attribute `perm` (int list) is missing");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y)) return hb_fail(call, 3, "transpose: only contiguous tensors are supported");
    if (x.dtype != y.dtype) return hb_fail(call, 2, "transpose: y must have x's dtype");
    const int rank = x.rank;
    if (perm->count != rank || y.rank != rank) return hb_fail(call, 2, "transpose: perm needs one entry per dimension of x");
    int64_t x_strides[HB_MAX_RANK], y_shape[HB_MAX_RANK], src[HB_MAX_RANK];
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
        x_strides[d] = stride;
        stride *= x.shape[d];
    }
    bool seen[HB_MAX_RANK] = {};
    for (int t = 0; t < rank; ++t) {
        const int64_t axis = perm->ints[t] < 0 ? perm->ints[t] + rank : perm->ints[t];
        if (axis < 0 || axis >= rank || seen[axis]) return hb_fail(call, 2, "transpose: perm is not a permutation of the dims of x");
        seen[axis] = true;
        if (y.shape[t] != x.shape[axis]) return hb_fail(call, 2, "transpose: y's shape is not x's shape permuted");
        y_shape[t] = y.shape[t];
        src[t] = x_strides[axis];
    }
    const int64_t n = hb_numel(&x);
    if (n == 0) return 0;
    const Dims d = simplify(rank, y_shape, src);
    size_t elem = 0;
    switch (x.dtype) {
        case HB_INT8: case HB_UINT8: case HB_BOOL: elem = 1; break;
        case HB_FLOAT16: case HB_BFLOAT16: case HB_INT16: elem = 2; break;
        case HB_FLOAT32: case HB_INT32: elem = 4; break;
        case HB_FLOAT64: case HB_INT64: elem = 8; break;
    }
    // Non-temporal stores pay off once y no longer fits in the caches it would pollute.
    const bool stream = static_cast<size_t>(n) * elem >= (size_t{1} << 20);
    switch (elem) {
        case 1: transpose_typed<uint8_t>(x.data, y.data, d, stream); return 0;
        case 2: transpose_typed<uint16_t>(x.data, y.data, d, stream); return 0;
        case 4: transpose_typed<uint32_t>(x.data, y.data, d, stream); return 0;
        case 8: transpose_typed<uint64_t>(x.data, y.data, d, stream); return 0;
    }
    return hb_fail(call, 2, "transpose: unsupported dtype");
}
