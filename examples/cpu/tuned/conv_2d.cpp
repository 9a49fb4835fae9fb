// Tuned conv_2d (x [N, Cin, H, W], filter [Cout, Cin, Kh, Kw], bias [Cout], strides, pads
// [top, bottom, left, right], dilations; y [N, Cout, Ho, Wo]; float32, float16 or bfloat16).
//
// 1. x is copied once into a zero-padded buffer whose rows are split by column phase
//    (column k * sw + p goes to phase p, entry k), so that every tap of every output row reads
//    a contiguous run whatever the stride: float32 for float32/float16 x, and channel pairs
//    interleaved in bfloat16 for bfloat16 x (the operand layout of vdpbf16ps). The padding is
//    real zeros, multiplied like any tap (0 * inf = NaN, as the operator defines).
// 2. The filter is packed for the micro-kernel.
// 3. Two register-blocked AVX-512 micro-kernels, chosen by which wastes fewer lanes:
//    wide  - 16 output columns per vector, OB output channels x WB vectors of accumulators,
//            the filter value broadcast (for images wider than they are deep);
//    deep  - 16 output channels per vector, 12 output positions x 2 vectors of accumulators,
//            the input value broadcast (deep layers on small images).
//    float32 uses FMA; bfloat16 uses AVX512-BF16 dot products (vdpbf16ps: two input channels
//    per instruction, exact products, fp32 sums). The reduction runs over blocks of input
//    channels whose fp32 partial sums are added in memory, which keeps rounding near that of
//    a blocked GEMM on long reductions.
// OpenMP over (image, channel block, output row) or (image, channel block, position block).
// Without AVX-512 (or AVX512-BF16 for bfloat16) a scalar fp32 path computes the same from the
// same padded buffer.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

#if defined(__AVX512F__) && defined(__AVX512BW__)
constexpr bool kAvx512 = true;
#else
constexpr bool kAvx512 = false;
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512BF16__)
constexpr bool kBf16Dot = true;
#else
constexpr bool kBf16Dot = false;
#endif

constexpr int64_t kChannelBlock = 64;  // input channels (fp32) per partial sum; 32 pairs for bf16
constexpr int kDeepPositions = 12;     // deep kernel: output positions per block
constexpr int kDeepVectors = 2;        // deep kernel: 16-channel vectors per block

struct Plan {
    int64_t n = 1, cin = 1, cout = 1, h = 1, w = 1, kh = 1, kw = 1, oh = 1, ow = 1;
    int64_t sh = 1, sw = 1, dh = 1, dw = 1, top = 0, left = 0;
    int64_t hp = 1, kp = 1;   // padded rows; entries per phase row
    int64_t planes = 1;       // padded planes per image: Cin (fp32) or ceil(Cin / 2) (bf16 pairs)
    bool pairs = false;       // bfloat16 with vdpbf16ps
    bool deep = false;
    int ob = 8, wb = 1;       // wide kernel blocking
    int64_t oc_pad = 8;       // Cout rounded up to the kernel's channel block
    size_t input_bytes = 0, filter_bytes = 0;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }


