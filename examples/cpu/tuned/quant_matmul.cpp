// Tuned quant_matmul: out = epilogue(x1 . x2) for int8 x1 [..., m, k] and x2 [..., k, n]
// (batch dims broadcast), the epilogue in fp32 in the operator's order (int32 bias, scale,
// offset, per-token scale, floating bias) and rounded to float16 or bfloat16.
// With AVX512-VNNI: vpdpbusd multiplies unsigned bytes by signed ones, so x1 is shifted to
// u8 (x + 128, a sign-bit flip) and the product corrected by 128 x the column sums of x2.
// Up to 8 rows per batch entry (decode), each thread streams its contiguous columns of x2
// in row order, 4 k at a time, interleaving them on the fly into accumulators kept in L2.
// Otherwise work is split into (batch entry, 64-column panel, row chunk) tasks. A task
// packs its x2 panel once into the VNNI layout (4 consecutive k of a column per 32-bit lane,
// built with byte and word unpacks, which leaves the columns of each 64-wide panel in a fixed
// permuted order that the epilogue undoes with two rounds of 128-bit shuffles) in a
// per-thread buffer that stays in L2, computes its column sums with the same instruction,
// and runs a 4-row x 64-column register block (16 zmm accumulators) over k. Without
// AVX512-VNNI/BW/VL the same tasks run a plain int32 tile loop.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#define HB_TUNED_VNNI 1
#endif

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

constexpr int64_t kPanel = 64;  // columns per task
constexpr int64_t kRows = 4;    // rows per register block
constexpr int64_t kStreamRowsAll = 8;  // at most this many rows: the streaming path (VNNI)

const hb_tensor* optional_tensor(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present && a->count == 1 ? &a->tensors[0] : nullptr;
}

float load_float(const hb_tensor& t, int64_t i) {
    switch (t.dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_INT32: return static_cast<float>(static_cast<const int32_t*>(t.data)[i]);
        default: return static_cast<const float*>(t.data)[i];
    }
}

struct Problem {
    const hb_tensor *x1 = nullptr, *x2 = nullptr, *scale = nullptr, *offset = nullptr, *pertoken = nullptr,
                    *bias = nullptr, *out = nullptr;
    int64_t m = 0, k = 0, n = 0, batch = 1, x1_mats = 1;
    std::vector<int64_t> x1_index, x2_index;  // per output batch entry
    bool batched_bias = false, int_bias = false, bf16_out = false;
    int64_t k4 = 0;  // k rounded up to a multiple of 4, in groups of 4

    // Tasks: batch entry x column panel x row chunk.
    int64_t panels = 0, chunks = 0, chunk_rows = 0;
};

std::vector<int64_t> batch_dims(const hb_tensor* t, int rank) {
    std::vector<int64_t> d(static_cast<size_t>(rank - (t->rank - 2)), 1);
    d.insert(d.end(), t->shape, t->shape + t->rank - 2);
    return d;
}

