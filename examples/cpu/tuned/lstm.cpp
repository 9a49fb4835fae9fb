// Tuned lstm (torch.nn.LSTM in eval mode; the interface of examples/cpu/reference/lstm.cpp).
// Per layer and direction:
//  1. The weights are packed once per call, fp32, by blocks of 16 hidden units: for unit block
//     u the 4 gates x 16 units of weight_ih (and weight_hh) form 64 contiguous columns, k-major
//     ([u][k][gate][16]), so that one block's gate pre-activations are 4 vectors.
//  2. The input projection of every step, gx = x W_ih^T + b_ih + b_hh, is one GEMM: a 4-row x
//     64-column register block (16 vector accumulators, 4 weight vectors and 4 broadcasts per
//     k), OpenMP over (unit block, 64 rows).
//  3. The recurrence: per step, per (unit block, 4 sequences) the same register block starts
//     from gx, adds h W_hh^T, and the cell update runs on the accumulators (vector sigmoid and
//     tanh from an exp polynomial; NaN and infinities kept): h and c never leave the cache. The
//     steps are split over the threads by tasks with one barrier a step (h double-buffered), a
//     second with the projection; a step under 256K multiply-adds runs on one thread, and then
//     the two directions of a bidirectional layer run on different threads at once.
// Vectors are GCC vector extensions (16 floats: AVX-512 with -march=native, two AVX2 or four
// SSE registers elsewhere), so one code path serves every x86 CPU; the fp16 conversions use
// F16C where the CPU has it and the portable routines of hapbench/half.h otherwise.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace {

typedef float v16 __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64)));

inline v16 load16(const float* p) {
    v16 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store16(float* p, v16 v) { std::memcpy(p, &v, sizeof v); }
inline v16 splat(float f) { return v16{} + f; }

// e^x with NaN kept (a comparison with NaN is false, so the clamps pass it through) and the
// argument clamped to [-87.3, 88.3], where 2^n stays a normal float: e^-inf is then 1e-38
// (the sigmoids and tanh built on it reach their limits 0 and 1 exactly or within 1e-38).
inline v16 exp16(v16 x) {
    x = x < splat(-87.3f) ? splat(-87.3f) : x;
    x = x > splat(88.3f) ? splat(88.3f) : x;
    const v16 magic = splat(12582912.0f);  // 1.5 x 2^23: adding it rounds to an integer
    const v16 t = x * 1.44269504f + magic;
    const v16 n = t - magic;
    const v16 r = (x - n * 0.693145752f) - n * 1.42860677e-6f;  // x - n ln2 in two parts
    v16 p = splat(1.0f / 720);
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const v16i bits = ((v16i)t - (v16i)magic + 127) << 23;  // 2^n
    return p * (v16)bits;
}

// 1 / (1 + e^-x), exactly 0 where e^-x overflows fp32 (x < -88.7; -inf above all): the
// clamped exp would leave 1e-39 there, and 1e-39 x inf is inf where the golden's 0 x inf is NaN.
inline v16 sigmoid16(v16 x) {
    const v16 s = 1.0f / (1.0f + exp16(-x));
    return x < splat(-88.7f) ? v16{} : s;
}

// tanh: an odd polynomial near 0 (where (1 - e) / (1 + e) would cancel), else sign(x) (1 - e) /
// (1 + e) with e = e^-2|x|.
inline v16 tanh16(v16 x) {
    const v16u sign = (v16u)x & 0x80000000u;
    const v16 a = (v16)((v16u)x & 0x7fffffffu);
    const v16 e = exp16(-2.0f * a);
    const v16 big = (v16)((v16u)((1.0f - e) / (1.0f + e)) | sign);
    const v16 x2 = x * x;
    const v16 small = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));
    return a < splat(0.125f) ? small : big;
}

