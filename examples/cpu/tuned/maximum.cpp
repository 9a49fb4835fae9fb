// Tuned maximum: y = max(x1, x2) with NumPy/PyTorch broadcasting, NaN propagating as in
// torch.maximum, for float32, float16, bfloat16, int8, int32 and int64.
// The output is walked as rows of its innermost dim after merging dims that broadcast
// alike (equal shapes become one row); rows are cut into pieces spread over threads, and
// each piece runs an AVX2 loop with both inputs contiguous or one a broadcast scalar.
// Without AVX2 and F16C the same file builds a scalar loop.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#define HB_TUNED_SIMD 1
#endif

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

// ---- Per-dtype scalar max and AVX2 lanes ---------------------------------------------------

template <hb_dtype D>
struct Lanes;

// Floats: NaN wins. vmaxps returns its second operand when either is NaN, so a NaN in the
// first is restored by a blend on an unordered compare.
float scalar_fmax(float a, float b) { return a != a ? a : (a < b || b != b) ? b : a; }

template <>
struct Lanes<HB_FLOAT32> {
    using S = float;
    static S max1(S a, S b) { return scalar_fmax(a, b); }
#ifdef HB_TUNED_SIMD
    static constexpr int width = 8;
    using V = __m256;
    static V load(const S* p) { return _mm256_loadu_ps(p); }
    static V splat(S v) { return _mm256_set1_ps(v); }
    static void store(S* p, V v) { _mm256_storeu_ps(p, v); }
    static V vmax(V a, V b) { return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q)); }
#endif
};

template <>
struct Lanes<HB_FLOAT16> {
    using S = uint16_t;
    static S max1(S a, S b) {
        const float fa = hb_f16_to_f32(a), fb = hb_f16_to_f32(b);
        return fa != fa ? a : (fa < fb || fb != fb) ? b : a;
    }
#ifdef HB_TUNED_SIMD
    static constexpr int width = 8;
    using V = __m256;
    static V load(const S* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    static V splat(S v) { return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(v))); }
    // fp16 values widen and narrow back exactly; a NaN stays a NaN.
    static void store(S* p, V v) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    static V vmax(V a, V b) { return Lanes<HB_FLOAT32>::vmax(a, b); }
#endif
};

template <>
struct Lanes<HB_BFLOAT16> {
    using S = uint16_t;
    static S max1(S a, S b) {
        const float fa = hb_bf16_to_f32(a), fb = hb_bf16_to_f32(b);
        return fa != fa ? a : (fa < fb || fb != fb) ? b : a;
    }
#ifdef HB_TUNED_SIMD
    static constexpr int width = 8;
    using V = __m256;
    static V load(const S* p) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    }
    static V splat(S v) { return _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(v) << 16)); }
    // The chosen value is an exact bf16 (or its NaN), so its high half is the result.
    static void store(S* p, V v) {
        const __m256i hi = _mm256_srli_epi32(_mm256_castps_si256(v), 16);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                         _mm_packus_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)));
    }
    static V vmax(V a, V b) { return Lanes<HB_FLOAT32>::vmax(a, b); }
#endif
};

