/*
 * fp16 and bf16 conversions with round-to-nearest-even, in portable C.
 *
 * The harness uses these same functions to generate inputs and to round goldens, so a
 * kernel that converts with them agrees with the harness bit for bit. Overflow rounds to
 * infinity, NaN stays NaN (quiet), subnormals are kept.
 */
#ifndef HAPBENCH_HALF_H
#define HAPBENCH_HALF_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline uint32_t hb_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float hb_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float hb_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) /* inf or NaN */
        return hb_bits_f32(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) {
        if (mantissa == 0) return hb_bits_f32(sign);
        /* subnormal: value = mantissa * 2^-24 */
        float magnitude = (float)mantissa * 5.9604644775390625e-8f;
        return sign ? -magnitude : magnitude;
    }
    return hb_bits_f32(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

static inline uint16_t hb_f32_to_f16(float f) {
    uint32_t u = hb_f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t abs_bits = u & 0x7fffffffu;
    if (abs_bits > 0x7f800000u) /* NaN: keep it quiet and non-zero */
        return (uint16_t)(sign | 0x7e00u | ((abs_bits >> 13) & 0x3ffu));
    if (abs_bits >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (abs_bits < 0x38800000u) { /* below the smallest normal 2^-14: subnormal or zero */
        /* Adding 0.5 makes the FPU round the mantissa at 2^-24 with ties to even. */
        float magnitude = hb_bits_f32(abs_bits) + 0.5f;
        return (uint16_t)(sign | (hb_f32_bits(magnitude) - 0x3f000000u));
    }
    uint32_t mantissa_odd = (abs_bits >> 13) & 1u;
    abs_bits += 0xc8000fffu + mantissa_odd; /* rebias exponent (-112 << 23) and round */
    return (uint16_t)(sign | (abs_bits >> 13));
}

static inline float hb_bf16_to_f32(uint16_t b) { return hb_bits_f32((uint32_t)b << 16); }

static inline uint16_t hb_f32_to_bf16(float f) {
    uint32_t u = hb_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

#ifdef __cplusplus
}
#endif

#endif /* HAPBENCH_HALF_H */