bool make_plan(const hb_call* call, Plan& p, const char** error) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* w_arg = hb_input(call, "filter");
    const hb_arg* b_arg = hb_input(call, "bias");
    const hb_arg* y_arg = hb_output(call, "y");
    *error = "conv_2d: expected inputs `x`, `filter`, `bias` and output `y`";
    if (!x_arg || !w_arg || !b_arg || !y_arg || !b_arg->present) return false;
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& wt = w_arg->tensors[0];
    const hb_tensor& bias = b_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    *error = "conv_2d: only contiguous tensors are supported";
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&wt) || !hb_is_contiguous(&bias) || !hb_is_contiguous(&y)) return false;
    *error = "conv_2d: x, filter, bias and y must share one dtype: float32, float16 or bfloat16";
    if ((x.dtype != HB_FLOAT32 && x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16) || wt.dtype != x.dtype ||
        bias.dtype != x.dtype || y.dtype != x.dtype)
        return false;
    *error = "conv_2d: x [N, Cin, H, W], filter [Cout, Cin, Kh, Kw], bias [Cout], y [N, Cout, Ho, Wo] expected";
    if (x.rank != 4 || wt.rank != 4 || y.rank != 4 || bias.rank != 1 || wt.shape[1] != x.shape[1] ||
        bias.shape[0] != wt.shape[0] || y.shape[0] != x.shape[0] || y.shape[1] != wt.shape[0])
        return false;
    const hb_attr* strides = hb_attr_find(call, "strides");
    const hb_attr* pads = hb_attr_find(call, "pads");
    const hb_attr* dilations = hb_attr_find(call, "dilations");
    *error = "conv_2d: strides [sh, sw], pads [top, bottom, left, right] and dilations [dh, dw] expected";
    if (!strides || strides->type != HB_ATTR_INT_LIST || strides->count != 2 || !pads || pads->type != HB_ATTR_INT_LIST ||
        pads->count != 4 || (dilations && (dilations->type != HB_ATTR_INT_LIST || dilations->count != 2)))
        return false;
    p.n = x.shape[0], p.cin = x.shape[1], p.h = x.shape[2], p.w = x.shape[3];
    p.cout = wt.shape[0], p.kh = wt.shape[2], p.kw = wt.shape[3], p.oh = y.shape[2], p.ow = y.shape[3];
    p.sh = strides->ints[0], p.sw = strides->ints[1];
    p.dh = dilations ? dilations->ints[0] : 1, p.dw = dilations ? dilations->ints[1] : 1;
    p.top = pads->ints[0], p.left = pads->ints[2];
    *error = "conv_2d: strides and dilations must be at least 1, pads at least 0";
    if (p.sh < 1 || p.sw < 1 || p.dh < 1 || p.dw < 1 || p.top < 0 || p.left < 0 || pads->ints[1] < 0 || pads->ints[3] < 0)
        return false;
    *error = "conv_2d: y's spatial size does not follow from x, the filter and the attributes";
    if (p.oh != (p.h + pads->ints[0] + pads->ints[1] - p.dh * (p.kh - 1) - 1) / p.sh + 1 ||
        p.ow != (p.w + pads->ints[2] + pads->ints[3] - p.dw * (p.kw - 1) - 1) / p.sw + 1 || p.oh < 1 || p.ow < 1)
        return false;

    p.pairs = x.dtype == HB_BFLOAT16 && kBf16Dot;
    p.planes = p.pairs ? ceil_div(p.cin, 2) : p.cin;
    p.hp = (p.oh - 1) * p.sh + (p.kh - 1) * p.dh + 1;

    // Kernel choice by lane use: wide uses Wo of its column lanes and Cout of its OB
    // channels; deep uses Cout of its 32 channels and Ho*Wo of its 12 positions.
    p.ob = p.cout >= 5 ? 8 : p.cout >= 3 ? 4 : p.cout == 2 ? 2 : 1;
    const int64_t vectors = ceil_div(p.ow, 16);
    const int options[][4] = {{1, 2, 3, 3}, {3, 6, 6, 6}, {6, 12, 12, 12}, {12, 24, 24, 24}};
    const int* wbs = options[p.ob == 8 ? 0 : p.ob == 4 ? 1 : p.ob == 2 ? 2 : 3];
    p.wb = wbs[3];
    for (int k = 0; k < 4; ++k)
        if (wbs[k] >= vectors) {
            p.wb = wbs[k];
            break;
        }
    const double wide_use = static_cast<double>(p.cout) / static_cast<double>(p.ob * ceil_div(p.cout, p.ob)) *
                            static_cast<double>(p.ow) / static_cast<double>(16 * p.wb * ceil_div(p.ow, 16 * p.wb));
    const int64_t positions = p.oh * p.ow, deep_channels = 16 * kDeepVectors;
    const double deep_use = static_cast<double>(p.cout) / static_cast<double>(deep_channels * ceil_div(p.cout, deep_channels)) *
                            static_cast<double>(positions) /
                            static_cast<double>(kDeepPositions * ceil_div(positions, kDeepPositions));
    p.deep = kAvx512 && deep_use > 1.1 * wide_use;
    p.oc_pad = p.deep ? deep_channels * ceil_div(p.cout, deep_channels) : p.ob * ceil_div(p.cout, p.ob);
    // Entries per phase row: every tap's offset past the last vector the wide kernel loads
    // (its 16 WB-lane steps run past Wo; the surplus holds zeros), or past Wo (deep kernel).
    const int64_t columns = p.deep ? p.ow : ceil_div(p.ow, 16 * p.wb) * 16 * p.wb;
    p.kp = columns + (p.kw - 1) * p.dw / p.sw + 1;
    // A float, or a bf16 pair, per entry.
    p.input_bytes = static_cast<size_t>(p.n * p.planes * p.hp * p.sw * p.kp) * 4;
    p.filter_bytes = static_cast<size_t>(p.planes * p.kh * p.kw * p.oc_pad) * 4;
    return true;
}

