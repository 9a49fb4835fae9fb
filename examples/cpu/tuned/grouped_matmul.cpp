// Tuned grouped_matmul: for each group g, y[rows_g] = x[rows_g] . W_g (+ bias[g]), float32,
// float16 and bfloat16 (bias in x's dtype, or float32 with bfloat16 x), y as E tensors or one.
// Work is split into (group, 64-column panel, row chunk) tasks over the threads.
// With AVX-512, three micro-kernels, chosen by the weight layout and the group's rows:
//  - weight [E, K, N], up to 8 rows: each thread streams its contiguous columns of W_g in
//    row order into fp32 accumulators kept in L2 (FMAs, or vdpbf16ps on pairs of k).
//  - weight [E, K, N]: the task packs its 64 columns of W_g into a per-thread buffer (L2
//    resident): fp32 (fp16 widened) for FMAs, or, for bfloat16 with AVX512-BF16, pairs of
//    consecutive k interleaved per 32-bit lane for vdpbf16ps (built with word unpacks, which
//    permute the columns in a fixed way that the epilogue undoes with 128-bit shuffles);
//    then a 4-row x 64-column register block (16 zmm accumulators) runs over k.
//  - weight [E, N, K] (transpose_weight): each output column is a contiguous row of W_g, so
//    no packing: 4 rows x 4 columns of dot products, 16 (fp32) or 32 (bf16 pairs) k per
//    step, reduced across lanes at the end.
// fp16 x is widened to fp32 once; products accumulate in fp32; one rounding to y's dtype.
// Without AVX-512 the same tasks run a plain fp32 tile loop.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#define HB_TUNED_AVX512 1
#endif
#if defined(HB_TUNED_AVX512) && defined(__AVX512BF16__)
#define HB_TUNED_BF16_DOT 1
#endif

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

constexpr int64_t kPanel = 64;
constexpr int64_t kRows = 4;
constexpr int64_t kStreamRows = 8;  // groups of at most this many rows stream their weight (AVX-512)
#ifdef HB_TUNED_AVX512
constexpr bool kStreams = true;
#else
constexpr bool kStreams = false;
#endif

float load(const void* data, hb_dtype dtype, int64_t i) {
    switch (dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(data)[i]);
        default: return static_cast<const float*>(data)[i];
    }
}

bool is_float(hb_dtype t) { return t == HB_FLOAT32 || t == HB_FLOAT16 || t == HB_BFLOAT16; }

int thread_count(const hb_call* call) { return call->num_threads > 0 ? call->num_threads : omp_get_max_threads(); }

struct Task {
    int64_t group, col, first, last;  // rows [first, last) of the group
};

struct Problem {
    const hb_tensor *x = nullptr, *weight = nullptr, *bias = nullptr;
    const hb_arg* y = nullptr;
    hb_dtype dtype = HB_FLOAT32;
    int64_t m = 0, k = 0, n = 0, experts = 0;
    bool transpose = false, single_output = false;
    std::vector<int64_t> begin, rows;
    bool bf16_dot = false;  // bfloat16 through vdpbf16ps; otherwise products in fp32 FMAs
    bool x_widened = false; // x read from an fp32 copy (fp16, and bf16 without the dot path)
    std::vector<Task> tasks;
    std::vector<int64_t> streamed;  // groups whose [K, N] weight is streamed row by row (few rows)
};