// n contiguous elements of a float dtype into fp32.
void widen(const void* src, hb_dtype t, int64_t n, float* dst) {
    if (t == HB_FLOAT32) {
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    } else if (t == HB_BFLOAT16) {
        const auto* s = static_cast<const uint16_t*>(src);
        for (int64_t i = 0; i < n; ++i) dst[i] = hb_bits_f32(static_cast<uint32_t>(s[i]) << 16);
    } else {
        const auto* s = static_cast<const uint16_t*>(src);
        int64_t i = 0;
#if defined(__F16C__)
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
#endif
        for (; i < n; ++i) dst[i] = hb_f16_to_f32(s[i]);
    }
}

// n fp32 values into a float dtype, rounding to nearest even (NaN stays NaN).
void narrow(const float* src, void* dst, hb_dtype t, int64_t n) {
    if (t == HB_FLOAT32) {
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    } else if (t == HB_BFLOAT16) {
        auto* d = static_cast<uint16_t*>(dst);
        for (int64_t i = 0; i < n; ++i) d[i] = hb_f32_to_bf16(src[i]);
    } else {
        auto* d = static_cast<uint16_t*>(dst);
        int64_t i = 0;
#if defined(__F16C__)
        for (; i + 8 <= n; i += 8)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
        for (; i < n; ++i) d[i] = hb_f32_to_f16(src[i]);
    }
}

struct Problem {
    const hb_tensor* x = nullptr;
    const hb_arg *w_ih = nullptr, *w_hh = nullptr, *b_ih = nullptr, *b_hh = nullptr, *w_hr = nullptr;
    const hb_tensor *h0 = nullptr, *c0 = nullptr;
    hb_tensor *y = nullptr, *hn = nullptr, *cn = nullptr;
    hb_dtype dtype = HB_FLOAT32;
    int64_t seq = 0, batch = 0, input = 0, hidden = 0, proj = 0, layers = 1, dirs = 1;
    bool batch_first = false;
    int64_t state() const { return proj > 0 ? proj : hidden; }
    int64_t layer_input(int64_t l) const { return l == 0 ? input : dirs * state(); }
    int64_t cells() const { return layers * dirs; }
    int64_t blocks() const { return (hidden + 15) / 16; }  // unit blocks
};

bool same_shape(const hb_tensor& t, hb_dtype dtype, std::initializer_list<int64_t> dims) {
    if (t.dtype != dtype || t.rank != static_cast<int32_t>(dims.size()) || !hb_is_contiguous(&t)) return false;
    int d = 0;
    for (int64_t v : dims)
        if (t.shape[d++] != v) return false;
    return true;
}

const hb_arg* present(const hb_arg* a) { return a && a->present ? a : nullptr; }