float load(const hb_tensor& t, int64_t i) {
    switch (t.dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        default: return static_cast<const float*>(t.data)[i];
    }
}

uint16_t load_bits(const hb_tensor& t, int64_t i) { return static_cast<const uint16_t*>(t.data)[i]; }

void store(const hb_tensor& t, int64_t i, float v) {
    switch (t.dtype) {
        case HB_FLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_f16(v); break;
        case HB_BFLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_bf16(v); break;
        default: static_cast<float*>(t.data)[i] = v; break;
    }
}

// ---------------------------------------------------------------- step 1: padded input

// fp32 rows: [n][c][hp][sw][kp]; entry (rp, phase p, k) holds x[rp - top][k * sw + p - left].
void pad_input_f32(const Plan& p, const hb_tensor& x, float* out, int threads) {
    const int64_t rows = p.n * p.cin * p.hp;
    const int64_t row_len = p.sw * p.kp;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t rp = row % p.hp, plane = row / p.hp;
        float* dst = out + row * row_len;
        const int64_t r = rp - p.top;
        if (r < 0 || r >= p.h) {
            std::memset(dst, 0, static_cast<size_t>(row_len) * sizeof(float));
            continue;
        }
        const int64_t src = (plane * p.h + r) * p.w;
        if (p.sw == 1) {
            const int64_t body = std::min(p.w, p.kp - p.left);
            std::memset(dst, 0, static_cast<size_t>(p.left) * sizeof(float));
            if (x.dtype == HB_FLOAT32) {
                std::memcpy(dst + p.left, static_cast<const float*>(x.data) + src, static_cast<size_t>(body) * sizeof(float));
            } else {
                const auto* s = static_cast<const uint16_t*>(x.data) + src;
                int64_t v = 0;
#if defined(__AVX512F__)
                if (x.dtype == HB_FLOAT16)
                    for (; v + 16 <= body; v += 16)
                        _mm512_storeu_ps(dst + p.left + v, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + v))));
#endif
                for (; v < body; ++v) dst[p.left + v] = x.dtype == HB_FLOAT16 ? hb_f16_to_f32(s[v]) : hb_bf16_to_f32(s[v]);
            }
            std::fill(dst + p.left + body, dst + row_len, 0.f);
            continue;
        }
        for (int64_t ph = 0; ph < p.sw; ++ph)
            for (int64_t k = 0; k < p.kp; ++k) {
                const int64_t col = k * p.sw + ph - p.left;
                dst[ph * p.kp + k] = col >= 0 && col < p.w ? load(x, src + col) : 0.f;
            }
    }
}