const char* describe(const hb_call* call, Problem& p) {
    const hb_arg* x = hb_input(call, "x");
    const hb_arg* w = hb_input(call, "weight");
    const hb_arg* bias = hb_input(call, "bias");
    p.y = hb_output(call, "y");
    const hb_attr* list = hb_attr_find(call, "group_list");
    if (!x || !w || !p.y || x->count != 1 || w->count != 1) return "grouped_matmul: expected inputs x, weight and output list y";
    if (!list || list->type != HB_ATTR_INT_LIST) return "grouped_matmul: group_list must be an int list";
    p.x = &x->tensors[0];
    p.weight = &w->tensors[0];
    p.bias = bias && bias->present && bias->count == 1 ? &bias->tensors[0] : nullptr;
    if (p.x->rank != 2 || p.weight->rank != 3) return "grouped_matmul: x must be [M, K] and weight 3-dim";
    p.dtype = p.x->dtype;
    if (!is_float(p.dtype) || p.weight->dtype != p.dtype) return "grouped_matmul: x and weight must share a float dtype";
    if (!hb_is_contiguous(p.x) || !hb_is_contiguous(p.weight) || (p.bias && !hb_is_contiguous(p.bias)))
        return "grouped_matmul: only contiguous tensors are supported";
    p.transpose = hb_attr_int(call, "transpose_weight", 0) != 0;
    p.single_output = hb_attr_int(call, "split_item", 0) >= 2;
    p.m = p.x->shape[0];
    p.k = p.x->shape[1];
    p.experts = p.weight->shape[0];
    p.n = p.transpose ? p.weight->shape[1] : p.weight->shape[2];
    if ((p.transpose ? p.weight->shape[2] : p.weight->shape[1]) != p.k) return "grouped_matmul: weight and x disagree on K";
    if (p.bias && (p.bias->rank != 2 || p.bias->shape[0] != p.experts || p.bias->shape[1] != p.n || !is_float(p.bias->dtype)))
        return "grouped_matmul: bias must be a float [E, N]";
    if (list->count != p.experts) return "grouped_matmul: group_list needs one entry per expert";
    int64_t previous = 0;
    for (int64_t e = 0; e < p.experts; ++e) {
        if (list->ints[e] < previous || list->ints[e] > p.m) return "grouped_matmul: group_list must be non-decreasing within [0, M]";
        p.begin.push_back(previous);
        p.rows.push_back(list->ints[e] - previous);
        previous = list->ints[e];
    }
    if (previous != p.m) return "grouped_matmul: group_list must end at M";
    if (p.y->count != (p.single_output ? 1 : p.experts)) return "grouped_matmul: y has the wrong number of tensors";
    for (int32_t t = 0; t < p.y->count; ++t) {
        const hb_tensor& out = p.y->tensors[t];
        const int64_t rows = p.single_output ? p.m : p.rows[t];
        if (out.dtype != p.dtype || out.rank != 2 || out.shape[0] != rows || out.shape[1] != p.n || !hb_is_contiguous(&out))
            return "grouped_matmul: a y tensor has the wrong dtype or shape";
    }
#ifdef HB_TUNED_BF16_DOT
    p.bf16_dot = p.dtype == HB_BFLOAT16;
#endif
    p.x_widened = p.dtype != HB_FLOAT32 && !p.bf16_dot;
    // Groups of few rows with a [K, N] weight stream it (see stream_group); the others are
    // tasks: every (group, panel), split into row chunks until there are a few per thread.
    const int64_t panels = (p.n + kPanel - 1) / kPanel;
    auto streams = [&](int64_t e) { return kStreams && !p.transpose && p.rows[e] > 0 && p.rows[e] <= kStreamRows; };
    int64_t pairs = 0, blocks = 0;
    for (int64_t e = 0; e < p.experts; ++e) {
        if (streams(e)) p.streamed.push_back(e);
        if (p.rows[e] > 0 && !streams(e)) {
            pairs += panels;
            blocks += panels * ((p.rows[e] + kRows - 1) / kRows);
        }
    }
    const int64_t wanted = 4 * thread_count(call);
    const int64_t split = pairs == 0 ? 1 : std::clamp<int64_t>((wanted + pairs - 1) / pairs, 1, std::max<int64_t>(1, blocks / pairs));
    for (int64_t e = 0; e < p.experts; ++e) {
        if (p.rows[e] == 0 || streams(e)) continue;
        const int64_t row_blocks = (p.rows[e] + kRows - 1) / kRows;
        const int64_t chunk = (row_blocks + split - 1) / split * kRows;
        for (int64_t c = 0; c < panels; ++c)
            for (int64_t r = 0; r < p.rows[e]; r += chunk) p.tasks.push_back({e, c * kPanel, r, std::min(p.rows[e], r + chunk)});
    }
    return nullptr;
}

// Workspace: x in fp32 (when widened), bias in fp32, per thread one packed panel.
struct Workspace {
    float* x = nullptr;
    float* bias = nullptr;
    uint8_t* panels = nullptr;
    uint64_t panel_bytes = 0;
    float* stream = nullptr;  // streamed groups: 8 rows x panels x 64 fp32 accumulators
};

