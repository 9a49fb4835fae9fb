// Tuned apply_adam_w: one AdamW step, y only (operators.md):
//   m' = b1*m + (1-b1)*g;  v' = b2*v + (1-b2)*g^2;  u = (m'/c1)/(sqrt(v'/c2)+eps) (+ wd*var)
//   y = var -+ lr*u (+ when maximize), c1 = 1-b1^step, c2 = 1-b2^step.
// AVX2 + FMA, 8 lanes of fp32 math (F16C / bit-shift loads of fp16 and bf16, round to
// nearest even on store), the bias corrections folded into per-call reciprocals, thread
// ranges on 64-byte lines of y and non-temporal stores for large outputs (the harness starts
// every call cold, so a normal store would first read each line of y from memory).
// Without AVX2, FMA and F16C the same file builds a scalar loop.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define HB_TUNED_SIMD 1
#endif

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

constexpr int64_t kMinElementsPerThread = 16384;
constexpr int64_t kStreamMinBytes = 1 << 20;

struct Step {
    float lr_signed;  // -lr, or +lr with maximize
    float beta1, one_minus_beta1, beta2, one_minus_beta2, weight_decay, epsilon, inv_c1, inv_c2;
};

// ---- dtypes -------------------------------------------------------------------------------

template <hb_dtype D>
struct Dtype;

template <>
struct Dtype<HB_FLOAT32> {
    using S = float;
    static float load1(S v) { return v; }
    static S store1(float v) { return v; }
#ifdef HB_TUNED_SIMD
    static __m256 load(const S* p) { return _mm256_loadu_ps(p); }
    static void store(S* p, __m256 v, bool stream) {
        if (stream) _mm256_stream_ps(p, v);
        else _mm256_storeu_ps(p, v);
    }
#endif
};

template <>
struct Dtype<HB_FLOAT16> {
    using S = uint16_t;
    static float load1(S v) { return hb_f16_to_f32(v); }
    static S store1(float v) { return hb_f32_to_f16(v); }
#ifdef HB_TUNED_SIMD
    static __m256 load(const S* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    static void store(S* p, __m256 v, bool stream) {
        const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
        if (stream) _mm_stream_si128(reinterpret_cast<__m128i*>(p), h);
        else _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
    }
#endif
};

template <>
struct Dtype<HB_BFLOAT16> {
    using S = uint16_t;
    static float load1(S v) { return hb_bf16_to_f32(v); }
    static S store1(float v) { return hb_f32_to_bf16(v); }
#ifdef HB_TUNED_SIMD
    static __m256 load(const S* p) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    }
    // Round to nearest even on the high half; NaN stays a (quiet) NaN.
    static void store(S* p, __m256 v, bool stream) {
        const __m256i bits = _mm256_castps_si256(v);
        const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
        __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
        const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        rounded = _mm256_blendv_epi8(rounded, _mm256_or_si256(bits, _mm256_set1_epi32(0x400000)), nan);
        const __m256i hi = _mm256_srli_epi32(rounded, 16);
        const __m128i h = _mm_packus_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
        if (stream) _mm_stream_si128(reinterpret_cast<__m128i*>(p), h);
        else _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
    }
#endif
};

// ---- the step -----------------------------------------------------------------------------

inline float step1(float x, float g, float m, float v, const Step& s, bool decay) {
    const float m_new = s.beta1 * m + s.one_minus_beta1 * g;
    const float v_new = s.beta2 * v + s.one_minus_beta2 * g * g;
    float u = (m_new * s.inv_c1) / (std::sqrt(v_new * s.inv_c2) + s.epsilon);
    if (decay) u += x * s.weight_decay;
    return x + s.lr_signed * u;
}

template <hb_dtype D, bool Decay>
void adam_range(const typename Dtype<D>::S* const in[4], typename Dtype<D>::S* out, int64_t begin, int64_t end,
                const Step& s, bool stream) {
    using T = Dtype<D>;
    int64_t i = begin;
#ifdef HB_TUNED_SIMD
    // Scalar until y is aligned for the (streaming) vector store.
    const int64_t store_bytes = 8 * static_cast<int64_t>(sizeof(typename T::S));
    while (i < end && reinterpret_cast<uintptr_t>(out + i) % store_bytes != 0) {
        out[i] = T::store1(step1(T::load1(in[0][i]), T::load1(in[1][i]), T::load1(in[2][i]), T::load1(in[3][i]), s, Decay));
        ++i;
    }
    const __m256 b1 = _mm256_set1_ps(s.beta1), omb1 = _mm256_set1_ps(s.one_minus_beta1);
    const __m256 b2 = _mm256_set1_ps(s.beta2), omb2 = _mm256_set1_ps(s.one_minus_beta2);
    const __m256 inv_c1 = _mm256_set1_ps(s.inv_c1), inv_c2 = _mm256_set1_ps(s.inv_c2);
    const __m256 eps = _mm256_set1_ps(s.epsilon), wd = _mm256_set1_ps(s.weight_decay);
    const __m256 lr = _mm256_set1_ps(s.lr_signed);
    for (; i + 8 <= end; i += 8) {
        const __m256 x = T::load(in[0] + i), g = T::load(in[1] + i);
        const __m256 m_new = _mm256_fmadd_ps(b1, T::load(in[2] + i), _mm256_mul_ps(omb1, g));
        const __m256 v_new = _mm256_fmadd_ps(b2, T::load(in[3] + i), _mm256_mul_ps(omb2, _mm256_mul_ps(g, g)));
        const __m256 denom = _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(v_new, inv_c2)), eps);
        __m256 u = _mm256_div_ps(_mm256_mul_ps(m_new, inv_c1), denom);
        if constexpr (Decay) u = _mm256_fmadd_ps(x, wd, u);
        T::store(out + i, _mm256_fmadd_ps(lr, u, x), stream);
    }
