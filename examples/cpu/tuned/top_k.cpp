// Tuned top_k (torch.topk, sorted): the k largest (or smallest) of every slice along dim, NaN
// ranked above +inf, with int64 positions. Each element maps to an unsigned rank R (its value
// order as an integer: sign folded, -0 merged with +0, every NaN largest; inverted for
// largest=false), so one integer comparison serves every dtype and the selection is
// "the k largest R". Instead of sorting a slice, a running threshold filters it:
//  - the first elements fill a candidate buffer; when it holds 2k + 16, an nth_element
//    keeps the best k and their k-th R becomes the threshold;
//  - every later element is compared with the threshold and only one that beats it enters
//    the buffer (an element equal to it cannot improve a full top k). Blocks of 64 elements
//    are first reduced to their largest R with vectorized integer code and skipped whole when
//    that does not beat the threshold, so the common case is one vector compare per element
//    and the kernel runs at the speed x streams in (with AVX-512: 16 ranks per compare, the
//    few lanes that beat the threshold compressed out with vpcompressd);
//  - the buffer's best k are sorted and y copies the selected elements' bits.
// Slices along the last dim are scanned directly (a long single slice is cut into pieces per
// thread whose candidates merge); slices along an outer dim are scanned as column strips 64
// bytes wide, one buffer per column, so x is still read in whole cache lines.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

#include "hapbench/kernel.h"

namespace {

// ---- ranks ---------------------------------------------------------------------------------

// R for largest; R for smallest is ~R (NaN, the largest R, then comes last).
inline uint32_t rank_f32(uint32_t b) {
    const uint32_t mag = b & 0x7fffffffu;
    const uint32_t sign_mask = static_cast<uint32_t>(static_cast<int32_t>(b) >> 31);
    uint32_t r = b ^ (sign_mask | 0x80000000u);
    r = mag == 0 ? 0x80000000u : r;
    return mag > 0x7f800000u ? 0xffffffffu : r;
}
inline uint32_t rank_f16(uint16_t b) {
    const uint32_t v = b, mag = v & 0x7fffu;
    const uint32_t r = (v & 0x8000u) ? (~v & 0xffffu) : (v | 0x8000u);
    return mag > 0x7c00u ? 0xffffu : (mag == 0 ? 0x8000u : r);
}
inline uint32_t rank_bf16(uint16_t b) {
    const uint32_t v = b, mag = v & 0x7fffu;
    const uint32_t r = (v & 0x8000u) ? (~v & 0xffffu) : (v | 0x8000u);
    return mag > 0x7f80u ? 0xffffu : (mag == 0 ? 0x8000u : r);
}

template <hb_dtype D>
struct Ranker;
template <>
struct Ranker<HB_FLOAT32> {
    using Raw = uint32_t;
    using R = uint32_t;
    static R rank(Raw v) { return rank_f32(v); }
};
template <>
struct Ranker<HB_FLOAT16> {
    using Raw = uint16_t;
    using R = uint32_t;
    static R rank(Raw v) { return rank_f16(v); }
};
template <>
struct Ranker<HB_BFLOAT16> {
    using Raw = uint16_t;
    using R = uint32_t;
    static R rank(Raw v) { return rank_bf16(v); }
};
template <>
struct Ranker<HB_INT8> {
    using Raw = uint8_t;
    using R = uint32_t;
    static R rank(Raw v) { return static_cast<uint32_t>(v ^ 0x80u); }
};
template <>
struct Ranker<HB_UINT8> {
    using Raw = uint8_t;
    using R = uint32_t;
    static R rank(Raw v) { return v; }
};
template <>
struct Ranker<HB_INT32> {
    using Raw = uint32_t;
    using R = uint32_t;
    static R rank(Raw v) { return v ^ 0x80000000u; }
};
template <>
struct Ranker<HB_INT64> {
    using Raw = uint64_t;
    using R = uint64_t;
    static R rank(Raw v) { return v ^ (uint64_t{1} << 63); }
};

// ---- the candidate buffer --------------------------------------------------------------------

template <typename R>
struct Candidates {
    std::vector<std::pair<R, int64_t>> items;  // (rank, position along dim)
    int64_t k = 1;
    size_t cap = 0;
    bool full = false;  // a threshold exists: items held the best k at least once
    R threshold = 0;