uint64_t workspace_layout(const Problem& p, int threads, uint8_t* base, Workspace* w) {
    uint64_t at = 0;
    auto take = [&](uint64_t bytes) {
        uint8_t* ptr = base ? base + at : nullptr;
        at += (bytes + 63) / 64 * 64;
        return ptr;
    };
    Workspace ws;
    ws.x = reinterpret_cast<float*>(take(p.x_widened ? static_cast<uint64_t>(p.m * p.k) * 4 : 0));
    ws.bias = reinterpret_cast<float*>(take(static_cast<uint64_t>(p.experts * p.n) * 4));
    // fp32 columns: k x 64 x 4 bytes; bf16 pairs: ceil(k / 2) x 64 x 4 bytes.
    ws.panel_bytes = static_cast<uint64_t>(p.bf16_dot ? (p.k + 1) / 2 * 2 : p.k) * kPanel * 4;
    ws.panels = take(p.transpose ? 0 : static_cast<uint64_t>(threads) * ws.panel_bytes);
    const int64_t panels = (p.n + kPanel - 1) / kPanel;
    ws.stream = reinterpret_cast<float*>(take(p.streamed.empty() ? 0 : static_cast<uint64_t>(kStreamRows * panels * kPanel) * 4));
    if (w) *w = ws;
    return at;
}

// Output row `row` of group e, as a pointer to its first element.
void* output_row(const Problem& p, int64_t e, int64_t row) {
    const hb_tensor& out = p.y->tensors[p.single_output ? 0 : e];
    const int64_t r = (p.single_output ? p.begin[e] : 0) + row;
    const size_t element = p.dtype == HB_FLOAT32 ? 4 : 2;
    return static_cast<char*>(out.data) + static_cast<size_t>(r * p.n) * element;
}

void store_scalar(const Problem& p, void* row, int64_t j, float v) {
    switch (p.dtype) {
        case HB_FLOAT16: static_cast<uint16_t*>(row)[j] = hb_f32_to_f16(v); break;
        case HB_BFLOAT16: static_cast<uint16_t*>(row)[j] = hb_f32_to_bf16(v); break;
        default: static_cast<float*>(row)[j] = v; break;
    }
}

#ifdef HB_TUNED_AVX512

// (Full-mask maskz_ forms of some intrinsics here avoid GCC 12's -Wmaybe-uninitialized on
// the undefined source operand of the plain ones.)
inline __m256i to_bf16(__m512 v) {
#if defined(__AVX512BF16__)
    return (__m256i)_mm512_cvtneps_pbh(v);
#else
    const __m512i u = _mm512_castps_si512(v);
    const __m512i rounded = _mm512_add_epi32(
        u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1))));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i bits = _mm512_mask_or_epi32(rounded, nan, u, _mm512_set1_epi32(0x00400000));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(bits, 16));
#endif
}

inline __mmask16 lanes(int64_t valid) {
    return valid >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << std::max<int64_t>(valid, 0)) - 1);
}

// 16 columns of one output row, from fp32 products plus the bias, rounded and stored.
inline void store16(const Problem& p, const Workspace& w, void* row, int64_t e, int64_t col, __m512 v, int64_t valid) {
    const __mmask16 mask = lanes(valid);
    if (p.bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, w.bias + e * p.n + col));
    if (p.dtype == HB_FLOAT32) {
        _mm512_mask_storeu_ps(static_cast<float*>(row) + col, mask, v);
        return;
    }
    const __m256i half = p.dtype == HB_FLOAT16 ? _mm512_maskz_cvtps_ph(0xffff, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                                               : to_bf16(v);
    _mm256_mask_storeu_epi16(static_cast<uint16_t*>(row) + col, mask, half);
}

// --- weight [E, K, N]: packed panels ---------------------------------------------------------

// 16 weights of row r of W_g from column c (masked past n) as fp32.
inline __m512 weight16(const Problem& p, const void* wg, int64_t r, int64_t c, __mmask16 mask) {
    if (p.dtype == HB_FLOAT32) return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(wg) + r * p.n + c);
    const __m256i h = _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(wg) + r * p.n + c);
    if (p.dtype == HB_FLOAT16) return _mm512_maskz_cvtph_ps(0xffff, h);
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16));
}