const char* read_call(const hb_call* call, Problem& p) {
    const hb_arg* x = hb_input(call, "x");
    p.w_ih = hb_input(call, "weight_ih");
    p.w_hh = hb_input(call, "weight_hh");
    hb_arg* y = hb_output(call, "y");
    hb_arg* hn = hb_output(call, "hn");
    hb_arg* cn = hb_output(call, "cn");
    if (!x || !p.w_ih || !p.w_hh || !y || !hn || !cn) return "lstm: expected inputs x, weight_ih, weight_hh and outputs y, hn, cn";
    p.x = &x->tensors[0];
    p.y = &y->tensors[0];
    p.hn = &hn->tensors[0];
    p.cn = &cn->tensors[0];
    p.dtype = p.x->dtype;
    if (p.dtype != HB_FLOAT32 && p.dtype != HB_FLOAT16 && p.dtype != HB_BFLOAT16) return "lstm: x must be float32, float16 or bfloat16";
    p.input = hb_attr_int(call, "inputSize", 0);
    p.hidden = hb_attr_int(call, "hiddenSize", 0);
    p.layers = hb_attr_int(call, "numLayers", 1);
    p.proj = hb_attr_int(call, "projSize", 0);
    p.dirs = hb_attr_int(call, "bidirectional", 0) ? 2 : 1;
    p.batch_first = hb_attr_int(call, "batchFirst", 0) != 0;
    const bool bias = hb_attr_int(call, "bias", 1) != 0;
    if (p.input < 1 || p.hidden < 1 || p.layers < 1 || p.proj < 0 || p.proj >= p.hidden)
        return "lstm: inputSize, hiddenSize, numLayers must be positive and projSize in [0, hiddenSize)";
    if (p.x->rank != 3 || p.x->shape[2] != p.input || !hb_is_contiguous(p.x)) return "lstm: x must be a contiguous [S, B, inputSize]";
    p.seq = p.x->shape[p.batch_first ? 1 : 0];
    p.batch = p.x->shape[p.batch_first ? 0 : 1];
    const int64_t gh = 4 * p.hidden, hs = p.state(), cells = p.cells();
    p.b_ih = bias ? present(hb_input(call, "bias_ih")) : nullptr;
    p.b_hh = bias ? present(hb_input(call, "bias_hh")) : nullptr;
    p.w_hr = p.proj > 0 ? present(hb_input(call, "weight_hr")) : nullptr;
    if (p.proj > 0 && !p.w_hr) return "lstm: projSize > 0 needs weight_hr";
    if ((p.b_ih == nullptr) != (p.b_hh == nullptr)) return "lstm: give both bias lists or neither";
    if (p.w_ih->count != cells || p.w_hh->count != cells || (p.b_ih && (p.b_ih->count != cells || p.b_hh->count != cells)) ||
        (p.w_hr && p.w_hr->count != cells))
        return "lstm: every weight list needs numLayers x directions tensors";
    for (int64_t k = 0; k < cells; ++k) {
        if (!same_shape(p.w_ih->tensors[k], p.dtype, {gh, p.layer_input(k / p.dirs)}) ||
            !same_shape(p.w_hh->tensors[k], p.dtype, {gh, hs}))
            return "lstm: weight_ih[k] must be [4H, layer input] and weight_hh[k] [4H, Hs], in x's dtype";
        if (p.b_ih && (!same_shape(p.b_ih->tensors[k], p.dtype, {gh}) || !same_shape(p.b_hh->tensors[k], p.dtype, {gh})))
            return "lstm: biases must be [4H] in x's dtype";
        if (p.w_hr && !same_shape(p.w_hr->tensors[k], p.dtype, {p.proj, p.hidden})) return "lstm: weight_hr[k] must be [P, H]";
    }
    if (const hb_arg* h0 = present(hb_input(call, "h0"))) p.h0 = &h0->tensors[0];
    if (const hb_arg* c0 = present(hb_input(call, "c0"))) p.c0 = &c0->tensors[0];
    if (p.h0 && !same_shape(*p.h0, p.dtype, {cells, p.batch, hs})) return "lstm: h0 must be [L Dn, B, Hs]";
    if (p.c0 && !same_shape(*p.c0, p.dtype, {cells, p.batch, p.hidden})) return "lstm: c0 must be [L Dn, B, H]";
    const int64_t width = p.dirs * hs;
    if (!(p.batch_first ? same_shape(*p.y, p.dtype, {p.batch, p.seq, width}) : same_shape(*p.y, p.dtype, {p.seq, p.batch, width})) ||
        !same_shape(*p.hn, p.dtype, {cells, p.batch, hs}) || !same_shape(*p.cn, p.dtype, {cells, p.batch, p.hidden}))
        return "lstm: y, hn or cn has the wrong shape or dtype";
    return nullptr;
}

// Per direction (two may run at once): packed weights, the projection, bias, states.
struct DirBuffers {
    float *w_ih, *w_hh, *w_hr, *bias, *gx, *h, *h_next, *h_full, *c;
};

// Workspace layout in floats (every piece a multiple of 16 floats).
struct Layout {
    int64_t layer, w_ih, w_hh, w_hr, bias, gx, h, full, row;
    int64_t per_dir() const { return w_ih + w_hh + w_hr + bias + gx + 2 * h + 2 * full; }
    int64_t total(const Problem& p) const { return 2 * layer + p.dirs * per_dir() + row * 64; }
};