    void reset(int64_t k_) {
        k = k_;
        // Small for small k: the first threshold comes after 2k + 16 elements, and a short
        // slice with a small k then spends its time in the filter, not in selecting.
        cap = static_cast<size_t>(2 * k + 16);
        items.clear();
        items.reserve(cap);
        full = false;
        threshold = 0;
    }
    // Keeps the best k, sets the threshold to the k-th best rank.
    void shrink() {
        std::nth_element(items.begin(), items.begin() + (k - 1), items.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        items.resize(static_cast<size_t>(k));
        R lowest = items[0].first;
        for (const auto& it : items) lowest = std::min(lowest, it.first);
        threshold = lowest;
        full = true;
    }
    void offer(R r, int64_t j) {
        if (full && r <= threshold) return;
        items.push_back({r, j});
        if (items.size() >= cap) shrink();
    }
    // The best k (or all, when fewer), best first.
    void finish() {
        if (static_cast<int64_t>(items.size()) > k) shrink();
        std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
    }
};

#if defined(__AVX512F__) && defined(__AVX512BW__)
#define HB_TOPK_AVX512 1
// 16 ranks (as Ranker::rank, 32-bit lanes) of x[0..15], for every dtype whose rank is 32-bit.
template <hb_dtype D>
inline __m512i ranks16(const void* p) {
    const __m512i all = _mm512_set1_epi32(-1);
    if constexpr (D == HB_FLOAT32) {
        const __m512i b = _mm512_loadu_si512(p);
        const __m512i mag = _mm512_and_si512(b, _mm512_set1_epi32(0x7fffffff));
        __m512i r = _mm512_xor_si512(b, _mm512_or_si512(_mm512_srai_epi32(b, 31), _mm512_set1_epi32(static_cast<int>(0x80000000u))));
        r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(mag, _mm512_setzero_si512()), _mm512_set1_epi32(static_cast<int>(0x80000000u)));
        return _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32(0x7f800000)), all);
    } else if constexpr (D == HB_FLOAT16 || D == HB_BFLOAT16) {
        const __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(static_cast<const __m256i*>(p)));
        const __m512i mag = _mm512_and_si512(v, _mm512_set1_epi32(0x7fff));
        const __mmask16 negative = _mm512_test_epi32_mask(v, _mm512_set1_epi32(0x8000));
        __m512i r = _mm512_mask_mov_epi32(_mm512_or_si512(v, _mm512_set1_epi32(0x8000)), negative,
                                          _mm512_andnot_si512(v, _mm512_set1_epi32(0xffff)));
        r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(mag, _mm512_setzero_si512()), _mm512_set1_epi32(0x8000));
        const int nan_above = D == HB_FLOAT16 ? 0x7c00 : 0x7f80;
        return _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32(nan_above)), _mm512_set1_epi32(0xffff));
    } else if constexpr (D == HB_INT8) {
        const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(static_cast<const __m128i*>(p)));
        return _mm512_xor_si512(v, _mm512_set1_epi32(0x80));
    } else if constexpr (D == HB_UINT8) {
        return _mm512_cvtepu8_epi32(_mm_loadu_si128(static_cast<const __m128i*>(p)));
    } else {  // HB_INT32
        return _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_set1_epi32(static_cast<int>(0x80000000u)));
    }
}
#endif