void pack_f32(const Problem& p, const void* wg, int64_t col, float* panel) {
    const int64_t width = std::min(kPanel, p.n - col);
    for (int64_t r = 0; r < p.k; ++r)
        for (int q = 0; q < 4; ++q) _mm512_storeu_ps(panel + r * 64 + 16 * q, weight16(p, wg, r, col + 16 * q, lanes(width - 16 * q)));
}

template <int R>
void block_f32(const Problem& p, const Workspace& w, const float* panel, int64_t e, int64_t row, int64_t col) {
    __m512 acc[R][4];
    for (int r = 0; r < R; ++r)
        for (int q = 0; q < 4; ++q) acc[r][q] = _mm512_setzero_ps();
    const int64_t x_row = p.begin[e] + row;
    const float* x = p.x_widened ? w.x + x_row * p.k : static_cast<const float*>(p.x->data) + x_row * p.k;
    for (int64_t t = 0; t < p.k; ++t) {
        const float* b = panel + t * 64;
        const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), b2 = _mm512_loadu_ps(b + 32), b3 = _mm512_loadu_ps(b + 48);
        for (int r = 0; r < R; ++r) {
            const __m512 a = _mm512_set1_ps(x[r * p.k + t]);
            acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(a, b2, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(a, b3, acc[r][3]);
        }
    }
    const int64_t width = std::min(kPanel, p.n - col);
    for (int r = 0; r < R; ++r) {
        void* out = output_row(p, e, row + r);
        for (int q = 0; q < 4 && 16 * q < width; ++q) store16(p, w, out, e, col + 16 * q, acc[r][q], width - 16 * q);
    }
}

#ifdef HB_TUNED_BF16_DOT
// Pairs (k, k+1) of 64 columns: zmm q of pair g holds in lane 4L + t the column
// 32 (q / 2) + 8L + 4 (q % 2) + t (word unpacks work within 128-bit lanes).
void pack_bf16(const Problem& p, const uint16_t* wg, int64_t col, uint16_t* panel) {
    const int64_t width = std::min(kPanel, p.n - col);
    const __mmask32 lo = width >= 32 ? ~__mmask32(0) : static_cast<__mmask32>((1ull << width) - 1);
    const __mmask32 hi = width >= 64 ? ~__mmask32(0) : width <= 32 ? 0 : static_cast<__mmask32>((1ull << (width - 32)) - 1);
    for (int64_t g = 0; g < (p.k + 1) / 2; ++g) {
        const int64_t r0 = 2 * g, r1 = 2 * g + 1;
        const __m512i a0 = _mm512_maskz_loadu_epi16(lo, wg + r0 * p.n + col), b0 = _mm512_maskz_loadu_epi16(hi, wg + r0 * p.n + col + 32);
        const __m512i a1 = r1 < p.k ? _mm512_maskz_loadu_epi16(lo, wg + r1 * p.n + col) : _mm512_setzero_si512();
        const __m512i b1 = r1 < p.k ? _mm512_maskz_loadu_epi16(hi, wg + r1 * p.n + col + 32) : _mm512_setzero_si512();
        uint16_t* out = panel + g * 128;
        _mm512_storeu_si512(out, _mm512_unpacklo_epi16(a0, a1));
        _mm512_storeu_si512(out + 32, _mm512_unpackhi_epi16(a0, a1));
        _mm512_storeu_si512(out + 64, _mm512_unpacklo_epi16(b0, b1));
        _mm512_storeu_si512(out + 96, _mm512_unpackhi_epi16(b0, b1));
    }
}

// Accumulators q = 2h (+1) back in column order: 16-column blocks 32h + 0 and 32h + 16.
inline void unpermute_pair(__m512 lo, __m512 hi, __m512& first, __m512& second) {
    const __m512 t = _mm512_maskz_shuffle_f32x4(0xffff, lo, hi, 0x44), u = _mm512_maskz_shuffle_f32x4(0xffff, lo, hi, 0xEE);
    first = _mm512_maskz_shuffle_f32x4(0xffff, t, t, 0xD8);
    second = _mm512_maskz_shuffle_f32x4(0xffff, u, u, 0xD8);
}

