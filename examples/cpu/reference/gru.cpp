// Reference gru (torch.nn.GRU in eval mode): x [S, B, I] ([B, S, I] with batchFirst), per
// layer l and direction d (list index l * Dn + d) weight_ih [3H, in_l], weight_hh [3H, H],
// optional bias_ih / bias_hh [3H], optional h0 [L Dn, B, H]; rows (r, z, n):
//   r = sigmoid(W_ir x + b_ir + W_hr h + b_hr), z = sigmoid(W_iz x + b_iz + W_hz h + b_hz),
//   n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h = (1 - z) n + z h.
// Outputs y [S, B, Dn H] (batch-first like x) and hn [L Dn, B, H]. One dtype for every tensor
// (float32, float16 or bfloat16); math in fp32.
// Plain structure: per layer and direction the weights are widened and transposed into the
// workspace ([in, 3H], [H, 3H]); the input projection of every step runs first (OpenMP over
// blocks of 4 rows and 64 gate columns, an axpy over the input); then per step the recurrent
// product and the cell update, OpenMP over (sequence, block of 16 hidden units), each task
// computing its units' three gate rows and updating them (one thread when a step has under
// 64K multiply-adds). Layers pass their output on in an fp32 buffer, time-major.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load(const void* data, hb_dtype t, int64_t i) {
    switch (t) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(data)[i]);
        default: return static_cast<const float*>(data)[i];
    }
}

void store(void* data, hb_dtype t, int64_t i, float v) {
    switch (t) {
        case HB_FLOAT16: static_cast<uint16_t*>(data)[i] = hb_f32_to_f16(v); break;
        case HB_BFLOAT16: static_cast<uint16_t*>(data)[i] = hb_f32_to_bf16(v); break;
        default: static_cast<float*>(data)[i] = v; break;
    }
}

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

struct Problem {
    const hb_tensor* x = nullptr;
    const hb_arg *w_ih = nullptr, *w_hh = nullptr, *b_ih = nullptr, *b_hh = nullptr;
    const hb_tensor* h0 = nullptr;
    hb_tensor *y = nullptr, *hn = nullptr;
    hb_dtype dtype = HB_FLOAT32;
    int64_t seq = 0, batch = 0, input = 0, hidden = 0, layers = 1, dirs = 1;
    bool batch_first = false;
    int64_t layer_input(int64_t l) const { return l == 0 ? input : dirs * hidden; }
    int64_t cells() const { return layers * dirs; }
};

bool same_shape(const hb_tensor& t, hb_dtype dtype, std::initializer_list<int64_t> dims) {
    if (t.dtype != dtype || t.rank != static_cast<int32_t>(dims.size()) || !hb_is_contiguous(&t)) return false;
    int d = 0;
    for (int64_t v : dims)
        if (t.shape[d++] != v) return false;
    return true;
}

const hb_arg* present(const hb_arg* a) { return a && a->present ? a : nullptr; }

// Empty on success, else what is wrong.
const char* read_call(const hb_call* call, Problem& p) {
    const hb_arg* x = hb_input(call, "x");
    p.w_ih = hb_input(call, "weight_ih");
    p.w_hh = hb_input(call, "weight_hh");
    hb_arg* y = hb_output(call, "y");
    hb_arg* hn = hb_output(call, "hn");
    if (!x || !p.w_ih || !p.w_hh || !y || !hn) return "gru: expected inputs x, weight_ih, weight_hh and outputs y, hn";
    p.x = &x->tensors[0];
    p.y = &y->tensors[0];
    p.hn = &hn->tensors[0];
    p.dtype = p.x->dtype;
    if (p.dtype != HB_FLOAT32 && p.dtype != HB_FLOAT16 && p.dtype != HB_BFLOAT16) return "gru: x must be float32, float16 or bfloat16";
    p.input = hb_attr_int(call, "inputSize", 0);
    p.hidden = hb_attr_int(call, "hiddenSize", 0);
    p.layers = hb_attr_int(call, "numLayers", 1);
    p.dirs = hb_attr_int(call, "bidirectional", 0) ? 2 : 1;
    p.batch_first = hb_attr_int(call, "batchFirst", 0) != 0;
    const bool bias = hb_attr_int(call, "bias", 1) != 0;
    if (p.input < 1 || p.hidden < 1 || p.layers < 1) return "gru: inputSize, hiddenSize, numLayers must be positive";
    if (p.x->rank != 3 || p.x->shape[2] != p.input || !hb_is_contiguous(p.x)) return "gru: x must be a contiguous [S, B, inputSize]";
    p.seq = p.x->shape[p.batch_first ? 1 : 0];
    p.batch = p.x->shape[p.batch_first ? 0 : 1];
    const int64_t gh = 3 * p.hidden, cells = p.cells();
    p.b_ih = bias ? present(hb_input(call, "bias_ih")) : nullptr;
    p.b_hh = bias ? present(hb_input(call, "bias_hh")) : nullptr;
    if ((p.b_ih == nullptr) != (p.b_hh == nullptr)) return "gru: give both bias lists or neither";
    if (p.w_ih->count != cells || p.w_hh->count != cells || (p.b_ih && (p.b_ih->count != cells || p.b_hh->count != cells)))
        return "gru: every weight list needs numLayers x directions tensors";
    for (int64_t k = 0; k < cells; ++k) {
        if (!same_shape(p.w_ih->tensors[k], p.dtype, {gh, p.layer_input(k / p.dirs)}) ||
            !same_shape(p.w_hh->tensors[k], p.dtype, {gh, p.hidden}))
            return "gru: weight_ih[k] must be [3H, layer input] and weight_hh[k] [3H, H], in x's dtype";
        if (p.b_ih && (!same_shape(p.b_ih->tensors[k], p.dtype, {gh}) || !same_shape(p.b_hh->tensors[k], p.dtype, {gh})))
            return "gru: biases must be [3H] in x's dtype";
    }
    if (const hb_arg* h0 = present(hb_input(call, "h0"))) p.h0 = &h0->tensors[0];
    if (p.h0 && !same_shape(*p.h0, p.dtype, {cells, p.batch, p.hidden})) return "gru: h0 must be [L Dn, B, H]";
    const int64_t width = p.dirs * p.hidden;
    if (!(p.batch_first ? same_shape(*p.y, p.dtype, {p.batch, p.seq, width}) : same_shape(*p.y, p.dtype, {p.seq, p.batch, width})) ||
        !same_shape(*p.hn, p.dtype, {cells, p.batch, p.hidden}))
        return "gru: y or hn has the wrong shape or dtype";
    return nullptr;
}