// bf16 channel pairs: [n][c2][hp][sw][kp][2], channels 2 c2 and 2 c2 + 1 (0 past Cin).
void pad_input_pairs(const Plan& p, const hb_tensor& x, uint16_t* out, int threads) {
    const int64_t rows = p.n * p.planes * p.hp;
    const int64_t row_len = p.sw * p.kp;
    const auto* xs = static_cast<const uint16_t*>(x.data);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t rp = row % p.hp, image = row / (p.hp * p.planes), c2 = (row / p.hp) % p.planes;
        uint16_t* dst = out + row * row_len * 2;
        const int64_t r = rp - p.top;
        std::memset(dst, 0, static_cast<size_t>(row_len) * 2 * sizeof(uint16_t));
        if (r < 0 || r >= p.h) continue;
        for (int half = 0; half < 2; ++half) {
            const int64_t c = 2 * c2 + half;
            if (c >= p.cin) break;
            const uint16_t* src = xs + ((image * p.cin + c) * p.h + r) * p.w;
            for (int64_t ph = 0; ph < p.sw; ++ph) {
                const int64_t k0 = std::max<int64_t>(0, ceil_div(p.left - ph, p.sw));
                for (int64_t k = k0; k < p.kp; ++k) {
                    const int64_t col = k * p.sw + ph - p.left;
                    if (col >= p.w) break;
                    dst[(ph * p.kp + k) * 2 + half] = src[col];
                }
            }
        }
    }
}

// ---------------------------------------------------------------- step 2: packed filter

// Wide kernel: [block][plane][tap][OB] (pairs: [block][c2][tap][OB][2]); deep kernel:
// [plane][tap][oc_pad] (pairs: [c2][tap][oc_pad][2]). Channels past Cout are zeros.
void pack_filter(const Plan& p, const hb_tensor& wt, void* out, int threads) {
    const int64_t taps = p.kh * p.kw;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t plane = 0; plane < p.planes; ++plane)
        for (int64_t t = 0; t < taps; ++t)
            for (int64_t o = 0; o < p.oc_pad; ++o) {
                const int64_t at = p.deep ? (plane * taps + t) * p.oc_pad + o
                                          : (((o / p.ob) * p.planes + plane) * taps + t) * p.ob + o % p.ob;
                if (p.pairs) {
                    uint16_t* d = static_cast<uint16_t*>(out) + at * 2;
                    for (int half = 0; half < 2; ++half) {
                        const int64_t c = 2 * plane + half;
                        d[half] = o < p.cout && c < p.cin ? load_bits(wt, (o * p.cin + c) * taps + t) : uint16_t{0};
                    }
                } else {
                    static_cast<float*>(out)[at] = o < p.cout ? load(wt, (o * p.cin + plane) * taps + t) : 0.f;
                }
            }
}

// ---------------------------------------------------------------- step 3: micro-kernels

// Output tile (fp32 sums, bias added here) into y at y_offset + o * o_stride + lane.
void store_tile_row(const hb_tensor& y, int64_t at, const float* sums, int64_t count, float bias) {
    for (int64_t l = 0; l < count; ++l) store(y, at + l, sums[l] + bias);
}

#if defined(__AVX512F__) && defined(__AVX512BW__)