int64_t round16(int64_t n) { return (n + 15) / 16 * 16; }

Layout layout_of(const Problem& p) {
    Layout l;
    const int64_t rows = p.seq * p.batch, cols = p.blocks() * 64, max_in = std::max(p.input, p.dirs * p.state());
    l.layer = round16(rows * max_in);
    l.w_ih = max_in * cols;
    l.w_hh = p.state() * cols;
    l.w_hr = round16(p.hidden) * round16(p.proj);  // W_hr^T [H][P], P padded
    l.bias = cols;
    l.gx = rows * cols;
    l.h = round16(p.batch * p.state());
    l.full = p.batch * p.blocks() * 16;  // h_full and c, [B][blocks * 16]
    l.row = round16(std::max(max_in, p.hidden));  // a thread's row buffer for packing (64 threads at most)
    return l;
}

constexpr int kMaxThreads = 64;

// Packs a [4H, n] weight (PyTorch rows i, f, g, o) as [block][k][gate][16], zeros past H:
// per (block, gate) tile, 16 rows x 16 columns at a time are widened into a small buffer and
// written back transposed, one cache line per column, OpenMP over the tiles.
void pack_gates(const hb_tensor& w, hb_dtype t, int64_t hidden, int64_t n, float* out, int threads) {
    const int64_t blocks = (hidden + 15) / 16;
    const size_t elem = t == HB_FLOAT32 ? 4 : 2;
#pragma omp parallel for num_threads(threads) schedule(static) collapse(2)
    for (int64_t b = 0; b < blocks; ++b)
        for (int64_t g = 0; g < 4; ++g) {
            const int64_t units = std::min<int64_t>(16, hidden - b * 16);
            float* dst = out + b * n * 64 + g * 16;
            float tile[16][16];
            for (int64_t k0 = 0; k0 < n; k0 += 16) {
                const int64_t kn = std::min<int64_t>(16, n - k0);
                for (int64_t u = 0; u < 16; ++u) {
                    if (u < units) {
                        const int64_t row = g * hidden + b * 16 + u;
                        widen(static_cast<const char*>(w.data) + static_cast<size_t>(row * n + k0) * elem, t, kn, tile[u]);
                    } else {
                        std::fill(tile[u], tile[u] + 16, 0.0f);
                    }
                }
                for (int64_t kk = 0; kk < kn; ++kk) {
                    alignas(64) float column[16];
                    for (int64_t u = 0; u < 16; ++u) column[u] = tile[u][kk];
                    std::memcpy(dst + (k0 + kk) * 64, column, sizeof column);
                }
            }
        }
}

// The 4-row x 64-column register block: acc[r][g] += a[r][k] b[k][g*16 ...] for k < K, rows
// a + r * lda (r < nr).
inline void block_4x64(const float* a, int64_t lda, int nr, const float* b, int64_t K, v16 acc[4][4]) {
    if (nr == 4) {
        for (int64_t k = 0; k < K; ++k) {
            const v16 b0 = load16(b + k * 64), b1 = load16(b + k * 64 + 16), b2 = load16(b + k * 64 + 32),
                      b3 = load16(b + k * 64 + 48);
            for (int r = 0; r < 4; ++r) {
                const v16 av = splat(a[r * lda + k]);
                acc[r][0] += av * b0;
                acc[r][1] += av * b1;
                acc[r][2] += av * b2;
                acc[r][3] += av * b3;
            }
        }
        return;
    }
    for (int64_t k = 0; k < K; ++k) {
        const v16 b0 = load16(b + k * 64), b1 = load16(b + k * 64 + 16), b2 = load16(b + k * 64 + 32),
                  b3 = load16(b + k * 64 + 48);
        for (int r = 0; r < nr; ++r) {
            const v16 av = splat(a[r * lda + k]);
            acc[r][0] += av * b0;
            acc[r][1] += av * b1;
            acc[r][2] += av * b2;
            acc[r][3] += av * b3;
        }
    }
}