const char* describe(const hb_call* call, Problem& p) {
    p.x1 = optional_tensor(call, "x1");
    p.x2 = optional_tensor(call, "x2");
    p.scale = optional_tensor(call, "scale");
    p.offset = optional_tensor(call, "offset");
    p.pertoken = optional_tensor(call, "pertoken_scale");
    p.bias = optional_tensor(call, "bias");
    const hb_arg* out = hb_output(call, "out");
    if (!p.x1 || !p.x2 || !p.scale || !out || out->count != 1) return "quant_matmul: expected x1, x2, scale and out";
    p.out = &out->tensors[0];
    for (const hb_tensor* t : {p.x1, p.x2, p.scale, p.offset, p.pertoken, p.bias, p.out})
        if (t && !hb_is_contiguous(t)) return "quant_matmul: only contiguous tensors are supported";
    if (p.x1->dtype != HB_INT8 || p.x2->dtype != HB_INT8 || p.x1->rank < 2 || p.x2->rank < 2)
        return "quant_matmul: x1 and x2 must be int8 with at least 2 dims";
    if (p.out->dtype != HB_FLOAT16 && p.out->dtype != HB_BFLOAT16) return "quant_matmul: out must be float16 or bfloat16";
    p.bf16_out = p.out->dtype == HB_BFLOAT16;
    p.m = p.x1->shape[p.x1->rank - 2];
    p.k = p.x1->shape[p.x1->rank - 1];
    p.n = p.x2->shape[p.x2->rank - 1];
    if (p.x2->shape[p.x2->rank - 2] != p.k) return "quant_matmul: x1 and x2 disagree on k";
    const int batch_rank = std::max(p.x1->rank, p.x2->rank) - 2;
    const std::vector<int64_t> b1 = batch_dims(p.x1, batch_rank), b2 = batch_dims(p.x2, batch_rank);
    std::vector<int64_t> bo(static_cast<size_t>(batch_rank));
    for (int d = 0; d < batch_rank; ++d) {
        if (b1[d] != b2[d] && b1[d] != 1 && b2[d] != 1) return "quant_matmul: the batch dims of x1 and x2 do not broadcast";
        bo[d] = std::max(b1[d], b2[d]);
        p.batch *= bo[d];
        p.x1_mats *= b1[d];
    }
    for (int64_t b = 0; b < p.batch; ++b) {
        int64_t rest = b, i1 = 0, i2 = 0, s1 = 1, s2 = 1;
        for (int d = batch_rank - 1; d >= 0; --d) {
            const int64_t index = rest % bo[d];
            rest /= bo[d];
            i1 += (b1[d] == 1 ? 0 : index) * s1;
            i2 += (b2[d] == 1 ? 0 : index) * s2;
            s1 *= b1[d];
            s2 *= b2[d];
        }
        p.x1_index.push_back(i1);
        p.x2_index.push_back(i2);
    }
    if (hb_numel(p.out) != p.batch * p.m * p.n) return "quant_matmul: out has the wrong size";
    if (hb_numel(p.scale) != 1 && hb_numel(p.scale) != p.n) return "quant_matmul: scale must be [1] or [n]";
    if (p.offset && hb_numel(p.offset) != 1 && hb_numel(p.offset) != p.n) return "quant_matmul: offset must be [1] or [n]";
    if (p.pertoken && hb_numel(p.pertoken) != p.m) return "quant_matmul: pertoken_scale must be [m]";
    if (p.bias) {
        p.batched_bias = hb_numel(p.bias) != p.n;
        if (p.batched_bias && hb_numel(p.bias) != p.batch * p.n) return "quant_matmul: bias must be [n], [1, n] or [batch, 1, n]";
        p.int_bias = p.bias->dtype == HB_INT32;
    }
    p.k4 = (p.k + 3) / 4;
    p.panels = (p.n + kPanel - 1) / kPanel;
    // Enough tasks for every thread even when the batch and the columns are few.
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    const int64_t wanted = 4 * threads;
    const int64_t row_blocks = (p.m + kRows - 1) / kRows;
    p.chunks = std::clamp<int64_t>((wanted + p.batch * p.panels - 1) / (p.batch * p.panels), 1, row_blocks);
    p.chunk_rows = (row_blocks + p.chunks - 1) / p.chunks * kRows;
    p.chunks = (p.m + p.chunk_rows - 1) / p.chunk_rows;
    return nullptr;
}

// Workspace: per thread a packed panel (k4 x 64 x 4 bytes) and its column sums; x1 as u8
// rows padded to k4 x 4 bytes; the epilogue's per-column parameters in fp32 / int32.
struct Workspace {
    uint8_t* panels = nullptr;  // threads x k4 x 256
    uint8_t* x1u = nullptr;     // x1_mats x m x k4 x 4
    float* scale = nullptr;     // n
    float* offset = nullptr;    // n (zeros when absent)
    float* fbias = nullptr;     // bias rows (batch or 1) x n, fp32 (zeros when absent or int32)
    int32_t* ibias = nullptr;   // bias rows x n, int32 (zeros when absent or floating)
    float* pertoken = nullptr;  // m (ones when absent)
    int32_t* stream = nullptr;  // few rows: (m + 1) x panels x 64 column sums and accumulators
};