// Workspace layout, in floats.
struct Workspace {
    int64_t layer_elems, wt_ih, wt_hh, gx, state;
    int64_t total() const { return 2 * layer_elems + wt_ih + wt_hh + gx + 2 * state; }
};

Workspace workspace_of(const Problem& p) {
    Workspace w;
    const int64_t rows = p.seq * p.batch, gh = 3 * p.hidden;
    w.layer_elems = rows * std::max(p.input, p.dirs * p.hidden);
    w.wt_ih = std::max(p.input, p.dirs * p.hidden) * gh;
    w.wt_hh = p.hidden * gh;
    w.gx = rows * gh;
    w.state = p.batch * p.hidden;
    return w;
}

constexpr int64_t kRows = 4, kCols = 64, kUnits = 16;

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Problem p;
    if (read_call(call, p)) return 0;
    return static_cast<uint64_t>(workspace_of(p).total()) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Problem p;
    if (const char* error = read_call(call, p)) return hb_fail(call, 2, error);
    const Workspace ws = workspace_of(p);
    if (!call->workspace || call->workspace_bytes < static_cast<uint64_t>(ws.total()) * sizeof(float))
        return hb_fail(call, 4, "gru: the workspace from hapbench_workspace_bytes is missing");
    float* layer_in = static_cast<float*>(call->workspace);
    float* layer_out = layer_in + ws.layer_elems;
    float* wt_ih = layer_out + ws.layer_elems;
    float* wt_hh = wt_ih + ws.wt_ih;
    float* gx = wt_hh + ws.wt_hh;
    float* h = gx + ws.gx;         // [B, H]
    float* h_new = h + ws.state;   // [B, H]
    const int64_t S = p.seq, B = p.batch, H = p.hidden, GH = 3 * H, rows = S * B;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();

    // Layer 0's input, time-major, in fp32.
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t t = r / B, b = r % B;
        const int64_t from = p.batch_first ? (b * S + t) * p.input : r * p.input;
        for (int64_t i = 0; i < p.input; ++i) layer_in[r * p.input + i] = load(p.x->data, p.dtype, from + i);
    }
    for (int64_t l = 0; l < p.layers; ++l) {
        const int64_t in_l = p.layer_input(l), width = p.dirs * H;
        for (int64_t d = 0; d < p.dirs; ++d) {
            const int64_t k = l * p.dirs + d;
            const hb_tensor& wih = p.w_ih->tensors[k];
            const hb_tensor& whh = p.w_hh->tensors[k];
#pragma omp parallel num_threads(threads)
            {
#pragma omp for schedule(static) nowait
                for (int64_t j = 0; j < GH; ++j)
                    for (int64_t i = 0; i < in_l; ++i) wt_ih[i * GH + j] = load(wih.data, p.dtype, j * in_l + i);
#pragma omp for schedule(static)
                for (int64_t j = 0; j < GH; ++j)
                    for (int64_t i = 0; i < H; ++i) wt_hh[i * GH + j] = load(whh.data, p.dtype, j * H + i);
            }
            // gx = layer_in W_ih^T + b_ih (+ b_hh for r and z; b_hn stays inside the reset
            // gate's product), every step at once.
            const int64_t row_blocks = (rows + kRows - 1) / kRows, col_blocks = (GH + kCols - 1) / kCols;
#pragma omp parallel for num_threads(threads) schedule(static) collapse(2)
            for (int64_t rb = 0; rb < row_blocks; ++rb)
                for (int64_t cb = 0; cb < col_blocks; ++cb) {
                    const int64_t r0 = rb * kRows, c0 = cb * kCols;
                    const int64_t nr = std::min(kRows, rows - r0), nc = std::min(kCols, GH - c0);
                    float acc[kRows][kCols];
                    for (int64_t rr = 0; rr < kRows; ++rr)
                        for (int64_t cc = 0; cc < kCols; ++cc) {
                            float bias = 0;
                            if (p.b_ih && cc < nc) {
                                bias = load(p.b_ih->tensors[k].data, p.dtype, c0 + cc);
                                if (c0 + cc < 2 * H) bias += load(p.b_hh->tensors[k].data, p.dtype, c0 + cc);
                            }
                            acc[rr][cc] = bias;
                        }
                    for (int64_t i = 0; i < in_l; ++i) {
                        const float* wrow = wt_ih + i * GH + c0;
                        for (int64_t rr = 0; rr < nr; ++rr) {
                            const float xv = layer_in[(r0 + rr) * in_l + i];
                            for (int64_t cc = 0; cc < nc; ++cc) acc[rr][cc] += xv * wrow[cc];
                        }
                    }
                    for (int64_t rr = 0; rr < nr; ++rr)
                        for (int64_t cc = 0; cc < nc; ++cc) gx[(r0 + rr) * GH + c0 + cc] = acc[rr][cc];
                }
            for (int64_t i = 0; i < B * H; ++i) h[i] = p.h0 ? load(p.h0->data, p.dtype, k * B * H + i) : 0.0f;
            const int64_t unit_blocks = (H + kUnits - 1) / kUnits;
            // A step waits for the one before it: below ~64K multiply-adds a step is shorter
            // than the threads' barrier, so small recurrences run on one thread.
            const int step_threads = B * GH * H >= (int64_t{1} << 16) ? threads : 1;
#pragma omp parallel num_threads(step_threads)
            for (int64_t s = 0; s < S; ++s) {
                const int64_t t = d == 0 ? s : S - 1 - s;
#pragma omp for schedule(static)
                for (int64_t task = 0; task < B * unit_blocks; ++task) {
                    const int64_t b = task / unit_blocks, j0 = (task % unit_blocks) * kUnits;
                    const int64_t nu = std::min(kUnits, H - j0);
                    // acc[0], acc[1]: gx + W_h h + b_h for r and z; acc[2]: W_hn h + b_hn.
                    float acc[3][kUnits];
                    const float* gxr = gx + (t * B + b) * GH;
                    for (int64_t u = 0; u < kUnits; ++u) {
                        acc[0][u] = u < nu ? gxr[j0 + u] : 0.0f;
                        acc[1][u] = u < nu ? gxr[H + j0 + u] : 0.0f;
                        acc[2][u] = u < nu && p.b_hh ? load(p.b_hh->tensors[k].data, p.dtype, 2 * H + j0 + u) : 0.0f;
                    }
                    for (int64_t i = 0; i < H; ++i) {
                        const float hv = h[b * H + i];
                        const float* wrow = wt_hh + i * GH + j0;
                        for (int g = 0; g < 3; ++g)
                            for (int64_t u = 0; u < nu; ++u) acc[g][u] += hv * wrow[g * H + u];
                    }
                    for (int64_t u = 0; u < nu; ++u) {
                        const int64_t at = b * H + j0 + u;
                        const float r = sigmoid(acc[0][u]), z = sigmoid(acc[1][u]);
                        const float n = std::tanh(gxr[2 * H + j0 + u] + r * acc[2][u]);
                        h_new[at] = (1.0f - z) * n + z * h[at];
                    }
                }
                // The implicit barrier above: every unit of h_new is done.
#pragma omp for schedule(static)
                for (int64_t b = 0; b < B; ++b)
                    for (int64_t j = 0; j < H; ++j) {
                        h[b * H + j] = h_new[b * H + j];
                        layer_out[(t * B + b) * width + d * H + j] = h_new[b * H + j];
                    }
            }
            for (int64_t i = 0; i < B * H; ++i) store(p.hn->data, p.dtype, k * B * H + i, h[i]);
        }
        std::swap(layer_in, layer_out);
    }
    // layer_in holds the last layer's output, time-major.
    const int64_t width = p.dirs * H;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t t = r / B, b = r % B;
        const int64_t to = p.batch_first ? (b * S + t) * width : r * width;
        for (int64_t q = 0; q < width; ++q) store(p.y->data, p.dtype, to + q, layer_in[r * width + q]);
    }
    return 0;
}