// Scans a contiguous run x[begin, end) (positions along dim) into `c`.
template <hb_dtype D>
void scan_contiguous(const typename Ranker<D>::Raw* x, int64_t begin, int64_t end, bool invert, Candidates<typename Ranker<D>::R>& c) {
    using R = typename Ranker<D>::R;
    const R flip = invert ? static_cast<R>(~R{0}) : R{0};
    int64_t j = begin;
    // Fill until a threshold exists.
    for (; j < end && !c.full; ++j) c.offer(static_cast<R>(Ranker<D>::rank(x[j]) ^ flip), j);
#ifdef HB_TOPK_AVX512
    if constexpr (sizeof(R) == 4) {
        // 16 ranks per step; the rare lanes that beat the threshold are compressed out.
        const __m512i flip_v = _mm512_set1_epi32(static_cast<int>(flip));
        const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        alignas(64) uint32_t ranks[16];
        alignas(64) int32_t lanes[16];
        for (; j + 16 <= end; j += 16) {
            const __m512i r = _mm512_xor_si512(ranks16<D>(x + j), flip_v);
            const __mmask16 beats = _mm512_cmpgt_epu32_mask(r, _mm512_set1_epi32(static_cast<int>(c.threshold)));
            if (!beats) continue;
            _mm512_mask_compressstoreu_epi32(ranks, beats, r);
            _mm512_mask_compressstoreu_epi32(lanes, beats, lane);
            const int count = __builtin_popcount(beats);
            for (int t = 0; t < count; ++t) c.offer(ranks[t], j + lanes[t]);
        }
    }
#endif
    constexpr int64_t block = 64;
    for (; j + block <= end; j += block) {
        R best = 0;
        for (int64_t t = 0; t < block; ++t) best = std::max(best, static_cast<R>(Ranker<D>::rank(x[j + t]) ^ flip));
        if (best <= c.threshold) continue;
        for (int64_t t = 0; t < block; ++t) c.offer(static_cast<R>(Ranker<D>::rank(x[j + t]) ^ flip), j + t);
    }
    for (; j < end; ++j) c.offer(static_cast<R>(Ranker<D>::rank(x[j]) ^ flip), j);
}