uint64_t workspace_layout(const Problem& p, int threads, uint8_t* base, Workspace* w) {
    uint64_t at = 0;
    auto take = [&](uint64_t bytes) {
        uint8_t* ptr = base ? base + at : nullptr;
        at += (bytes + 63) / 64 * 64;
        return ptr;
    };
    const int64_t bias_rows = p.batched_bias ? p.batch : 1;
    Workspace ws;
    ws.panels = take(static_cast<uint64_t>(threads) * static_cast<uint64_t>(p.k4) * kPanel * 4);
    ws.x1u = take(static_cast<uint64_t>(p.x1_mats * p.m * p.k4 * 4));
    ws.scale = reinterpret_cast<float*>(take(static_cast<uint64_t>(p.n) * 4));
    ws.offset = reinterpret_cast<float*>(take(static_cast<uint64_t>(p.n) * 4));
    ws.fbias = reinterpret_cast<float*>(take(static_cast<uint64_t>(bias_rows * p.n) * 4));
    ws.ibias = reinterpret_cast<int32_t*>(take(static_cast<uint64_t>(bias_rows * p.n) * 4));
    ws.pertoken = reinterpret_cast<float*>(take(static_cast<uint64_t>(p.m) * 4));
    ws.stream = reinterpret_cast<int32_t*>(take(p.m <= kStreamRowsAll ? static_cast<uint64_t>((p.m + 1) * p.panels * kPanel) * 4 : 0));
    if (w) *w = ws;
    return at;
}

int thread_count(const hb_call* call) { return call->num_threads > 0 ? call->num_threads : omp_get_max_threads(); }

// The epilogue of one output element, scalar (tails and the plain path).
inline uint16_t finish(const Problem& p, const Workspace& w, int32_t acc, int64_t b, int64_t row, int64_t col) {
    const int64_t bias_row = p.batched_bias ? b * p.n : 0;
    const int32_t integer = acc + w.ibias[bias_row + col];
    const float y = (static_cast<float>(integer) * w.scale[col] + w.offset[col]) * w.pertoken[row] + w.fbias[bias_row + col];
    return p.bf16_out ? hb_f32_to_bf16(y) : hb_f32_to_f16(y);
}

void prepare_parameters(const Problem& p, const Workspace& w) {
    for (int64_t j = 0; j < p.n; ++j) {
        w.scale[j] = load_float(*p.scale, hb_numel(p.scale) > 1 ? j : 0);
        w.offset[j] = p.offset ? load_float(*p.offset, hb_numel(p.offset) > 1 ? j : 0) : 0.0f;
    }
    const int64_t bias_values = (p.batched_bias ? p.batch : 1) * p.n;
    for (int64_t i = 0; i < bias_values; ++i) {
        w.ibias[i] = p.bias && p.int_bias ? static_cast<const int32_t*>(p.bias->data)[i] : 0;
        w.fbias[i] = p.bias && !p.int_bias ? load_float(*p.bias, i) : 0.0f;
    }
    for (int64_t i = 0; i < p.m; ++i) w.pertoken[i] = p.pertoken ? load_float(*p.pertoken, i) : 1.0f;
}

#ifdef HB_TUNED_VNNI

