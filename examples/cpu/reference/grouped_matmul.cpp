// Reference grouped_matmul: for each group g, y[rows_g] = x[rows_g] . W_g (+ bias[g]), where
// group g owns rows [group_list[g-1], group_list[g]) of x [M, K] and W_g is weight[g]
// ([E, K, N], or [E, N, K] transposed when transpose_weight). y is E tensors [m_g, N]
// (split_item 0/1) or one [M, N] (2/3). float16, bfloat16 and float32 (bias: x's dtype, or
// float32 with bfloat16 x).
// Plain and blocked: x and every used weight are widened to fp32 in the workspace (the
// weight laid out [K, N] whichever way it is stored), then each 16-row x 256-column output
// tile accumulates in fp32 over K with a k-outer loop whose inner loop over columns the
// compiler vectorizes; tiles are spread over the threads. One rounding to y's dtype.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

constexpr int64_t kTileRows = 16;
constexpr int64_t kTileCols = 256;

float load(const void* data, hb_dtype dtype, int64_t i) {
    switch (dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(data)[i]);
        default: return static_cast<const float*>(data)[i];
    }
}

void store(void* data, hb_dtype dtype, int64_t i, float v) {
    switch (dtype) {
        case HB_FLOAT16: static_cast<uint16_t*>(data)[i] = hb_f32_to_f16(v); break;
        case HB_BFLOAT16: static_cast<uint16_t*>(data)[i] = hb_f32_to_bf16(v); break;
        default: static_cast<float*>(data)[i] = v; break;
    }
}

bool is_float(hb_dtype t) { return t == HB_FLOAT32 || t == HB_FLOAT16 || t == HB_BFLOAT16; }

struct Problem {
    const hb_tensor* x = nullptr;
    const hb_tensor* weight = nullptr;
    const hb_tensor* bias = nullptr;
    const hb_arg* y = nullptr;
    int64_t m = 0, k = 0, n = 0, experts = 0;
    bool transpose = false, single_output = false;
    std::vector<int64_t> begin, rows;
};

// Empty on success, else the error message.
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
    if (!is_float(p.x->dtype) || p.weight->dtype != p.x->dtype) return "grouped_matmul: x and weight must share a float dtype";
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
        if (out.dtype != p.x->dtype || out.rank != 2 || out.shape[0] != rows || out.shape[1] != p.n || !hb_is_contiguous(&out))
            return "grouped_matmul: a y tensor has the wrong dtype or shape";
    }
    return nullptr;
}

uint64_t workspace_floats(const Problem& p) { return static_cast<uint64_t>(p.m * p.k + p.experts * p.k * p.n); }

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Problem p;
    return describe(call, p) ? 0 : workspace_floats(p) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Problem p;
    if (const char* error = describe(call, p)) return hb_fail(call, 2, error);
    if (call->workspace_bytes < workspace_floats(p) * sizeof(float)) return hb_fail(call, 3, "grouped_matmul: workspace too small");
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    const hb_dtype dtype = p.x->dtype;
    float* a = static_cast<float*>(call->workspace);  // x in fp32, [M, K]
    float* b = a + p.m * p.k;                         // each used W_g in fp32, [K, N]

#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
        for (int64_t i = 0; i < p.m * p.k; ++i) a[i] = load(p.x->data, dtype, i);
        for (int64_t e = 0; e < p.experts; ++e) {
            if (p.rows[e] == 0) continue;
            float* be = b + e * p.k * p.n;
            const int64_t base = e * p.k * p.n;
#pragma omp for schedule(static) nowait
            for (int64_t r = 0; r < p.k; ++r)
                for (int64_t j = 0; j < p.n; ++j)
                    be[r * p.n + j] = load(p.weight->data, dtype, base + (p.transpose ? j * p.k + r : r * p.n + j));
        }
    }

    // Output tiles of every group: (group, first row, first column).
    struct Tile {
        int64_t group, row, col;
    };
    std::vector<Tile> tiles;
    for (int64_t e = 0; e < p.experts; ++e)
        for (int64_t r = 0; r < p.rows[e]; r += kTileRows)
            for (int64_t c = 0; c < p.n; c += kTileCols) tiles.push_back({e, r, c});

#pragma omp parallel for schedule(dynamic) num_threads(threads)
    for (size_t t = 0; t < tiles.size(); ++t) {
        const Tile tile = tiles[t];
        const int64_t rows = std::min(kTileRows, p.rows[tile.group] - tile.row);
        const int64_t cols = std::min(kTileCols, p.n - tile.col);
        const float* be = b + tile.group * p.k * p.n + tile.col;
        const float* ae = a + (p.begin[tile.group] + tile.row) * p.k;
        float acc[kTileRows][kTileCols] = {};
        for (int64_t r = 0; r < p.k; ++r) {
            const float* brow = be + r * p.n;
            for (int64_t i = 0; i < rows; ++i) {
                const float ai = ae[i * p.k + r];
                for (int64_t j = 0; j < cols; ++j) acc[i][j] += ai * brow[j];
            }
        }
        const hb_tensor& out = p.y->tensors[p.single_output ? 0 : tile.group];
        const int64_t out_row = (p.single_output ? p.begin[tile.group] : 0) + tile.row;
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
                float v = acc[i][j];
                if (p.bias) v += load(p.bias->data, p.bias->dtype, tile.group * p.n + tile.col + j);
                store(out.data, dtype, (out_row + i) * p.n + tile.col + j, v);
            }
    }
    return 0;
}