template <int R>
void block_bf16(const Problem& p, const Workspace& w, const uint16_t* panel, int64_t e, int64_t row, int64_t col) {
    __m512 acc[R][4];
    for (int r = 0; r < R; ++r)
        for (int q = 0; q < 4; ++q) acc[r][q] = _mm512_setzero_ps();
    const uint16_t* x = static_cast<const uint16_t*>(p.x->data) + (p.begin[e] + row) * p.k;
    for (int64_t g = 0; g < (p.k + 1) / 2; ++g) {
        const uint16_t* b = panel + g * 128;
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 32);
        const __m512bh b2 = (__m512bh)_mm512_loadu_si512(b + 64), b3 = (__m512bh)_mm512_loadu_si512(b + 96);
        const bool pair = 2 * g + 1 < p.k;
        for (int r = 0; r < R; ++r) {
            const uint32_t lo = x[r * p.k + 2 * g], hi = pair ? x[r * p.k + 2 * g + 1] : 0u;
            const __m512bh a = (__m512bh)_mm512_set1_epi32(static_cast<int>(lo | hi << 16));
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a, b0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], a, b1);
            acc[r][2] = _mm512_dpbf16_ps(acc[r][2], a, b2);
            acc[r][3] = _mm512_dpbf16_ps(acc[r][3], a, b3);
        }
    }
    const int64_t width = std::min(kPanel, p.n - col);
    for (int r = 0; r < R; ++r) {
        __m512 natural[4];
        unpermute_pair(acc[r][0], acc[r][1], natural[0], natural[1]);
        unpermute_pair(acc[r][2], acc[r][3], natural[2], natural[3]);
        void* out = output_row(p, e, row + r);
        for (int q = 0; q < 4 && 16 * q < width; ++q) store16(p, w, out, e, col + 16 * q, natural[q], width - 16 * q);
    }
}
#endif

// --- few rows, weight [E, K, N]: streamed --------------------------------------------------