// gx[row][block * 64 + gate * 16 + u] for every row of the layer input, OpenMP over (unit
// block, 64-row panel).
void input_projection(const float* in, int64_t rows, int64_t n, const float* w, const float* bias, int64_t blocks, float* gx,
                      int threads) {
    const int64_t panels = (rows + 63) / 64, cols = blocks * 64;
#pragma omp parallel for num_threads(threads) schedule(static) collapse(2)
    for (int64_t b = 0; b < blocks; ++b)
        for (int64_t panel = 0; panel < panels; ++panel) {
            const float* wb = w + b * n * 64;
            const int64_t end = std::min(rows, (panel + 1) * 64);
            for (int64_t r0 = panel * 64; r0 < end; r0 += 4) {
                const int nr = static_cast<int>(std::min<int64_t>(4, end - r0));
                v16 acc[4][4];
                for (int r = 0; r < 4; ++r)
                    for (int g = 0; g < 4; ++g) acc[r][g] = load16(bias + b * 64 + g * 16);
                block_4x64(in + r0 * n, n, nr, wb, n, acc);
                for (int r = 0; r < nr; ++r)
                    for (int g = 0; g < 4; ++g) store16(gx + (r0 + r) * cols + b * 64 + g * 16, acc[r][g]);
            }
        }
}

