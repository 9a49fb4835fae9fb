#include "core/dtype_blocks.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "hapbench/half.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hb {

namespace {

// fp64 -> fp32 rounding to odd: the float nearest zero of the two around v (v itself when
// exact; the largest finite float when |v| overflows), with its last bit set when inexact.
// Written without calls so that the loop vectorizes.
__attribute__((always_inline)) inline void round_to_odd(const double* in, std::size_t count, float* out) {
    for (std::size_t i = 0; i < count; ++i) {
        const double v = in[i];
        const float f = static_cast<float>(v);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const double back = static_cast<double>(f);
        // Bitwise, not short-circuit, so that the loop has no branch.
        const std::uint32_t inexact = static_cast<std::uint32_t>(back != v) & static_cast<std::uint32_t>(v == v);
        const std::uint32_t overflow = inexact & static_cast<std::uint32_t>((bits & 0x7fffffffu) == 0x7f800000u);
        const std::uint32_t away = inexact & static_cast<std::uint32_t>(std::fabs(back) > std::fabs(v));
        const std::uint32_t toward_zero = bits - away;
        const std::uint32_t saturated = (bits & 0x80000000u) | 0x7f7fffffu;
        const std::uint32_t keep = overflow - 1u;  // all ones unless the value overflowed
        bits = ((saturated & ~keep) | (toward_zero & keep)) | inexact;
        std::memcpy(&out[i], &bits, 4);
    }
}

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void floats_to_f16_f16c(const float* in, std::size_t count, std::uint16_t* out) {
    std::size_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < count; ++i) out[i] = hb_f32_to_f16(in[i]);
}

__attribute__((target("avx,f16c"))) void f16_to_floats_f16c(const std::uint16_t* in, std::size_t count, float* out) {
    std::size_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
    for (; i < count; ++i) out[i] = hb_f16_to_f32(in[i]);
}

bool has_f16c() {
    static const bool supported = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
    return supported;
}
#endif

// store_element's integer rule over a block, the type chosen once, not per element.
template <typename I>
void narrow_integers(const double* in, std::size_t count, void* out) {
    auto* p = static_cast<I*>(out);
    for (std::size_t i = 0; i < count; ++i) p[i] = saturate_integer<I>(in[i]);
}

}  // namespace

// Built for AVX-512, AVX2 and the x86-64 base (integer and exact conversions only: every
// variant gives the same bits).
__attribute__((target_clones("avx512f", "avx2", "default"))) void narrow_block(const double* in, std::size_t count,
                                                                                  DType t, void* out) {
    switch (t) {
        case DType::f64: std::memcpy(out, in, count * sizeof(double)); return;
        case DType::f32: {
            auto* f = static_cast<float*>(out);
            for (std::size_t i = 0; i < count; ++i) f[i] = static_cast<float>(in[i]);
            return;
        }
        case DType::f16:
        case DType::bf16: {
            float odd[256];
            auto* bits = static_cast<std::uint16_t*>(out);
            for (std::size_t at = 0; at < count; at += 256) {
                const std::size_t n = count - at < 256 ? count - at : 256;
                round_to_odd(in + at, n, odd);
                if (t == DType::bf16) {
                    // hb_f32_to_bf16 without its branch, so that the loop vectorizes.
                    for (std::size_t i = 0; i < n; ++i) {
                        std::uint32_t u;
                        std::memcpy(&u, &odd[i], 4);
                        const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
                        const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
                        bits[at + i] = static_cast<std::uint16_t>(nan ? (u >> 16) | 0x0040u : rounded);
                    }
                    continue;
                }
#if defined(__x86_64__)
                if (has_f16c()) {
                    floats_to_f16_f16c(odd, n, bits + at);
                    continue;
                }
#endif
                for (std::size_t i = 0; i < n; ++i) bits[at + i] = hb_f32_to_f16(odd[i]);
            }
            return;
        }
        case DType::i8: narrow_integers<std::int8_t>(in, count, out); return;
        case DType::u8: narrow_integers<std::uint8_t>(in, count, out); return;
        case DType::i16: narrow_integers<std::int16_t>(in, count, out); return;
        case DType::i32: narrow_integers<std::int32_t>(in, count, out); return;
        case DType::i64: narrow_integers<std::int64_t>(in, count, out); return;
        case DType::boolean:
            for (std::size_t i = 0; i < count; ++i) store_element(out, i, t, in[i]);
            return;
    }
}


namespace {
template <typename T>
__attribute__((always_inline)) inline void widen_plain(const void* in, std::size_t count, double* out) {
    const T* v = static_cast<const T*>(in);
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<double>(v[i]);
}
}  // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) void widen_block(const void* in, std::size_t count, DType t,
                                                                                 double* out) {
    switch (t) {
        case DType::f64: std::memcpy(out, in, count * sizeof(double)); return;
        case DType::f32: widen_plain<float>(in, count, out); return;
        case DType::i8: widen_plain<std::int8_t>(in, count, out); return;
        case DType::u8: widen_plain<std::uint8_t>(in, count, out); return;
        case DType::i16: widen_plain<std::int16_t>(in, count, out); return;
        case DType::i32: widen_plain<std::int32_t>(in, count, out); return;
        case DType::i64: widen_plain<std::int64_t>(in, count, out); return;
        case DType::boolean: {
            const auto* b = static_cast<const std::uint8_t*>(in);
            for (std::size_t i = 0; i < count; ++i) out[i] = b[i] ? 1.0 : 0.0;
            return;
        }
        case DType::bf16: {
            const auto* b = static_cast<const std::uint16_t*>(in);
            for (std::size_t i = 0; i < count; ++i) {
                const std::uint32_t u = static_cast<std::uint32_t>(b[i]) << 16;
                float f;
                std::memcpy(&f, &u, 4);
                out[i] = f;
            }
            return;
        }
        case DType::f16: {
            const auto* h = static_cast<const std::uint16_t*>(in);
            float wide[256];
            for (std::size_t at = 0; at < count; at += 256) {
                const std::size_t n = count - at < 256 ? count - at : 256;
#if defined(__x86_64__)
                if (has_f16c()) f16_to_floats_f16c(h + at, n, wide);
                else
#endif
                    for (std::size_t i = 0; i < n; ++i) wide[i] = hb_f16_to_f32(h[at + i]);
                for (std::size_t i = 0; i < n; ++i) out[at + i] = wide[i];
            }
            return;
        }
    }
}

void round_block(const double* in, std::size_t count, DType t, double* out) {
    if (t == DType::f64) {
        if (in != out) std::memmove(out, in, count * sizeof(double));
        return;
    }
    alignas(64) unsigned char storage[256 * 8];
    for (std::size_t at = 0; at < count; at += 256) {
        const std::size_t n = count - at < 256 ? count - at : 256;
        narrow_block(in + at, n, t, storage);
        widen_block(storage, n, t, out + at);
    }
}

}  // namespace hb