// x1 rows as u8 (the sign bit flipped), padded with u8 128 (s8 0) to whole groups of 4.
void convert_x1(const Problem& p, const Workspace& w) {
    const auto* x1 = static_cast<const int8_t*>(p.x1->data);
    const int64_t rows = p.x1_mats * p.m, stride = p.k4 * 4;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const int8_t* src = x1 + r * p.k;
        uint8_t* dst = w.x1u + r * stride;
        const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
        int64_t c = 0;
        for (; c + 64 <= p.k; c += 64)
            _mm512_storeu_si512(dst + c, _mm512_xor_si512(_mm512_loadu_si512(src + c), flip));
        for (; c < stride; ++c) dst[c] = c < p.k ? static_cast<uint8_t>(src[c] ^ 0x80) : 0x80;
    }
}

// Packs columns [col, col + 64) of one x2 matrix: for each group of 4 k, 4 zmm whose
// 32-bit lane 4L + t of zmm q holds the 4 k of column col + 16L + 4q + t. Columns past n
// and k past the end are zeros. Returns the column sums (same layout) in `sums`.
// The 4 k of group g for columns [col, col + 64) of one x2 matrix, interleaved: zmm q's 32-bit
// lane 4L + t holds the 4 k of column col + 16L + 4q + t (byte and word unpacks work
// within 128-bit lanes). Columns past n and k past the end are zeros.
inline void interleave_group(const Problem& p, const int8_t* x2, int64_t g, int64_t col, __mmask64 columns, __m512i q[4]) {
    __m512i r[4];
    for (int t = 0; t < 4; ++t) {
        const int64_t row = 4 * g + t;
        r[t] = row < p.k ? _mm512_maskz_loadu_epi8(columns, x2 + row * p.n + col) : _mm512_setzero_si512();
    }
    const __m512i lo01 = _mm512_unpacklo_epi8(r[0], r[1]), hi01 = _mm512_unpackhi_epi8(r[0], r[1]);
    const __m512i lo23 = _mm512_unpacklo_epi8(r[2], r[3]), hi23 = _mm512_unpackhi_epi8(r[2], r[3]);
    q[0] = _mm512_unpacklo_epi16(lo01, lo23);
    q[1] = _mm512_unpackhi_epi16(lo01, lo23);
    q[2] = _mm512_unpacklo_epi16(hi01, hi23);
    q[3] = _mm512_unpackhi_epi16(hi01, hi23);
}

inline __mmask64 column_mask(const Problem& p, int64_t col) {
    const int64_t width = std::min(kPanel, p.n - col);
    return width >= 64 ? ~__mmask64(0) : (__mmask64(1) << width) - 1;
}

// Packs columns [col, col + 64) of one x2 matrix, every group of 4 k interleaved as above,
// and returns the column sums (same layout) in `sums`.
void pack_panel(const Problem& p, const int8_t* x2, int64_t col, uint8_t* panel, __m512i sums[4]) {
    const __mmask64 columns = column_mask(p, col);
    const __m512i ones = _mm512_set1_epi8(1);
    for (int q = 0; q < 4; ++q) sums[q] = _mm512_setzero_si512();
    for (int64_t g = 0; g < p.k4; ++g) {
        __m512i q[4];
        interleave_group(p, x2, g, col, columns, q);
        for (int t = 0; t < 4; ++t) {
            _mm512_storeu_si512(panel + (g * 4 + t) * 64, q[t]);
            sums[t] = _mm512_dpbusd_epi32(sums[t], ones, q[t]);
        }
    }
}