// A group of R <= 8 rows (decode) would read a packed panel's 64 columns at a stride of N, a
// page per k when N is large. Instead each thread streams its contiguous range of columns
// of W_g in row order (k by k; bf16 pairs of k interleaved on the fly for vdpbf16ps), with
// the R rows' fp32 accumulators in the workspace (L2 resident), and finishes them at the end.
template <int R>
void stream_group(const Problem& p, const Workspace& w, int64_t e, int64_t first_panel, int64_t end_panel) {
    const int64_t row_floats = (p.n + kPanel - 1) / kPanel * kPanel;
    float* acc = w.stream;
    for (int r = 0; r < R; ++r)
        std::memset(acc + r * row_floats + first_panel * kPanel, 0, static_cast<size_t>((end_panel - first_panel) * kPanel) * 4);
    const size_t element = p.dtype == HB_FLOAT32 ? 4 : 2;
    const char* wg = static_cast<const char*>(p.weight->data) + static_cast<size_t>(e * p.k * p.n) * element;
    const int64_t x_row = p.begin[e];
#ifdef HB_TUNED_BF16_DOT
    if (p.bf16_dot) {
        const uint16_t* x = static_cast<const uint16_t*>(p.x->data) + x_row * p.k;
        const uint16_t* w16 = reinterpret_cast<const uint16_t*>(wg);
        for (int64_t g = 0; g < (p.k + 1) / 2; ++g) {
            const bool pair = 2 * g + 1 < p.k;
            __m512bh a[R];
            for (int r = 0; r < R; ++r) {
                const uint32_t lo = x[r * p.k + 2 * g], hi = pair ? x[r * p.k + 2 * g + 1] : 0u;
                a[r] = (__m512bh)_mm512_set1_epi32(static_cast<int>(lo | hi << 16));
            }
            for (int64_t pi = first_panel; pi < end_panel; ++pi) {
                const int64_t col = pi * kPanel, width = std::min(kPanel, p.n - col);
                const __mmask32 lo = width >= 32 ? ~__mmask32(0) : static_cast<__mmask32>((1ull << width) - 1);
                const __mmask32 hi = width >= 64 ? ~__mmask32(0) : width <= 32 ? 0 : static_cast<__mmask32>((1ull << (width - 32)) - 1);
                const uint16_t* r0 = w16 + 2 * g * p.n + col;
                const __m512i a0 = _mm512_maskz_loadu_epi16(lo, r0), b0 = _mm512_maskz_loadu_epi16(hi, r0 + 32);
                const __m512i a1 = pair ? _mm512_maskz_loadu_epi16(lo, r0 + p.n) : _mm512_setzero_si512();
                const __m512i b1 = pair ? _mm512_maskz_loadu_epi16(hi, r0 + p.n + 32) : _mm512_setzero_si512();
                const __m512bh q[4] = {(__m512bh)_mm512_unpacklo_epi16(a0, a1), (__m512bh)_mm512_unpackhi_epi16(a0, a1),
                                       (__m512bh)_mm512_unpacklo_epi16(b0, b1), (__m512bh)_mm512_unpackhi_epi16(b0, b1)};
                for (int r = 0; r < R; ++r)
                    for (int t = 0; t < 4; ++t) {
                        float* at = acc + r * row_floats + col + 16 * t;
                        _mm512_storeu_ps(at, _mm512_dpbf16_ps(_mm512_loadu_ps(at), a[r], q[t]));
                    }
            }
        }
        for (int64_t pi = first_panel; pi < end_panel; ++pi) {
            const int64_t col = pi * kPanel, width = std::min(kPanel, p.n - col);
            for (int r = 0; r < R; ++r) {
                const float* at = acc + r * row_floats + col;
                __m512 natural[4];
                unpermute_pair(_mm512_loadu_ps(at), _mm512_loadu_ps(at + 16), natural[0], natural[1]);
                unpermute_pair(_mm512_loadu_ps(at + 32), _mm512_loadu_ps(at + 48), natural[2], natural[3]);
                void* out = output_row(p, e, r);
                for (int q = 0; q < 4 && 16 * q < width; ++q) store16(p, w, out, e, col + 16 * q, natural[q], width - 16 * q);
            }
        }
        return;
    }
#endif
    const float* x = p.x_widened ? w.x + x_row * p.k : static_cast<const float*>(p.x->data) + x_row * p.k;
    for (int64_t t = 0; t < p.k; ++t) {
        __m512 a[R];
        for (int r = 0; r < R; ++r) a[r] = _mm512_set1_ps(x[r * p.k + t]);
        for (int64_t pi = first_panel; pi < end_panel; ++pi) {
            const int64_t col = pi * kPanel, width = std::min(kPanel, p.n - col);
            for (int q = 0; q < 4; ++q) {
                const __m512 wv = weight16(p, wg, t, col + 16 * q, lanes(width - 16 * q));
                for (int r = 0; r < R; ++r) {
                    float* at = acc + r * row_floats + col + 16 * q;
                    _mm512_storeu_ps(at, _mm512_fmadd_ps(a[r], wv, _mm512_loadu_ps(at)));
                }
            }
        }
    }
    for (int64_t pi = first_panel; pi < end_panel; ++pi) {
        const int64_t col = pi * kPanel, width = std::min(kPanel, p.n - col);
        for (int r = 0; r < R; ++r) {
            void* out = output_row(p, e, r);
            for (int q = 0; q < 4 && 16 * q < width; ++q)
                store16(p, w, out, e, col + 16 * q, _mm512_loadu_ps(acc + r * row_floats + col + 16 * q), width - 16 * q);
        }
    }
}

void stream_rows(const Problem& p, const Workspace& w, int64_t e, int64_t first_panel, int64_t end_panel) {
    switch (p.rows[e]) {
        case 1: stream_group<1>(p, w, e, first_panel, end_panel); break;
        case 2: stream_group<2>(p, w, e, first_panel, end_panel); break;
        case 3: stream_group<3>(p, w, e, first_panel, end_panel); break;
        case 4: stream_group<4>(p, w, e, first_panel, end_panel); break;
        case 5: stream_group<5>(p, w, e, first_panel, end_panel); break;
        case 6: stream_group<6>(p, w, e, first_panel, end_panel); break;
        case 7: stream_group<7>(p, w, e, first_panel, end_panel); break;
        default: stream_group<8>(p, w, e, first_panel, end_panel); break;
    }
}

// --- weight [E, N, K]: dot products ----------------------------------------------------------

// 16 (fp32) elements of a row from element t, masked, as fp32.
inline __m512 row16(const Problem& p, const void* base, bool widened, int64_t t, __mmask16 mask) {
    if (widened || p.dtype == HB_FLOAT32) return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(base) + t);
    const __m256i h = _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(base) + t);
    if (p.dtype == HB_FLOAT16) return _mm512_maskz_cvtph_ps(0xffff, h);
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16));
}