// One direction's recurrence over every step on `threads` threads (1: no barriers).
void recurrence(const Problem& p, int64_t d, const DirBuffers& buf, float* layer_out, int threads) {
    const int64_t S = p.seq, B = p.batch, H = p.hidden, Hs = p.state(), P = p.proj, blocks = p.blocks();
    const int64_t cols = blocks * 64, width = p.dirs * Hs, full_ld = blocks * 16, Pp = round16(P);
    const int64_t batch_blocks = (B + 3) / 4, tasks = blocks * batch_blocks;
#pragma omp parallel num_threads(threads)
    {
        const int q = omp_get_thread_num(), nq = omp_get_num_threads();
        const int64_t t0 = tasks * q / nq, t1 = tasks * (q + 1) / nq;
        const int64_t b0 = B * q / nq, b1 = B * (q + 1) / nq;  // rows of the projection
        float* h = buf.h;
        float* h_next = buf.h_next;
        for (int64_t s = 0; s < S; ++s) {
            const int64_t t = d == 0 ? s : S - 1 - s;
            for (int64_t task = t0; task < t1; ++task) {
                const int64_t blk = task / batch_blocks, r0 = (task % batch_blocks) * 4;
                const int nr = static_cast<int>(std::min<int64_t>(4, B - r0));
                v16 acc[4][4];
                for (int r = 0; r < 4; ++r)
                    for (int g = 0; g < 4; ++g)
                        acc[r][g] = r < nr ? load16(buf.gx + ((t * B) + r0 + r) * cols + blk * 64 + g * 16) : v16{};
                block_4x64(h + r0 * Hs, Hs, nr, buf.w_hh + blk * Hs * 64, Hs, acc);
                for (int r = 0; r < nr; ++r) {
                    const int64_t at = (r0 + r) * full_ld + blk * 16;
                    const v16 ig = sigmoid16(acc[r][0]), fg = sigmoid16(acc[r][1]), gg = tanh16(acc[r][2]),
                              og = sigmoid16(acc[r][3]);
                    const v16 c = fg * load16(buf.c + at) + ig * gg;
                    store16(buf.c + at, c);
                    const v16 hv = og * tanh16(c);
                    if (P > 0) {
                        store16(buf.h_full + at, hv);
                    } else {
                        // Units past H (the last block's padding) are not stored.
                        alignas(64) float lane[16];
                        store16(lane, hv);
                        const int64_t units = std::min<int64_t>(16, H - blk * 16);
                        float* hn = h_next + (r0 + r) * Hs + blk * 16;
                        float* out = layer_out + (t * B + r0 + r) * width + d * Hs + blk * 16;
                        for (int64_t u = 0; u < units; ++u) hn[u] = lane[u], out[u] = lane[u];
                    }
                }
            }
            if (P > 0) {
                // h = h_full W_hr^T, every unit of h_full being new.
                if (nq > 1) {
#pragma omp barrier
                }
                for (int64_t b = b0; b < b1; ++b) {
                    for (int64_t c0 = 0; c0 < Pp; c0 += 16) {
                        v16 acc{};
                        const float* hf = buf.h_full + b * full_ld;
                        for (int64_t j = 0; j < H; ++j) acc += splat(hf[j]) * load16(buf.w_hr + j * Pp + c0);
                        alignas(64) float lane[16];
                        store16(lane, acc);
                        const int64_t n = std::min<int64_t>(16, P - c0);
                        for (int64_t u = 0; u < n; ++u) {
                            h_next[b * Hs + c0 + u] = lane[u];
                            layer_out[(t * B + b) * width + d * Hs + c0 + u] = lane[u];
                        }
                    }
                }
            }
            if (nq > 1) {
#pragma omp barrier
            }
            std::swap(h, h_next);
        }
        if (q == 0 && h != buf.h) std::memcpy(buf.h, h, static_cast<size_t>(B * Hs) * sizeof(float));
    }
}

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Problem p;
    if (read_call(call, p)) return 0;
    return static_cast<uint64_t>(layout_of(p).total(p)) * sizeof(float) + 64;
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Problem p;
    if (const char* error = read_call(call, p)) return hb_fail(call, 2, error);
    const Layout lay = layout_of(p);
    if (!call->workspace || call->workspace_bytes < static_cast<uint64_t>(lay.total(p)) * sizeof(float) + 64)
        return hb_fail(call, 4, "lstm: the workspace from hapbench_workspace_bytes is missing");
    const int threads = std::min(kMaxThreads, call->num_threads > 0 ? call->num_threads : omp_get_max_threads());
    float* base = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(call->workspace) + 63) & ~uintptr_t{63});
    float* layer_in = base;
    float* layer_out = layer_in + lay.layer;
    DirBuffers dir[2];
    float* next = layer_out + lay.layer;
    for (int64_t d = 0; d < p.dirs; ++d) {
        DirBuffers& b = dir[d];
        b.w_ih = next, next += lay.w_ih;
        b.w_hh = next, next += lay.w_hh;
        b.w_hr = next, next += lay.w_hr;
        b.bias = next, next += lay.bias;
        b.gx = next, next += lay.gx;
        b.h = next, next += lay.h;
        b.h_next = next, next += lay.h;
        b.h_full = next, next += lay.full;
        b.c = next, next += lay.full;
    }
    float* rows = next;  // a row buffer for the projection weights
    const int64_t S = p.seq, B = p.batch, H = p.hidden, Hs = p.state(), P = p.proj, blocks = p.blocks(), R = S * B;
    const size_t elem = p.dtype == HB_FLOAT32 ? 4 : 2;

    // Layer 0's input, time-major, in fp32.
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t r = 0; r < R; ++r) {
        const int64_t t = r / B, b = r % B;
        const int64_t from = p.batch_first ? (b * S + t) * p.input : r * p.input;
        widen(static_cast<const char*>(p.x->data) + static_cast<size_t>(from) * elem, p.dtype, p.input, layer_in + r * p.input);
    }
    // A step's multiply-adds: below this a barrier costs more than splitting saves.
    const bool split_steps = B * 4 * H * Hs >= (int64_t{1} << 18) && threads > 1;
    for (int64_t l = 0; l < p.layers; ++l) {
        const int64_t in_l = p.layer_input(l);
        for (int64_t d = 0; d < p.dirs; ++d) {
            const int64_t k = l * p.dirs + d;
            DirBuffers& b = dir[d];
            pack_gates(p.w_ih->tensors[k], p.dtype, H, in_l, b.w_ih, threads);
            pack_gates(p.w_hh->tensors[k], p.dtype, H, Hs, b.w_hh, threads);
            std::memset(b.bias, 0, static_cast<size_t>(blocks * 64) * sizeof(float));
            if (p.b_ih)
                for (int64_t r = 0; r < 4 * H; ++r) {
                    float bi, bh;
                    widen(static_cast<const char*>(p.b_ih->tensors[k].data) + static_cast<size_t>(r) * elem, p.dtype, 1, &bi);
                    widen(static_cast<const char*>(p.b_hh->tensors[k].data) + static_cast<size_t>(r) * elem, p.dtype, 1, &bh);
                    const int64_t g = r / H, j = r % H;
                    b.bias[(j / 16) * 64 + g * 16 + j % 16] = bi + bh;
                }
            if (P > 0) {
                const int64_t Pp = round16(P);
                std::memset(b.w_hr, 0, static_cast<size_t>(H * Pp) * sizeof(float));
                for (int64_t q = 0; q < P; ++q) {
                    widen(static_cast<const char*>(p.w_hr->tensors[k].data) + static_cast<size_t>(q * H) * elem, p.dtype, H, rows);
                    for (int64_t j = 0; j < H; ++j) b.w_hr[j * Pp + q] = rows[j];
                }
            }
            input_projection(layer_in, R, in_l, b.w_ih, b.bias, blocks, b.gx, threads);
            // Initial states; c and h_full are [B][blocks * 16] with zero padding.
            std::memset(b.c, 0, static_cast<size_t>(lay.full) * sizeof(float));
            std::memset(b.h_full, 0, static_cast<size_t>(lay.full) * sizeof(float));
            if (p.h0) widen(static_cast<const char*>(p.h0->data) + static_cast<size_t>(k * B * Hs) * elem, p.dtype, B * Hs, b.h);
            else std::memset(b.h, 0, static_cast<size_t>(B * Hs) * sizeof(float));
            if (p.c0)
                for (int64_t bb = 0; bb < B; ++bb)
                    widen(static_cast<const char*>(p.c0->data) + static_cast<size_t>((k * B + bb) * H) * elem, p.dtype, H,
                          b.c + bb * blocks * 16);
        }
        // The recurrences: small steps of two directions on two threads at once (no barriers);
        // large steps split over every thread, one direction after the other (each thread then
        // keeps its share of W_hh in its own cache across the steps).
        if (p.dirs == 2 && threads >= 2 && !split_steps) {
#pragma omp parallel num_threads(2)
            {
                const int d = omp_get_thread_num();
                recurrence(p, d, dir[d], layer_out, 1);
            }
        } else {
            for (int64_t d = 0; d < p.dirs; ++d) recurrence(p, d, dir[d], layer_out, split_steps ? threads : 1);
        }
        for (int64_t d = 0; d < p.dirs; ++d) {
            const int64_t k = l * p.dirs + d;
            narrow(dir[d].h, static_cast<char*>(p.hn->data) + static_cast<size_t>(k * B * Hs) * elem, p.dtype, B * Hs);
            for (int64_t bb = 0; bb < B; ++bb)
                narrow(dir[d].c + bb * blocks * 16, static_cast<char*>(p.cn->data) + static_cast<size_t>((k * B + bb) * H) * elem,
                       p.dtype, H);
        }
        std::swap(layer_in, layer_out);
    }
    // layer_in holds the last layer's output, time-major.
    const int64_t width = p.dirs * Hs;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t r = 0; r < R; ++r) {
        const int64_t t = r / B, b = r % B;
        const int64_t to = p.batch_first ? (b * S + t) * width : r * width;
        narrow(layer_in + r * width, static_cast<char*>(p.y->data) + static_cast<size_t>(to) * elem, p.dtype, width);
    }
    return 0;
}