// (Full-mask maskz_ forms of some intrinsics below avoid GCC 12's -Wmaybe-uninitialized on
// the undefined source operand of the plain ones.)
// The four packed accumulators of a row, lanes 4L + t of zmm q = column 16L + 4q + t, back
// in column order: out[L] = columns 16L .. 16L + 15.
inline void unpermute(const __m512i a[4], __m512i out[4]) {
    const __m512i t0 = _mm512_maskz_shuffle_i32x4(0xffff, a[0], a[1], 0x44), t1 = _mm512_maskz_shuffle_i32x4(0xffff, a[0], a[1], 0xEE);
    const __m512i t2 = _mm512_maskz_shuffle_i32x4(0xffff, a[2], a[3], 0x44), t3 = _mm512_maskz_shuffle_i32x4(0xffff, a[2], a[3], 0xEE);
    out[0] = _mm512_maskz_shuffle_i32x4(0xffff, t0, t2, 0x88);
    out[1] = _mm512_maskz_shuffle_i32x4(0xffff, t0, t2, 0xDD);
    out[2] = _mm512_maskz_shuffle_i32x4(0xffff, t1, t3, 0x88);
    out[3] = _mm512_maskz_shuffle_i32x4(0xffff, t1, t3, 0xDD);
}

inline __m256i to_bf16(__m512 v) {
#if defined(__AVX512BF16__)
    return (__m256i)_mm512_cvtneps_pbh(v);
#else
    // Round to nearest even on the bits; NaN stays a quiet NaN.
    const __m512i u = _mm512_castps_si512(v);
    const __m512i rounded = _mm512_add_epi32(
        u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1))));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i bits = _mm512_mask_or_epi32(rounded, nan, u, _mm512_set1_epi32(0x00400000));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(bits, 16));
#endif
}

// The epilogue of one row's 64 packed accumulators (columns [col, col + 64)): the u8 shift
// corrected with the column sums, back in column order, then scale, offset, per-token scale
// and biases in fp32, rounded and stored (masked past n).
void finish_row(const Problem& p, const Workspace& w, const __m512i acc[4], const __m512i sums[4], int64_t b, int64_t row,
                int64_t col) {
    const int64_t width = std::min(kPanel, p.n - col);
    const int64_t bias_row = p.batched_bias ? b * p.n : 0;
    __m512i corrected[4], natural[4];
    for (int q = 0; q < 4; ++q) corrected[q] = _mm512_sub_epi32(acc[q], _mm512_maskz_slli_epi32(0xffff, sums[q], 7));
    unpermute(corrected, natural);
    const __m512 pt = _mm512_set1_ps(w.pertoken[row]);
    uint16_t* y = static_cast<uint16_t*>(p.out->data) + (b * p.m + row) * p.n + col;
    for (int l = 0; l < 4 && 16 * l < width; ++l) {
        const int64_t c = col + 16 * l;
        const int64_t valid = std::min<int64_t>(16, width - 16 * l);
        const __mmask16 mask = valid >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << valid) - 1);
        const __m512i integer = _mm512_add_epi32(natural[l], _mm512_maskz_loadu_epi32(mask, w.ibias + bias_row + c));
        __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(0xffff, integer), _mm512_maskz_loadu_ps(mask, w.scale + c));
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, w.offset + c));
        v = _mm512_mul_ps(v, pt);
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, w.fbias + bias_row + c));
        const __m256i half = p.bf16_out ? to_bf16(v) : _mm512_maskz_cvtps_ph(0xffff, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_mask_storeu_epi16(y + 16 * l, mask, half);
    }
}

// Rows [row, row + R) of batch entry b against the packed panel at `col`: the register
// block, then the epilogue in column order.
template <int R>
void block(const Problem& p, const Workspace& w, const uint8_t* panel, const __m512i sums[4], int64_t b, int64_t row,
           int64_t col) {
    __m512i acc[R][4];
    for (int r = 0; r < R; ++r)
        for (int q = 0; q < 4; ++q) acc[r][q] = _mm512_setzero_si512();
    const uint8_t* a = w.x1u + (p.x1_index[b] * p.m + row) * p.k4 * 4;
    const int64_t stride = p.k4 * 4;
    for (int64_t g = 0; g < p.k4; ++g) {
        const uint8_t* pg = panel + g * 256;
        const __m512i b0 = _mm512_loadu_si512(pg), b1 = _mm512_loadu_si512(pg + 64);
        const __m512i b2 = _mm512_loadu_si512(pg + 128), b3 = _mm512_loadu_si512(pg + 192);
        for (int r = 0; r < R; ++r) {
            int32_t quad;
            std::memcpy(&quad, a + r * stride + g * 4, 4);
            const __m512i av = _mm512_set1_epi32(quad);
            acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], av, b0);
            acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], av, b1);
            acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], av, b2);
            acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], av, b3);
        }
    }
    for (int r = 0; r < R; ++r) finish_row(p, w, acc[r], sums, b, row + r, col);
}