// Wide kernel over one output row: OB channels x (16 WB) columns per step.
template <int OB, int WB, bool Pairs>
void wide_row(const Plan& p, const void* xin, const void* win, const hb_tensor& bias, const hb_tensor& y, int64_t image,
              int64_t block, int64_t i) {
    const int64_t taps = p.kh * p.kw, plane_len = p.hp * p.sw * p.kp;
    const int64_t chunk = Pairs ? kChannelBlock / 2 : kChannelBlock;
    const int64_t count = std::min<int64_t>(OB, p.cout - block * OB);
    alignas(64) float total[OB][WB * 16];
    for (int64_t j0 = 0; j0 < p.ow; j0 += 16 * WB) {
        for (int o = 0; o < OB; ++o) std::fill(total[o], total[o] + WB * 16, 0.f);
        for (int64_t c0 = 0; c0 < p.planes; c0 += chunk) {
            __m512 acc[OB][WB];
            for (int o = 0; o < OB; ++o)
                for (int v = 0; v < WB; ++v) acc[o][v] = _mm512_setzero_ps();
            for (int64_t c = c0; c < std::min(p.planes, c0 + chunk); ++c) {
                const int64_t plane_base = (image * p.planes + c) * plane_len;
                for (int64_t a = 0; a < p.kh; ++a) {
                    const int64_t row_base = plane_base + (i * p.sh + a * p.dh) * p.sw * p.kp;
                    for (int64_t b = 0; b < p.kw; ++b) {
                        const int64_t start = row_base + ((b * p.dw) % p.sw) * p.kp + (b * p.dw) / p.sw + j0;
                        const int64_t wat = ((block * p.planes + c) * taps + a * p.kw + b) * OB;
                        if constexpr (Pairs) {
#if defined(__AVX512BF16__)
                            const auto* xs = static_cast<const uint16_t*>(xin) + start * 2;
                            const auto* ws = static_cast<const int32_t*>(win) + wat;
                            __m512bh xv[WB];
                            for (int v = 0; v < WB; ++v) xv[v] = (__m512bh)_mm512_loadu_si512(xs + v * 32);
                            for (int o = 0; o < OB; ++o) {
                                const __m512bh wv = (__m512bh)_mm512_set1_epi32(ws[o]);
                                for (int v = 0; v < WB; ++v) acc[o][v] = _mm512_dpbf16_ps(acc[o][v], xv[v], wv);
                            }
#endif
                        } else {
                            const float* xs = static_cast<const float*>(xin) + start;
                            const float* ws = static_cast<const float*>(win) + wat;
                            __m512 xv[WB];
                            for (int v = 0; v < WB; ++v) xv[v] = _mm512_loadu_ps(xs + v * 16);
                            for (int o = 0; o < OB; ++o) {
                                const __m512 wv = _mm512_set1_ps(ws[o]);
                                for (int v = 0; v < WB; ++v) acc[o][v] = _mm512_fmadd_ps(xv[v], wv, acc[o][v]);
                            }
                        }
                    }
                }
            }
            for (int o = 0; o < OB; ++o)
                for (int v = 0; v < WB; ++v)
                    _mm512_store_ps(total[o] + v * 16, _mm512_add_ps(_mm512_load_ps(total[o] + v * 16), acc[o][v]));
        }
        const int64_t columns = std::min<int64_t>(16 * WB, p.ow - j0);
        for (int64_t o = 0; o < count; ++o) {
            const int64_t oc = block * OB + o;
            store_tile_row(y, ((image * p.cout + oc) * p.oh + i) * p.ow + j0, total[o], columns, load(bias, oc));
        }
    }
}

