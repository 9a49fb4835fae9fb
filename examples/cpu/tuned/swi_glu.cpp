// Tuned swi_glu: split `input` into halves a, b along `dim`; output = silu(a) * b with
// silu(a) = a / (1 + e^-a), for float32, float16 and bfloat16. A contiguous input is
// [outer, 2 * half, inner]; for each outer index a and b are two flat runs of half * inner
// elements, so the kernel maps (a, b) runs onto output runs. AVX2 + FMA with a polynomial e^x
// (< 2 ulp), F16C / bit-trick fp16 and bf16 conversion, OpenMP ranges split on 64-byte lines of
// the output, and non-temporal stores for large outputs. Without AVX2, FMA and F16C the same
// file builds a scalar loop.
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

inline __m256 swiglu8(__m256 a, __m256 b) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), a));
    __m256 silu = _mm256_div_ps(a, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    // silu(-inf) is 0 in the limit; -inf / inf would give NaN.
    silu = _mm256_andnot_ps(_mm256_cmp_ps(a, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ), silu);
    return _mm256_mul_ps(silu, b);
}

// ---- Loops --------------------------------------------------------------------------------

// Fewer than 8 elements: through local buffers, so nothing is read or written past the end.
template <typename T>
void swiglu_partial(const typename T::Storage* a, const typename T::Storage* b, typename T::Storage* y, int64_t count) {
    typename T::Storage in_a[8] = {};
    typename T::Storage in_b[8] = {};
    typename T::Storage out[8];
    std::memcpy(in_a, a, static_cast<size_t>(count) * sizeof in_a[0]);
    std::memcpy(in_b, b, static_cast<size_t>(count) * sizeof in_b[0]);
    T::store8(out, swiglu8(T::load8(in_a), T::load8(in_b)));
    std::memcpy(y, out, static_cast<size_t>(count) * sizeof out[0]);
}

// One run of n outputs; the caller fences after its last streamed run.
template <typename T>
void swiglu_run(const typename T::Storage* a, const typename T::Storage* b, typename T::Storage* y, int64_t n, bool stream) {
    using S = typename T::Storage;
    int64_t i = 0;
    const auto address = reinterpret_cast<uintptr_t>(y);
    if (stream && address % sizeof(S) == 0) {
        // Non-temporal stores need aligned addresses: peel up to the first aligned one.
        const int64_t head = std::min<int64_t>(n, (T::kStreamAlign - address % T::kStreamAlign) % T::kStreamAlign / sizeof(S));
        if (head > 0) swiglu_partial<T>(a, b, y, head);
        for (i = head; i + 8 <= n; i += 8) T::stream8(y + i, swiglu8(T::load8(a + i), T::load8(b + i)));
    } else {
        for (; i + 8 <= n; i += 8) T::store8(y + i, swiglu8(T::load8(a + i), T::load8(b + i)));
    }
    if (i < n) swiglu_partial<T>(a + i, b + i, y + i, n - i);
}

template <hb_dtype D>
void swi_glu_all(const hb_tensor& input, const hb_tensor& output, int64_t outer, int64_t run, int threads) {
    using T = Dtype<D>;
    const auto* in = static_cast<const typename T::Storage*>(input.data);
    auto* out = static_cast<typename T::Storage*>(output.data);
    const int64_t n = outer * run;
    const bool stream = n * static_cast<int64_t>(sizeof(typename T::Storage)) >= kStreamMinBytes;
    for_each_thread_range(out, sizeof(typename T::Storage), n, threads, [&](int64_t begin, int64_t end) {
        // A thread's range of the output may cross runs; walk it run by run.
        for (int64_t i = begin; i < end;) {
            const int64_t o = i / run;
            const int64_t k = i % run;
            const int64_t length = std::min(end - i, run - k);
            const auto* a = in + o * 2 * run + k;
            swiglu_run<T>(a, a + run, out + i, length, stream);
            i += length;
        }
        if (stream) _mm_sfence();  // make the streamed lines visible before the kernel returns
    });
}

#else  // portable scalar path

template <hb_dtype D>
void swi_glu_all(const hb_tensor& input, const hb_tensor& output, int64_t outer, int64_t run, int threads) {
    using T = Dtype<D>;
    const auto* in = static_cast<const typename T::Storage*>(input.data);
    auto* out = static_cast<typename T::Storage*>(output.data);
    for_each_thread_range(out, sizeof(typename T::Storage), outer * run, threads, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const int64_t o = i / run;
            const int64_t k = i % run;
            const float a = T::to_float(in[o * 2 * run + k]);
            const float b = T::to_float(in[o * 2 * run + run + k]);
            const float silu = a == -INFINITY ? 0.0f : a / (1.0f + std::exp(-a));
            out[i] = T::from_float(silu * b);
        }
    });
}

#endif

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* in_arg = hb_input(call, "input");
    const hb_arg* out_arg = hb_output(call, "output");
    if (!in_arg || !out_arg || in_arg->count != 1 || out_arg->count != 1)
        return hb_fail(call, 1, "swi_glu: expected one input tensor `input` and one output tensor `output`");
    const hb_tensor& input = in_arg->tensors[0];
    const hb_tensor& output = out_arg->tensors[0];
    if (!hb_is_contiguous(&input) || !hb_is_contiguous(&output))
        return hb_fail(call, 3, "swi_glu: only contiguous tensors are supported");

    int64_t dim = hb_attr_int(call, "dim", -1);
    if (dim < 0) dim += input.rank;
    if (input.rank < 1 || dim < 0 || dim >= input.rank)
        return hb_fail(call, 4, "swi_glu: dim is out of range for the input's rank");
    if (input.shape[dim] % 2 != 0)
        return hb_fail(call, 4, "swi_glu: the split dimension must have an even size");
    if (output.dtype != input.dtype || output.rank != input.rank)
        return hb_fail(call, 2, "swi_glu: output must have the dtype and rank of input");
    for (int32_t d = 0; d < input.rank; ++d) {
        const int64_t expected = d == dim ? input.shape[d] / 2 : input.shape[d];
        if (output.shape[d] != expected)
            return hb_fail(call, 2, "swi_glu: output must have input's shape with dim halved");
    }

    int64_t outer = 1;
    int64_t inner = 1;
    for (int32_t d = 0; d < dim; ++d) outer *= input.shape[d];
    for (int32_t d = static_cast<int32_t>(dim) + 1; d < input.rank; ++d) inner *= input.shape[d];
    const int64_t run = input.shape[dim] / 2 * inner;
    if (outer * run == 0) return 0;

    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (input.dtype) {
        case HB_FLOAT32: swi_glu_all<HB_FLOAT32>(input, output, outer, run, threads); return 0;
        case HB_FLOAT16: swi_glu_all<HB_FLOAT16>(input, output, outer, run, threads); return 0;
        case HB_BFLOAT16: swi_glu_all<HB_BFLOAT16>(input, output, outer, run, threads); return 0;
        default: return hb_fail(call, 2, "swi_glu: input must be float32, float16 or bfloat16");
    }
}
