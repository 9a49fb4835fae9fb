// Reference quant_matmul: acc = x1 . x2 in int32 (int8 [..., m, k] by int8 [..., k, n],
// batch dims broadcast), an int32 bias added to acc, then in fp32
//   y = acc * scale (+ offset) (* pertoken_scale[row]) (+ floating bias)
// rounded to out's dtype (float16 or bfloat16). scale is float32 or bfloat16, [1] or [n];
// offset float32 [1] or [n]; pertoken_scale float32 [m]; bias int32, float16, bfloat16 or
// float32, [n], [1, n] or [batch, 1, n].
// Plain and blocked: each 16-row x 256-column tile of one batch entry accumulates exact
// int32 sums over k (k-outer, the column loop vectorized by the compiler), tiles spread
// over the threads, then the epilogue in the operator's order.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

constexpr int64_t kTileRows = 16;
constexpr int64_t kTileCols = 256;

float load(const hb_tensor& t, int64_t i) {
    switch (t.dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_INT32: return static_cast<float>(static_cast<const int32_t*>(t.data)[i]);
        default: return static_cast<const float*>(t.data)[i];
    }
}

const hb_tensor* optional_tensor(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present && a->count == 1 ? &a->tensors[0] : nullptr;
}

struct Problem {
    const hb_tensor *x1 = nullptr, *x2 = nullptr, *scale = nullptr, *offset = nullptr, *pertoken = nullptr,
                    *bias = nullptr, *out = nullptr;
    int64_t m = 0, k = 0, n = 0, batch = 1;
    std::vector<int64_t> x1_index, x2_index;  // the x1 and x2 matrix of each output batch entry
    bool batched_bias = false;
};

// Pads a tensor's batch dims on the left to `rank` dims.
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
    }
    // Each output batch entry's x1 and x2 matrix, by walking its multi-index.
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
    }
    return nullptr;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Problem p;
    if (const char* error = describe(call, p)) return hb_fail(call, 2, error);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    const int64_t row_tiles = (p.m + kTileRows - 1) / kTileRows, col_tiles = (p.n + kTileCols - 1) / kTileCols;
    const int64_t tiles = p.batch * row_tiles * col_tiles;
    const auto* x1 = static_cast<const int8_t*>(p.x1->data);
    const auto* x2 = static_cast<const int8_t*>(p.x2->data);
    const bool int_bias = p.bias && p.bias->dtype == HB_INT32;

#pragma omp parallel for schedule(dynamic) num_threads(threads)
    for (int64_t t = 0; t < tiles; ++t) {
        const int64_t b = t / (row_tiles * col_tiles);
        const int64_t row0 = (t / col_tiles) % row_tiles * kTileRows, col0 = t % col_tiles * kTileCols;
        const int64_t rows = std::min(kTileRows, p.m - row0), cols = std::min(kTileCols, p.n - col0);
        const int8_t* a = x1 + (p.x1_index[b] * p.m + row0) * p.k;
        const int8_t* w = x2 + p.x2_index[b] * p.k * p.n + col0;
        int32_t acc[kTileRows][kTileCols];
        std::memset(acc, 0, sizeof acc);
        for (int64_t r = 0; r < p.k; ++r) {
            const int8_t* wrow = w + r * p.n;
            for (int64_t i = 0; i < rows; ++i) {
                const int32_t ai = a[i * p.k + r];
                for (int64_t j = 0; j < cols; ++j) acc[i][j] += ai * static_cast<int32_t>(wrow[j]);
            }
        }
        const int64_t bias_base = p.batched_bias ? b * p.n : 0;
        for (int64_t i = 0; i < rows; ++i) {
            const int64_t row = row0 + i;
            for (int64_t j = 0; j < cols; ++j) {
                const int64_t col = col0 + j;
                int32_t integer = acc[i][j];
                if (int_bias) integer += static_cast<const int32_t*>(p.bias->data)[bias_base + col];
                float y = static_cast<float>(integer) * load(*p.scale, hb_numel(p.scale) > 1 ? col : 0);
                if (p.offset) y += load(*p.offset, hb_numel(p.offset) > 1 ? col : 0);
                if (p.pertoken) y *= load(*p.pertoken, row);
                if (p.bias && !int_bias) y += load(*p.bias, bias_base + col);
                const int64_t at = (b * p.m + row) * p.n + col;
                auto* out = static_cast<uint16_t*>(p.out->data);
                out[at] = p.out->dtype == HB_FLOAT16 ? hb_f32_to_f16(y) : hb_f32_to_bf16(y);
            }
        }
    }
    return 0;
}
