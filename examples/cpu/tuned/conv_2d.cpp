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
//    dot   - for deep layers on small images: the K = Cin Kh Kw taps of each output position
//            gathered once into a row (im2col, transposed), then 4 x 4 (output channel,
//            position) dot products over K, 16 taps per vector, reading the filter as given
//            (no repacking of a filter that may hold millions of values), one horizontal sum
//            per output at the end.
//    float32 uses FMA; bfloat16 uses AVX512-BF16 dot products (vdpbf16ps: two taps per
//    instruction, exact products, fp32 sums); float16 is widened to fp32. The wide kernel's
//    reduction runs over blocks of input channels whose fp32 partial sums are added in
//    memory, and the dot kernel sums in 16 lanes: both keep rounding near a blocked GEMM's.
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
constexpr int kDotChannels = 4;        // dot kernel: output channels per micro-block
constexpr int kDotPositions = 4;       // dot kernel: output positions per micro-block
constexpr int64_t kDotTask = 16;       // dot kernel: channels and positions per task

struct Plan {
    int64_t n = 1, cin = 1, cout = 1, h = 1, w = 1, kh = 1, kw = 1, oh = 1, ow = 1;
    int64_t sh = 1, sw = 1, dh = 1, dw = 1, top = 0, left = 0;
    int64_t hp = 1, kp = 1;   // padded rows; entries per phase row
    int64_t planes = 1;       // padded planes per image: Cin (fp32) or ceil(Cin / 2) (bf16 pairs)
    bool pairs = false;       // bfloat16 with vdpbf16ps
    bool dot = false;         // dot kernel (else wide)
    int64_t k_total = 1, k_pad = 1;  // dot kernel: taps per output and their row length
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
    // channels; dot uses K of its tap lanes, Cout of its 4-channel and Ho*Wo of its
    // 4-position micro-blocks, and needs enough output channels to repay gathering the taps
    // and a long enough K to repay its 16 horizontal sums per micro-block.
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
    auto use = [](int64_t n, int64_t block) { return static_cast<double>(n) / static_cast<double>(block * ceil_div(n, block)); };
    const double wide_use = use(p.cout, p.ob) * use(p.ow, 16 * p.wb);
    p.k_total = p.cin * p.kh * p.kw;
    const int64_t k_lanes = p.pairs ? 32 : 16;
    p.k_pad = ceil_div(p.k_total, k_lanes) * k_lanes;
    const double dot_use = use(p.k_total, k_lanes) * use(p.cout, kDotChannels) * use(p.oh * p.ow, kDotPositions);
    p.dot = kAvx512 && p.cout >= 16 && p.k_total >= 512 && dot_use > 1.1 * wide_use;
    p.oc_pad = p.ob * ceil_div(p.cout, p.ob);
    // Wide: entries per phase row, every tap's offset past the last vector the kernel loads
    // (its 16 WB-lane steps run past Wo; the surplus holds zeros); a float, or a bf16 pair,
    // per entry. Dot: one row of K taps per output position, fp32 or bf16.
    const int64_t columns = ceil_div(p.ow, 16 * p.wb) * 16 * p.wb;
    p.kp = columns + (p.kw - 1) * p.dw / p.sw + 1;
    p.input_bytes = p.dot ? static_cast<size_t>(p.n * p.oh * p.ow * p.k_pad) * (p.pairs ? 2 : 4)
                          : static_cast<size_t>(p.n * p.planes * p.hp * p.sw * p.kp) * 4;
    p.filter_bytes = p.dot ? 0 : static_cast<size_t>(p.planes * p.kh * p.kw * p.oc_pad) * 4;
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

// fp32 rows: [n][hp][c][sw][kp] (the channels of one padded row next to each other, so that
// a kernel walking the channels of an output row streams through memory); entry (rp, c,
// phase p, k) holds x[c][rp - top][k * sw + p - left].
void pad_input_f32(const Plan& p, const hb_tensor& x, float* out, int threads) {
    const int64_t rows = p.n * p.cin * p.hp;
    const int64_t row_len = p.sw * p.kp;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t rp = row % p.hp, plane = row / p.hp;
        float* dst = out + (((plane / p.cin) * p.hp + rp) * p.planes + plane % p.cin) * row_len;
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

// bf16 channel pairs: [n][hp][c2][sw][kp][2], channels 2 c2 and 2 c2 + 1 (0 past Cin).
void pad_input_pairs(const Plan& p, const hb_tensor& x, uint16_t* out, int threads) {
    const int64_t rows = p.n * p.planes * p.hp;
    const int64_t row_len = p.sw * p.kp;
    const auto* xs = static_cast<const uint16_t*>(x.data);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t rp = row % p.hp, image = row / (p.hp * p.planes), c2 = (row / p.hp) % p.planes;
        uint16_t* dst = out + ((image * p.hp + rp) * p.planes + c2) * row_len * 2;
        const int64_t r = rp - p.top;
        std::memset(dst, 0, static_cast<size_t>(row_len) * 2 * sizeof(uint16_t));
        if (r < 0 || r >= p.h) continue;
#if defined(__AVX512F__) && defined(__AVX512BW__)
        if (p.sw == 1) {  // the two rows interleaved 16 columns at a time
            const uint16_t* row0 = xs + ((image * p.cin + 2 * c2) * p.h + r) * p.w;
            const uint16_t* row1 = 2 * c2 + 1 < p.cin ? row0 + p.h * p.w : nullptr;
            const int64_t body = std::min(p.w, p.kp - p.left);
            uint32_t* d32 = reinterpret_cast<uint32_t*>(dst) + p.left;
            int64_t v = 0;
            for (; v + 16 <= body; v += 16) {
                const __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row0 + v)));
                const __m512i hi = row1 ? _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row1 + v))), 16)
                                        : _mm512_setzero_si512();
                _mm512_storeu_si512(d32 + v, _mm512_or_si512(lo, hi));
            }
            for (; v < body; ++v) d32[v] = uint32_t{row0[v]} | (row1 ? uint32_t{row1[v]} << 16 : 0u);
            continue;
        }