#endif
    for (; i < end; ++i)
        out[i] = T::store1(step1(T::load1(in[0][i]), T::load1(in[1][i]), T::load1(in[2][i]), T::load1(in[3][i]), s, Decay));
}

template <hb_dtype D>
void adam_all(const hb_tensor* const tensors[4], const hb_tensor& y, const Step& s, int threads) {
    using S = typename Dtype<D>::S;
    const S* in[4];
    for (int k = 0; k < 4; ++k) in[k] = static_cast<const S*>(tensors[k]->data);
    S* out = static_cast<S*>(y.data);
    const int64_t n = hb_numel(&y);
    const bool stream = n * static_cast<int64_t>(sizeof(S)) >= kStreamMinBytes;
    const bool decay = s.weight_decay != 0.0f;
    const int team = static_cast<int>(std::min<int64_t>(std::max(threads, 1), std::max<int64_t>(1, n / kMinElementsPerThread)));
    const int64_t line = 64 / static_cast<int64_t>(sizeof(S));
#pragma omp parallel num_threads(team) if (team > 1)
    {
        const int t = omp_get_thread_num(), count = omp_get_num_threads();
        const int64_t lines = (n + line - 1) / line;
        const int64_t begin = std::min(n, lines * t / count * line), end = std::min(n, lines * (t + 1) / count * line);
        if (decay) adam_range<D, true>(in, out, begin, end, s, stream);
        else adam_range<D, false>(in, out, begin, end, s, stream);
#ifdef HB_TUNED_SIMD
        if (stream) _mm_sfence();
#endif
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const char* names[4] = {"var", "grad", "m", "v"};
    const hb_tensor* in[4];
    const hb_arg* y_arg = hb_output(call, "y");
    if (!y_arg || y_arg->count != 1) return hb_fail(call, 1, "apply_adam_w: expected output tensor y");
    const hb_tensor& y = y_arg->tensors[0];
    for (int k = 0; k < 4; ++k) {
        const hb_arg* a = hb_input(call, names[k]);
        if (!a || a->count != 1) return hb_fail(call, 1, "apply_adam_w: expected inputs var, grad, m and v");
        in[k] = &a->tensors[0];
        if (in[k]->dtype != y.dtype || hb_numel(in[k]) != hb_numel(&y) || !hb_is_contiguous(in[k]))
            return hb_fail(call, 2, "apply_adam_w: inputs must be contiguous with y's dtype and size");
    }
    if (!hb_is_contiguous(&y)) return hb_fail(call, 3, "apply_adam_w: only contiguous tensors are supported");

    const double beta1 = hb_attr_float(call, "beta1", 0.9), beta2 = hb_attr_float(call, "beta2", 0.999);
    const double step = static_cast<double>(hb_attr_int(call, "step", 1));
    const float lr = static_cast<float>(hb_attr_float(call, "lr", 1e-3));
    const Step s{hb_attr_int(call, "maximize", 0) != 0 ? lr : -lr,
                 static_cast<float>(beta1),
                 static_cast<float>(1.0 - beta1),
                 static_cast<float>(beta2),
                 static_cast<float>(1.0 - beta2),
                 static_cast<float>(hb_attr_float(call, "weight_decay", 0.0)),
                 static_cast<float>(hb_attr_float(call, "epsilon", 1e-8)),
                 static_cast<float>(1.0 / (1.0 - std::pow(beta1, step))),
                 static_cast<float>(1.0 / (1.0 - std::pow(beta2, step)))};
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (y.dtype) {
        case HB_FLOAT32: adam_all<HB_FLOAT32>(in, y, s, threads); return 0;
        case HB_FLOAT16: adam_all<HB_FLOAT16>(in, y, s, threads); return 0;
        case HB_BFLOAT16: adam_all<HB_BFLOAT16>(in, y, s, threads); return 0;
        default: return hb_fail(call, 2, "apply_adam_w: dtype must be float32, float16 or bfloat16");
    }
}