template <typename Int>
struct IntLanes {
    using S = Int;
    static S max1(S a, S b) { return a < b ? b : a; }
#ifdef HB_TUNED_SIMD
    static constexpr int width = 32 / static_cast<int>(sizeof(Int));
    using V = __m256i;
    static V load(const S* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
    static void store(S* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
#endif
};

template <>
struct Lanes<HB_INT8> : IntLanes<int8_t> {
#ifdef HB_TUNED_SIMD
    static V splat(S v) { return _mm256_set1_epi8(v); }
    static V vmax(V a, V b) { return _mm256_max_epi8(a, b); }
#endif
};
template <>
struct Lanes<HB_INT32> : IntLanes<int32_t> {
#ifdef HB_TUNED_SIMD
    static V splat(S v) { return _mm256_set1_epi32(v); }
    static V vmax(V a, V b) { return _mm256_max_epi32(a, b); }
#endif
};
template <>
struct Lanes<HB_INT64> : IntLanes<int64_t> {
#ifdef HB_TUNED_SIMD
    static V splat(S v) { return _mm256_set1_epi64x(v); }
    // AVX2 has no 64-bit max: compare and blend.
    static V vmax(V a, V b) { return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(b, a)); }
#endif
};

// n outputs from a (step ia: 0 or 1) and b (step ib).
template <hb_dtype D>
void max_piece(typename Lanes<D>::S* dst, const typename Lanes<D>::S* a, int64_t ia,
               const typename Lanes<D>::S* b, int64_t ib, int64_t n) {
    using L = Lanes<D>;
    int64_t i = 0;
#ifdef HB_TUNED_SIMD
    constexpr int w = L::width;
    if (ia == 1 && ib == 1) {
        for (; i + w <= n; i += w) L::store(dst + i, L::vmax(L::load(a + i), L::load(b + i)));
    } else if (ia == 1 && ib == 0) {
        const auto vb = L::splat(b[0]);
        for (; i + w <= n; i += w) L::store(dst + i, L::vmax(L::load(a + i), vb));
    } else if (ia == 0 && ib == 1) {
        const auto va = L::splat(a[0]);
        for (; i + w <= n; i += w) L::store(dst + i, L::vmax(va, L::load(b + i)));
    }
#endif
    for (; i < n; ++i) dst[i] = L::max1(a[i * ia], b[i * ib]);
}

// ---- Broadcast walk ------------------------------------------------------------------------

struct Walk {
    std::vector<int64_t> shape, sa, sb;  // merged output dims and input strides (0: broadcast)
    int64_t numel = 1;
};

Walk make_walk(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& y) {
    const int rank = y.rank;
    std::vector<int64_t> sa(static_cast<size_t>(rank), 0), sb(static_cast<size_t>(rank), 0);
    auto strides = [rank](const hb_tensor& t, std::vector<int64_t>& s) {
        int64_t step = 1;
        for (int k = 0; k < t.rank; ++k) {
            const int64_t size = t.shape[t.rank - 1 - k];
            if (size != 1) s[static_cast<size_t>(rank - 1 - k)] = step;
            step *= size;
        }
    };
    strides(x1, sa);
    strides(x2, sb);
    Walk w;
    for (int d = 0; d < rank; ++d) {
        const int64_t size = y.shape[d];
        w.numel *= size;
        if (size == 1) continue;
        const int64_t a = sa[static_cast<size_t>(d)], b = sb[static_cast<size_t>(d)];
        if (!w.shape.empty() && w.sa.back() == a * size && w.sb.back() == b * size) {
            w.shape.back() *= size;
            w.sa.back() = a;
            w.sb.back() = b;
        } else {
            w.shape.push_back(size);
            w.sa.push_back(a);
            w.sb.push_back(b);
        }
    }
    if (w.shape.empty()) {
        w.shape = {1};
        w.sa = {0};
        w.sb = {0};
    }
    return w;
}

constexpr int64_t kPiece = 16384;              // elements per work item
constexpr int64_t kMinParallelElements = 65536;

template <hb_dtype D>
void maximum_all(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& y, int threads) {
    using S = typename Lanes<D>::S;
    const auto* a = static_cast<const S*>(x1.data);
    const auto* b = static_cast<const S*>(x2.data);
    auto* out = static_cast<S*>(y.data);
    const Walk w = make_walk(x1, x2, y);
    if (w.numel == 0) return;
    const int outer = static_cast<int>(w.shape.size()) - 1;
    const int64_t row = w.shape.back(), rows = w.numel / row;
    const int64_t pieces_per_row = (row + kPiece - 1) / kPiece, pieces = rows * pieces_per_row;
#pragma omp parallel for schedule(static) num_threads(threads) if (w.numel >= kMinParallelElements)
    for (int64_t p = 0; p < pieces; ++p) {
        const int64_t r = p / pieces_per_row, begin = (p % pieces_per_row) * kPiece;
        int64_t oa = 0, ob = 0, rest = r;
        for (int d = outer - 1; d >= 0; --d) {
            const int64_t index = rest % w.shape[static_cast<size_t>(d)];
            rest /= w.shape[static_cast<size_t>(d)];
            oa += index * w.sa[static_cast<size_t>(d)];
            ob += index * w.sb[static_cast<size_t>(d)];
        }
        const int64_t ia = w.sa.back(), ib = w.sb.back();
        max_piece<D>(out + r * row + begin, a + oa + begin * ia, ia, b + ob + begin * ib, ib,
                     std::min(kPiece, row - begin));
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x1_arg = hb_input(call, "x1");
    const hb_arg* x2_arg = hb_input(call, "x2");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x1_arg || !x2_arg || !y_arg || x1_arg->count != 1 || x2_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "maximum: expected input tensors x1, x2 and output tensor y");
    const hb_tensor& x1 = x1_arg->tensors[0];
    const hb_tensor& x2 = x2_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (x1.dtype != x2.dtype || y.dtype != x1.dtype) return hb_fail(call, 2, "maximum: x1, x2 and y must share a dtype");
    if (y.rank < x1.rank || y.rank < x2.rank) return hb_fail(call, 2, "maximum: y has a lower rank than an input");
    if (!hb_is_contiguous(&x1) || !hb_is_contiguous(&x2) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "maximum: only contiguous tensors are supported");
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (y.dtype) {
        case HB_FLOAT32: maximum_all<HB_FLOAT32>(x1, x2, y, threads); return 0;
        case HB_FLOAT16: maximum_all<HB_FLOAT16>(x1, x2, y, threads); return 0;
        case HB_BFLOAT16: maximum_all<HB_BFLOAT16>(x1, x2, y, threads); return 0;
        case HB_INT8: maximum_all<HB_INT8>(x1, x2, y, threads); return 0;
        case HB_INT32: maximum_all<HB_INT32>(x1, x2, y, threads); return 0;
        case HB_INT64: maximum_all<HB_INT64>(x1, x2, y, threads); return 0;
        default: return hb_fail(call, 2, "maximum: dtype must be float32, float16, bfloat16, int8, int32 or int64");
    }
}