inline float sum16(__m512 v) {
    alignas(64) float lanes_out[16];
    _mm512_store_ps(lanes_out, v);
    float s = 0;
    for (float l : lanes_out) s += l;
    return s;
}

template <int R, int C>
void dot_block(const Problem& p, const Workspace& w, int64_t e, int64_t row, int64_t col) {
    __m512 acc[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
    const size_t element = p.dtype == HB_FLOAT32 ? 4 : 2;
    const char* wg = static_cast<const char*>(p.weight->data) + static_cast<size_t>(e * p.n * p.k) * element;
    const int64_t x_row = p.begin[e] + row;
    const void* xs[R];
    for (int r = 0; r < R; ++r)
        xs[r] = p.x_widened ? static_cast<const void*>(w.x + (x_row + r) * p.k)
                            : static_cast<const void*>(static_cast<const char*>(p.x->data) + static_cast<size_t>((x_row + r) * p.k) * element);
    const void* ws[C];
    for (int c = 0; c < C; ++c) ws[c] = wg + static_cast<size_t>((col + c) * p.k) * element;
#ifdef HB_TUNED_BF16_DOT
    if (p.bf16_dot) {
        for (int64_t t = 0; t < p.k; t += 32) {
            const __mmask32 mask = p.k - t >= 32 ? ~__mmask32(0) : static_cast<__mmask32>((1ull << (p.k - t)) - 1);
            __m512bh a[R], b[C];
            for (int r = 0; r < R; ++r) a[r] = (__m512bh)_mm512_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(xs[r]) + t);
            for (int c = 0; c < C; ++c) b[c] = (__m512bh)_mm512_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(ws[c]) + t);
            for (int r = 0; r < R; ++r)
                for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], a[r], b[c]);
        }
    } else
#endif
    {
        for (int64_t t = 0; t < p.k; t += 16) {
            const __mmask16 mask = lanes(p.k - t);
            __m512 a[R], b[C];
            for (int r = 0; r < R; ++r) a[r] = row16(p, xs[r], p.x_widened, t, mask);
            for (int c = 0; c < C; ++c) b[c] = row16(p, ws[c], false, t, mask);
            for (int r = 0; r < R; ++r)
                for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(a[r], b[c], acc[r][c]);
        }
    }
    for (int r = 0; r < R; ++r) {
        void* out = output_row(p, e, row + r);
        for (int c = 0; c < C; ++c) {
            float v = sum16(acc[r][c]);
            if (p.bias) v += w.bias[e * p.n + col + c];
            store_scalar(p, out, col + c, v);
        }
    }
}

template <int R>
void dot_rows(const Problem& p, const Workspace& w, int64_t e, int64_t row, int64_t col) {
    const int64_t end = std::min(p.n, col + kPanel);
    int64_t c = col;
    for (; c + 4 <= end; c += 4) dot_block<R, 4>(p, w, e, row, c);
    switch (end - c) {
        case 3: dot_block<R, 3>(p, w, e, row, c); break;
        case 2: dot_block<R, 2>(p, w, e, row, c); break;
        case 1: dot_block<R, 1>(p, w, e, row, c); break;
        default: break;
    }
}

template <template <int> class Body, typename... Args>
void by_rows(int64_t first, int64_t last, Args&&... args) {
    int64_t row = first;
    for (; row + kRows <= last; row += kRows) Body<kRows>::run(row, args...);
    switch (last - row) {
        case 3: Body<3>::run(row, args...); break;
        case 2: Body<2>::run(row, args...); break;
        case 1: Body<1>::run(row, args...); break;
        default: break;
    }
}

template <int R>
struct DotRows {
    static void run(int64_t row, const Problem& p, const Workspace& w, int64_t e, int64_t col) { dot_rows<R>(p, w, e, row, col); }
};
template <int R>
struct PanelRowsF32 {
    static void run(int64_t row, const Problem& p, const Workspace& w, const float* panel, int64_t e, int64_t col) {
        block_f32<R>(p, w, panel, e, row, col);
    }
};
#ifdef HB_TUNED_BF16_DOT
template <int R>
struct PanelRowsBf16 {
    static void run(int64_t row, const Problem& p, const Workspace& w, const uint16_t* panel, int64_t e, int64_t col) {
        block_bf16<R>(p, w, panel, e, row, col);
    }
};
#endif