void run_task(const Problem& p, const Workspace& w, int64_t task, uint8_t* panel) {
    const int64_t per_batch = p.panels * p.chunks;
    const int64_t b = task / per_batch, panel_index = task % per_batch / p.chunks, chunk = task % p.chunks;
    const int64_t col = panel_index * kPanel;
    const int64_t first = chunk * p.chunk_rows, last = std::min(p.m, first + p.chunk_rows);
    if (first >= last) return;
    __m512i sums[4];
    pack_panel(p, static_cast<const int8_t*>(p.x2->data) + p.x2_index[b] * p.k * p.n, col, panel, sums);
    int64_t row = first;
    for (; row + kRows <= last; row += kRows) block<kRows>(p, w, panel, sums, b, row, col);
    switch (last - row) {
        case 3: block<3>(p, w, panel, sums, b, row, col); break;
        case 2: block<2>(p, w, panel, sums, b, row, col); break;
        case 1: block<1>(p, w, panel, sums, b, row, col); break;
        default: break;
    }
}

// Few rows (decode): packing 64-column panels would read x2 64 bytes per row at a stride of
// n, a page per row when n is large. Instead each thread streams its contiguous range of
// columns group of 4 k by group, interleaving on the fly, with the accumulators of its rows
// and the column sums in the workspace (L2 resident), and finishes them at the end.

template <int R>
void stream_range(const Problem& p, const Workspace& w, int64_t b, int64_t first_panel, int64_t end_panel) {
    const int8_t* x2 = static_cast<const int8_t*>(p.x2->data) + p.x2_index[b] * p.k * p.n;
    const uint8_t* a = w.x1u + p.x1_index[b] * p.m * p.k4 * 4;
    const int64_t stride = p.k4 * 4, row_words = p.panels * kPanel;
    int32_t* sums = w.stream;  // row 0: column sums; rows 1..R: accumulators
    for (int64_t r = 0; r <= R; ++r)
        std::memset(sums + r * row_words + first_panel * kPanel, 0, static_cast<size_t>((end_panel - first_panel) * kPanel) * 4);
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t g = 0; g < p.k4; ++g) {
        __m512i av[R];
        for (int r = 0; r < R; ++r) {
            int32_t quad;
            std::memcpy(&quad, a + r * stride + g * 4, 4);
            av[r] = _mm512_set1_epi32(quad);
        }
        for (int64_t pi = first_panel; pi < end_panel; ++pi) {
            const int64_t col = pi * kPanel;
            __m512i q[4];
            interleave_group(p, x2, g, col, column_mask(p, col), q);
            for (int t = 0; t < 4; ++t) {
                int32_t* s_at = sums + col + 16 * t;
                _mm512_storeu_si512(s_at, _mm512_dpbusd_epi32(_mm512_loadu_si512(s_at), ones, q[t]));
                for (int r = 0; r < R; ++r) {
                    int32_t* at = sums + (r + 1) * row_words + col + 16 * t;
                    _mm512_storeu_si512(at, _mm512_dpbusd_epi32(_mm512_loadu_si512(at), av[r], q[t]));
                }
            }
        }
    }
    for (int64_t pi = first_panel; pi < end_panel; ++pi) {
        const int64_t col = pi * kPanel;
        __m512i s4[4], acc[4];
        for (int t = 0; t < 4; ++t) s4[t] = _mm512_loadu_si512(sums + col + 16 * t);
        for (int r = 0; r < R; ++r) {
            for (int t = 0; t < 4; ++t) acc[t] = _mm512_loadu_si512(sums + (r + 1) * row_words + col + 16 * t);
            finish_row(p, w, acc, s4, b, r, col);
        }
    }
}