#endif
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

// Wide kernel: [block][plane][tap][OB] (pairs: [block][c2][tap][OB][2]). Channels past Cout
// are zeros.
void pack_filter(const Plan& p, const hb_tensor& wt, void* out, int threads) {
    const int64_t taps = p.kh * p.kw;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t plane = 0; plane < p.planes; ++plane)
        for (int64_t t = 0; t < taps; ++t)
            for (int64_t o = 0; o < p.oc_pad; ++o) {
                const int64_t at = (((o / p.ob) * p.planes + plane) * taps + t) * p.ob + o % p.ob;
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
    const int64_t taps = p.kh * p.kw, row_len = p.sw * p.kp;
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
                for (int64_t a = 0; a < p.kh; ++a) {
                    const int64_t row_base = ((image * p.hp + i * p.sh + a * p.dh) * p.planes + c) * row_len;
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

// Dot kernel, step 1: row q (image-major output position) holds the K = Cin Kh Kw taps of
// that position in the filter's order (c, a, b), padding taps as zeros, then zeros up to
// k_pad; fp32, or the bf16 bits unchanged (pairs).
void gather_taps(const Plan& p, const hb_tensor& x, void* out, int threads) {
    const int64_t positions = p.oh * p.ow, rows = p.n * positions;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t q = 0; q < rows; ++q) {
        const int64_t image = q / positions, i = (q % positions) / p.ow, j = q % p.ow;
        float* f32 = p.pairs ? nullptr : static_cast<float*>(out) + q * p.k_pad;
        uint16_t* bits = p.pairs ? static_cast<uint16_t*>(out) + q * p.k_pad : nullptr;
        int64_t k = 0;
        for (int64_t c = 0; c < p.cin; ++c)
            for (int64_t a = 0; a < p.kh; ++a) {
                const int64_t r = i * p.sh + a * p.dh - p.top;
                const int64_t base = ((image * p.cin + c) * p.h + r) * p.w;
                for (int64_t b = 0; b < p.kw; ++b, ++k) {
                    const int64_t col = j * p.sw + b * p.dw - p.left;
                    const bool inside = r >= 0 && r < p.h && col >= 0 && col < p.w;
                    if (p.pairs) bits[k] = inside ? load_bits(x, base + col) : uint16_t{0};
                    else f32[k] = inside ? load(x, base + col) : 0.f;
                }
            }
        for (; k < p.k_pad; ++k) {
            if (p.pairs) bits[k] = 0;
            else f32[k] = 0.f;
        }
    }
}

// 16 filter taps k.. of one output channel's row as fp32 (the filter as given, masked past K).
inline __m512 filter_taps(const hb_tensor& wt, int64_t at, __mmask16 mask) {
    if (wt.dtype == HB_FLOAT32) return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(wt.data) + at);
    const __m256i h = _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(wt.data) + at);
    if (wt.dtype == HB_FLOAT16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));  // bfloat16
}