void run_task(const Problem& p, const Workspace& w, const Task& task, uint8_t* panel) {
    if (p.transpose) {
        by_rows<DotRows>(task.first, task.last, p, w, task.group, task.col);
        return;
    }
    const size_t element = p.dtype == HB_FLOAT32 ? 4 : 2;
    const char* wg = static_cast<const char*>(p.weight->data) + static_cast<size_t>(task.group * p.k * p.n) * element;
#ifdef HB_TUNED_BF16_DOT
    if (p.bf16_dot) {
        auto* packed = reinterpret_cast<uint16_t*>(panel);
        pack_bf16(p, reinterpret_cast<const uint16_t*>(wg), task.col, packed);
        by_rows<PanelRowsBf16>(task.first, task.last, p, w, static_cast<const uint16_t*>(packed), task.group, task.col);
        return;
    }
#endif
    auto* packed = reinterpret_cast<float*>(panel);
    pack_f32(p, wg, task.col, packed);
    by_rows<PanelRowsF32>(task.first, task.last, p, w, static_cast<const float*>(packed), task.group, task.col);
}

#endif  // HB_TUNED_AVX512

// Without AVX-512: a plain fp32 tile loop per task.
[[maybe_unused]] void run_task_plain(const Problem& p, const Workspace& w, const Task& task) {
    const int64_t width = std::min(kPanel, p.n - task.col);
    const size_t element = p.dtype == HB_FLOAT32 ? 4 : 2;
    const char* wg = static_cast<const char*>(p.weight->data) + static_cast<size_t>(task.group * p.k * p.n) * element;
    for (int64_t row = task.first; row < task.last; ++row) {
        float acc[kPanel] = {};
        const int64_t x_row = p.begin[task.group] + row;
        for (int64_t t = 0; t < p.k; ++t) {
            const float a = load(p.x->data, p.dtype, x_row * p.k + t);
            for (int64_t j = 0; j < width; ++j)
                acc[j] += a * load(wg, p.dtype, p.transpose ? (task.col + j) * p.k + t : t * p.n + task.col + j);
        }
        void* out = output_row(p, task.group, row);
        for (int64_t j = 0; j < width; ++j)
            store_scalar(p, out, task.col + j, acc[j] + (p.bias ? w.bias[task.group * p.n + task.col + j] : 0.0f));
    }
}

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Problem p;
    if (describe(call, p)) return 0;
    return workspace_layout(p, thread_count(call), nullptr, nullptr);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Problem p;
    if (const char* error = describe(call, p)) return hb_fail(call, 2, error);
    const int threads = thread_count(call);
    if (call->workspace_bytes < workspace_layout(p, threads, nullptr, nullptr))
        return hb_fail(call, 3, "grouped_matmul: workspace too small");
    Workspace w;
    workspace_layout(p, threads, static_cast<uint8_t*>(call->workspace), &w);
    if (p.bias)
        for (int64_t i = 0; i < p.experts * p.n; ++i) w.bias[i] = load(p.bias->data, p.bias->dtype, i);
    const int64_t tasks = static_cast<int64_t>(p.tasks.size());
#pragma omp parallel num_threads(threads)
    {
        if (p.x_widened) {
#pragma omp for schedule(static)
            for (int64_t i = 0; i < p.m * p.k; ++i) w.x[i] = load(p.x->data, p.dtype, i);
        }
#ifdef HB_TUNED_AVX512
        // Streamed groups one after another, each thread on one contiguous range of panels.
        const int64_t panels = (p.n + kPanel - 1) / kPanel;
        const int64_t team = omp_get_num_threads(), per = (panels + team - 1) / team;
        for (int64_t e : p.streamed) {
#pragma omp for schedule(static)
            for (int64_t part = 0; part < team; ++part) {
                const int64_t first = part * per, end = std::min(panels, first + per);
                if (first < end) stream_rows(p, w, e, first, end);
            }
        }
        uint8_t* panel = w.panels ? w.panels + static_cast<uint64_t>(omp_get_thread_num()) * w.panel_bytes : nullptr;
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < tasks; ++t) run_task(p, w, p.tasks[static_cast<size_t>(t)], panel);
#else
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < tasks; ++t) run_task_plain(p, w, p.tasks[static_cast<size_t>(t)]);
#endif
    }
    return 0;
}