// Deep kernel over one block of 12 output positions and 32 output channels.
template <bool Pairs>
void deep_block(const Plan& p, const void* xin, const void* win, const hb_tensor& bias, const hb_tensor& y, int64_t image,
                int64_t block, int64_t pos0) {
    constexpr int PB = kDeepPositions, OV = kDeepVectors;
    const int64_t taps = p.kh * p.kw, plane_len = p.hp * p.sw * p.kp, positions = p.oh * p.ow;
    const int64_t chunk = Pairs ? kChannelBlock / 2 : kChannelBlock;
    int64_t base[PB];
    for (int q = 0; q < PB; ++q) {
        const int64_t pos = std::min(pos0 + q, positions - 1);  // past the end: repeat the last
        base[q] = (pos / p.ow) * p.sh * p.sw * p.kp + pos % p.ow;
    }
    int64_t tap_offset[64];
    int64_t tap_count = 0;
    std::vector<int64_t> tap_offsets_heap;
    int64_t* offsets = tap_offset;
    if (taps > 64) {
        tap_offsets_heap.resize(static_cast<size_t>(taps));
        offsets = tap_offsets_heap.data();
    }
    for (int64_t a = 0; a < p.kh; ++a)
        for (int64_t b = 0; b < p.kw; ++b)
            offsets[tap_count++] = (a * p.dh * p.sw + (b * p.dw) % p.sw) * p.kp + (b * p.dw) / p.sw;
    alignas(64) float total[PB][OV * 16] = {};
    for (int64_t c0 = 0; c0 < p.planes; c0 += chunk) {
        __m512 acc[PB][OV];
        for (int q = 0; q < PB; ++q)
            for (int v = 0; v < OV; ++v) acc[q][v] = _mm512_setzero_ps();
        for (int64_t c = c0; c < std::min(p.planes, c0 + chunk); ++c) {
            const int64_t plane_base = (image * p.planes + c) * plane_len;
            for (int64_t t = 0; t < taps; ++t) {
                const int64_t wat = (c * taps + t) * p.oc_pad + block * OV * 16;
                const int64_t xat = plane_base + offsets[t];
                if constexpr (Pairs) {
#if defined(__AVX512BF16__)
                    const auto* ws = static_cast<const uint16_t*>(win) + wat * 2;
                    const auto* xs = static_cast<const int32_t*>(xin) + xat;
                    __m512bh wv[OV];
                    for (int v = 0; v < OV; ++v) wv[v] = (__m512bh)_mm512_loadu_si512(ws + v * 32);
                    for (int q = 0; q < PB; ++q) {
                        const __m512bh xv = (__m512bh)_mm512_set1_epi32(xs[base[q]]);
                        for (int v = 0; v < OV; ++v) acc[q][v] = _mm512_dpbf16_ps(acc[q][v], xv, wv[v]);
                    }
#endif
                } else {
                    const float* ws = static_cast<const float*>(win) + wat;
                    const float* xs = static_cast<const float*>(xin) + xat;
                    __m512 wv[OV];
                    for (int v = 0; v < OV; ++v) wv[v] = _mm512_loadu_ps(ws + v * 16);
                    for (int q = 0; q < PB; ++q) {
                        const __m512 xv = _mm512_set1_ps(xs[base[q]]);
                        for (int v = 0; v < OV; ++v) acc[q][v] = _mm512_fmadd_ps(xv, wv[v], acc[q][v]);
                    }
                }
            }
        }
        for (int q = 0; q < PB; ++q)
            for (int v = 0; v < OV; ++v)
                _mm512_store_ps(total[q] + v * 16, _mm512_add_ps(_mm512_load_ps(total[q] + v * 16), acc[q][v]));
    }
    const int64_t oc0 = block * OV * 16;
    for (int64_t l = 0; l < OV * 16 && oc0 + l < p.cout; ++l) {
        const float b = load(bias, oc0 + l);
        const int64_t out = (image * p.cout + oc0 + l) * positions;
        for (int q = 0; q < PB && pos0 + q < positions; ++q) store(y, out + pos0 + q, total[q][l] + b);
    }
}

template <bool Pairs>
void run_wide(const Plan& p, const void* xin, const void* win, const hb_tensor& bias, const hb_tensor& y, int64_t image,
              int64_t block, int64_t i) {
    switch (p.ob * 100 + p.wb) {
        case 801: wide_row<8, 1, Pairs>(p, xin, win, bias, y, image, block, i); break;
        case 802: wide_row<8, 2, Pairs>(p, xin, win, bias, y, image, block, i); break;
        case 803: wide_row<8, 3, Pairs>(p, xin, win, bias, y, image, block, i); break;
        case 403: wide_row<4, 3, Pairs>(p, xin, win, bias, y, image, block, i); break;
        case 406: wide_row<4, 6, Pairs>(p, xin, win, bias, y, image, block, i); break;
        case 206: wide_row<2, 6, Pairs>(p, xin, win, bias, y, image, block, i); break;
        case 212: wide_row<2, 12, Pairs>(p, xin, win, bias, y, image, block, i); break;
        case 112: wide_row<1, 12, Pairs>(p, xin, win, bias, y, image, block, i); break;
        default: wide_row<1, 24, Pairs>(p, xin, win, bias, y, image, block, i); break;
    }
}

#endif