void stream_rows(const Problem& p, const Workspace& w, int64_t b, int64_t first_panel, int64_t end_panel) {
    switch (p.m) {
        case 1: stream_range<1>(p, w, b, first_panel, end_panel); break;
        case 2: stream_range<2>(p, w, b, first_panel, end_panel); break;
        case 3: stream_range<3>(p, w, b, first_panel, end_panel); break;
        case 4: stream_range<4>(p, w, b, first_panel, end_panel); break;
        case 5: stream_range<5>(p, w, b, first_panel, end_panel); break;
        case 6: stream_range<6>(p, w, b, first_panel, end_panel); break;
        case 7: stream_range<7>(p, w, b, first_panel, end_panel); break;
        default: stream_range<8>(p, w, b, first_panel, end_panel); break;
    }
}

#endif  // HB_TUNED_VNNI

// Without VNNI: the same tasks, an int32 tile loop the compiler vectorizes.
[[maybe_unused]] void run_task_plain(const Problem& p, const Workspace& w, int64_t task) {
    const int64_t per_batch = p.panels * p.chunks;
    const int64_t b = task / per_batch, panel_index = task % per_batch / p.chunks, chunk = task % p.chunks;
    const int64_t col = panel_index * kPanel, width = std::min(kPanel, p.n - col);
    const int64_t first = chunk * p.chunk_rows, last = std::min(p.m, first + p.chunk_rows);
    const auto* x1 = static_cast<const int8_t*>(p.x1->data) + p.x1_index[b] * p.m * p.k;
    const auto* x2 = static_cast<const int8_t*>(p.x2->data) + p.x2_index[b] * p.k * p.n + col;
    auto* out = static_cast<uint16_t*>(p.out->data);
    for (int64_t row = first; row < last; ++row) {
        int32_t acc[kPanel] = {};
        for (int64_t r = 0; r < p.k; ++r) {
            const int32_t a = x1[row * p.k + r];
            for (int64_t j = 0; j < width; ++j) acc[j] += a * static_cast<int32_t>(x2[r * p.n + j]);
        }
        for (int64_t j = 0; j < width; ++j) out[(b * p.m + row) * p.n + col + j] = finish(p, w, acc[j], b, row, col + j);
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
        return hb_fail(call, 3, "quant_matmul: workspace too small");
    Workspace w;
    workspace_layout(p, threads, static_cast<uint8_t*>(call->workspace), &w);
    prepare_parameters(p, w);
    const int64_t tasks = p.batch * p.panels * p.chunks;
#pragma omp parallel num_threads(threads)
    {
#ifdef HB_TUNED_VNNI
        convert_x1(p, w);  // ends with the implicit barrier of its omp for
        if (p.m <= kStreamRowsAll) {
            // One contiguous range of panels per thread, per batch entry.
            const int64_t team = omp_get_num_threads(), per = (p.panels + team - 1) / team;
            for (int64_t b = 0; b < p.batch; ++b) {
#pragma omp for schedule(static)
                for (int64_t part = 0; part < team; ++part) {
                    const int64_t first = part * per, end = std::min(p.panels, first + per);
                    if (first < end) stream_rows(p, w, b, first, end);
                }
            }
        } else {
            uint8_t* panel = w.panels + static_cast<uint64_t>(omp_get_thread_num()) * static_cast<uint64_t>(p.k4) * kPanel * 4;
#pragma omp for schedule(dynamic)
            for (int64_t t = 0; t < tasks; ++t) run_task(p, w, t, panel);
        }
#else
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < tasks; ++t) run_task_plain(p, w, t);
#endif
    }
    return 0;
}