// Dot kernel, step 2: output channels [oc0, oc0 + 16) x positions [pos0, pos0 + 16) of one
// image, in 4 x 4 micro-blocks of dot products over K (micro-blocks past the end repeat the
// last channel or position and store nothing).
template <bool Pairs>
void dot_task(const Plan& p, const void* taps, const hb_tensor& wt, const hb_tensor& bias, const hb_tensor& y,
              int64_t image, int64_t oc0, int64_t pos0) {
    constexpr int OC = kDotChannels, PC = kDotPositions;
    const int64_t positions = p.oh * p.ow;
    const int64_t lanes = Pairs ? 32 : 16;
    for (int64_t o0 = oc0; o0 < std::min(p.cout, oc0 + kDotTask); o0 += OC)
        for (int64_t q0 = pos0; q0 < std::min(positions, pos0 + kDotTask); q0 += PC) {
            int64_t w_row[OC], x_row[PC];
            for (int a = 0; a < OC; ++a) w_row[a] = std::min(o0 + a, p.cout - 1) * p.k_total;
            for (int b = 0; b < PC; ++b) x_row[b] = (image * positions + std::min(q0 + b, positions - 1)) * p.k_pad;
            __m512 acc[OC][PC];
            for (int a = 0; a < OC; ++a)
                for (int b = 0; b < PC; ++b) acc[a][b] = _mm512_setzero_ps();
            for (int64_t k = 0; k < p.k_total; k += lanes) {
                const int64_t left = p.k_total - k;
                if constexpr (Pairs) {
#if defined(__AVX512BF16__)
                    const __mmask32 mask = left >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1ull << left) - 1);
                    const auto* w16 = static_cast<const uint16_t*>(wt.data);
                    const auto* x16 = static_cast<const uint16_t*>(taps);
                    __m512bh wv[OC], xv[PC];
                    for (int a = 0; a < OC; ++a) wv[a] = (__m512bh)_mm512_maskz_loadu_epi16(mask, w16 + w_row[a] + k);
                    for (int b = 0; b < PC; ++b) xv[b] = (__m512bh)_mm512_loadu_si512(x16 + x_row[b] + k);
                    for (int a = 0; a < OC; ++a)
                        for (int b = 0; b < PC; ++b) acc[a][b] = _mm512_dpbf16_ps(acc[a][b], wv[a], xv[b]);
#endif
                } else {
                    const __mmask16 mask = left >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << left) - 1);
                    const float* x32 = static_cast<const float*>(taps);
                    __m512 wv[OC], xv[PC];
                    for (int a = 0; a < OC; ++a) wv[a] = filter_taps(wt, w_row[a] + k, mask);
                    for (int b = 0; b < PC; ++b) xv[b] = _mm512_loadu_ps(x32 + x_row[b] + k);
                    for (int a = 0; a < OC; ++a)
                        for (int b = 0; b < PC; ++b) acc[a][b] = _mm512_fmadd_ps(wv[a], xv[b], acc[a][b]);
                }
            }
            for (int a = 0; a < OC && o0 + a < p.cout; ++a) {
                const float bv = load(bias, o0 + a);
                for (int b = 0; b < PC && q0 + b < positions; ++b)
                    store(y, (image * p.cout + o0 + a) * positions + q0 + b, _mm512_reduce_add_ps(acc[a][b]) + bv);
            }
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
    const int64_t taps = p.kh * p.kw, row_len = p.sw * p.kp;
    const int64_t count = std::min<int64_t>(p.ob, p.cout - block * p.ob);
    for (int64_t o = 0; o < count; ++o) {
        float* acc = sums;
        std::fill(acc, acc + p.ow, 0.f);
        for (int64_t c = 0; c < p.cin; ++c)
            for (int64_t a = 0; a < p.kh; ++a)
                for (int64_t b = 0; b < p.kw; ++b) {
                    const float wv = win[((block * p.planes + c) * taps + a * p.kw + b) * p.ob + o];
                    const float* xs = xin + ((image * p.hp + i * p.sh + a * p.dh) * p.planes + c) * row_len +
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

#if defined(__AVX512F__) && defined(__AVX512BW__)
    if (p.dot) {
        gather_taps(p, x, xin, threads);
        const int64_t channel_blocks = ceil_div(p.cout, kDotTask), position_blocks = ceil_div(p.oh * p.ow, kDotTask);
        const int64_t tasks = p.n * channel_blocks * position_blocks;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
        for (int64_t task = 0; task < tasks; ++task) {
            const int64_t pb = task % position_blocks, cb = (task / position_blocks) % channel_blocks;
            const int64_t image = task / (position_blocks * channel_blocks);
            if (p.pairs) dot_task<true>(p, xin, wt, bias, y, image, cb * kDotTask, pb * kDotTask);
            else dot_task<false>(p, xin, wt, bias, y, image, cb * kDotTask, pb * kDotTask);
        }
        return 0;
    }
    if (p.pairs) pad_input_pairs(p, x, static_cast<uint16_t*>(xin), threads);
    else pad_input_f32(p, x, static_cast<float*>(xin), threads);
    pack_filter(p, wt, win, threads);
    {
        // Channel blocks vary fastest: the threads work on the same output row at once, so
        // the input rows it reads come from cache for every block after the first.
        const int64_t blocks = p.oc_pad / p.ob, tasks = p.n * blocks * p.oh;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
        for (int64_t task = 0; task < tasks; ++task) {
            const int64_t block = task % blocks, i = (task / blocks) % p.oh, image = task / (p.oh * blocks);
            if (p.pairs) run_wide<true>(p, xin, win, bias, y, image, block, i);
            else run_wide<false>(p, xin, win, bias, y, image, block, i);
        }
        return 0;
    }
#else
    pad_input_f32(p, x, static_cast<float*>(xin), threads);
    pack_filter(p, wt, win, threads);
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