#if !(defined(__AVX512F__) && defined(__AVX512BW__))
// Without AVX-512: fp32 from the fp32 padded buffer and the wide filter pack.
void scalar_row(const Plan& p, const float* xin, const float* win, const hb_tensor& bias, const hb_tensor& y, int64_t image,
                int64_t block, int64_t i, float* sums) {
    const int64_t taps = p.kh * p.kw, plane_len = p.hp * p.sw * p.kp;
    const int64_t count = std::min<int64_t>(p.ob, p.cout - block * p.ob);
    for (int64_t o = 0; o < count; ++o) {
        float* acc = sums;
        std::fill(acc, acc + p.ow, 0.f);
        for (int64_t c = 0; c < p.cin; ++c)
            for (int64_t a = 0; a < p.kh; ++a)
                for (int64_t b = 0; b < p.kw; ++b) {
                    const float wv = win[((block * p.planes + c) * taps + a * p.kw + b) * p.ob + o];
                    const float* xs = xin + (image * p.planes + c) * plane_len + (i * p.sh + a * p.dh) * p.sw * p.kp +
                                      ((b * p.dw) % p.sw) * p.kp + (b * p.dw) / p.sw;
                    for (int64_t j = 0; j < p.ow; ++j) acc[j] += wv * xs[j];
                }
        const int64_t oc = block * p.ob + o;
        store_tile_row(y, ((image * p.cout + oc) * p.oh + i) * p.ow, acc, p.ow, load(bias, oc));
    }
}
#endif

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Plan p;
    const char* error = nullptr;
    if (!make_plan(call, p, &error)) return 0;  // the kernel reports the error
    return p.input_bytes + p.filter_bytes + 128;
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Plan p;
    const char* error = nullptr;
    if (!make_plan(call, p, &error)) return hb_fail(call, 2, error);
    if (!call->workspace || call->workspace_bytes < p.input_bytes + p.filter_bytes + 128)
        return hb_fail(call, 4, "conv_2d: the workspace from hapbench_workspace_bytes is missing");
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& wt = hb_input(call, "filter")->tensors[0];
    const hb_tensor& bias = hb_input(call, "bias")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    auto* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(call->workspace) + 63) / 64 * 64);
    void* xin = base;
    void* win = base + (p.input_bytes + 63) / 64 * 64;

    if (p.pairs) pad_input_pairs(p, x, static_cast<uint16_t*>(xin), threads);
    else pad_input_f32(p, x, static_cast<float*>(xin), threads);
    pack_filter(p, wt, win, threads);

#if defined(__AVX512F__) && defined(__AVX512BW__)
    if (p.deep) {
        const int64_t blocks = p.oc_pad / (16 * kDeepVectors), position_blocks = ceil_div(p.oh * p.ow, kDeepPositions);
        const int64_t tasks = p.n * blocks * position_blocks;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
        for (int64_t task = 0; task < tasks; ++task) {
            const int64_t pb = task % position_blocks, block = (task / position_blocks) % blocks, image = task / (position_blocks * blocks);
            if (p.pairs) deep_block<true>(p, xin, win, bias, y, image, block, pb * kDeepPositions);
            else deep_block<false>(p, xin, win, bias, y, image, block, pb * kDeepPositions);
        }
        return 0;
    }
    {
        const int64_t blocks = p.oc_pad / p.ob, tasks = p.n * blocks * p.oh;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
        for (int64_t task = 0; task < tasks; ++task) {
            const int64_t i = task % p.oh, block = (task / p.oh) % blocks, image = task / (p.oh * blocks);
            if (p.pairs) run_wide<true>(p, xin, win, bias, y, image, block, i);
            else run_wide<false>(p, xin, win, bias, y, image, block, i);
        }
        return 0;
    }
#else
    {
        const int64_t blocks = p.oc_pad / p.ob, tasks = p.n * blocks * p.oh;
#pragma omp parallel num_threads(threads)
        {
            float* sums = new float[static_cast<size_t>(p.ow)];
#pragma omp for schedule(dynamic)
            for (int64_t task = 0; task < tasks; ++task) {
                const int64_t i = task % p.oh, block = (task / p.oh) % blocks, image = task / (p.oh * blocks);
                scalar_row(p, static_cast<const float*>(xin), static_cast<const float*>(win), bias, y, image, block, i, sums);
            }
            delete[] sums;
        }
        return 0;
    }
#endif
}