template <hb_dtype D>
void top_k_typed(const hb_tensor& x, const hb_tensor& y, const hb_tensor& idx, int dim, int64_t k, bool largest) {
    using Raw = typename Ranker<D>::Raw;
    using R = typename Ranker<D>::R;
    const auto* xs = static_cast<const Raw*>(x.data);
    auto* ys = static_cast<Raw*>(y.data);
    auto* is = static_cast<int64_t*>(idx.data);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= x.shape[d];
    for (int d = dim + 1; d < x.rank; ++d) inner *= x.shape[d];
    const int64_t size = x.shape[dim];
    const bool invert = !largest;
    const int threads = omp_get_max_threads();

    auto write = [&](int64_t o, int64_t i, const Candidates<R>& c) {
        for (int64_t r = 0; r < k; ++r) {
            const int64_t j = c.items[static_cast<size_t>(r)].second;
            const int64_t at = (o * k + r) * inner + i;
            ys[at] = xs[(o * size + j) * inner + i];
            is[at] = j;
        }
    };

    if (inner == 1) {
        if (outer >= threads || size < 8 * std::max<int64_t>(k, 4096)) {
#pragma omp parallel
            {
                Candidates<R> c;
#pragma omp for schedule(dynamic)
                for (int64_t o = 0; o < outer; ++o) {
                    c.reset(k);
                    scan_contiguous<D>(xs + o * size, 0, size, invert, c);
                    c.finish();
                    write(o, 0, c);
                }
            }
            return;
        }
        // Few long slices: every thread scans a piece; the pieces' best k merge.
        std::vector<Candidates<R>> pieces(static_cast<size_t>(threads));
        for (int64_t o = 0; o < outer; ++o) {
            for (auto& p : pieces) p.reset(k);
#pragma omp parallel num_threads(threads)
            {
                const int t = omp_get_thread_num(), count = omp_get_num_threads();
                const int64_t begin = size * t / count, end = size * (t + 1) / count;
                // Positions stay relative to the slice: the scan offsets by o * size.
                scan_contiguous<D>(xs + o * size, begin, end, invert, pieces[static_cast<size_t>(t)]);
                pieces[static_cast<size_t>(t)].finish();
            }
            Candidates<R> merged;
            merged.reset(k);
            for (const auto& p : pieces)
                for (const auto& it : p.items) merged.items.push_back(it);
            merged.finish();
            write(o, 0, merged);
        }
        return;
    }

    // Slices along an outer dim: strips of W columns (64 bytes), a buffer per column.
    constexpr int64_t W = std::max<int64_t>(8, 64 / static_cast<int64_t>(sizeof(Raw)));
    const int64_t strips = (inner + W - 1) / W;
    const R flip = invert ? static_cast<R>(~R{0}) : R{0};
#pragma omp parallel
    {
        std::vector<Candidates<R>> columns(static_cast<size_t>(W));
#pragma omp for schedule(dynamic)
        for (int64_t w = 0; w < outer * strips; ++w) {
            const int64_t o = w / strips, i0 = (w % strips) * W, width = std::min(W, inner - i0);
            for (int64_t c = 0; c < width; ++c) columns[static_cast<size_t>(c)].reset(k);
            bool all_full = false;
            for (int64_t j = 0; j < size; ++j) {
                const Raw* row = xs + (o * size + j) * inner + i0;
                if (all_full && width == W) {
                    // Vectorizable: does any column of this row beat its threshold?
                    bool any = false;
                    for (int64_t c = 0; c < W; ++c)
                        any |= static_cast<R>(Ranker<D>::rank(row[c]) ^ flip) > columns[static_cast<size_t>(c)].threshold;
                    if (!any) continue;
                }
                bool full = true;
                for (int64_t c = 0; c < width; ++c) {
                    auto& col = columns[static_cast<size_t>(c)];
                    col.offer(static_cast<R>(Ranker<D>::rank(row[c]) ^ flip), j);
                    full = full && col.full;
                }
                all_full = full;
            }
            for (int64_t c = 0; c < width; ++c) {
                columns[static_cast<size_t>(c)].finish();
                write(o, i0 + c, columns[static_cast<size_t>(c)]);
            }
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    hb_arg* y_arg = hb_output(call, "y");
    hb_arg* idx_arg = hb_output(call, "idx");
    if (!x_arg || !y_arg || !idx_arg) return hb_fail(call, 1, "top_k: expected input `x` and outputs `y`, `idx`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    const hb_tensor& idx = idx_arg->tensors[0];
    if (y.dtype != x.dtype || idx.dtype != HB_INT64) return hb_fail(call, 2, "top_k: y must have x's dtype, idx int64");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y) || !hb_is_contiguous(&idx))
        return hb_fail(call, 3, "top_k: only contiguous tensors are supported");
    int64_t dim = hb_attr_int(call, "dim", -1);
    if (dim < 0) dim += x.rank;
    if (dim < 0 || dim >= x.rank) return hb_fail(call, 2, "top_k: dim out of range");
    const int64_t k = hb_attr_int(call, "k", 1);
    const bool largest = hb_attr_int(call, "largest", 1) != 0;
    if (k < 1 || k > x.shape[dim] || y.shape[dim] != k) return hb_fail(call, 2, "top_k: k must be in [1, size along dim] and match y");
    const int d = static_cast<int>(dim);
    switch (x.dtype) {
        case HB_FLOAT32: top_k_typed<HB_FLOAT32>(x, y, idx, d, k, largest); return 0;
        case HB_FLOAT16: top_k_typed<HB_FLOAT16>(x, y, idx, d, k, largest); return 0;
        case HB_BFLOAT16: top_k_typed<HB_BFLOAT16>(x, y, idx, d, k, largest); return 0;
        case HB_INT8: top_k_typed<HB_INT8>(x, y, idx, d, k, largest); return 0;
        case HB_UINT8: top_k_typed<HB_UINT8>(x, y, idx, d, k, largest); return 0;
        case HB_INT32: top_k_typed<HB_INT32>(x, y, idx, d, k, largest); return 0;
        case HB_INT64: top_k_typed<HB_INT64>(x, y, idx, d, k, largest); return 0;
        default: return hb_fail(call, 2, "top_k: unsupported dtype");
    }
}
