// Reference weight_quant_batch_matmul: W'[k, n] = (weight[k, n] + antiquantOffset[n]) *
// antiquantScale[n] (without an offset, weight * scale), y = x . W' (+ bias). x [M, K] is
// float16 or bfloat16, weight int8 [K, N]; scale and offset [N] or [1, N] in x's dtype; bias
// [N] or [1, N], float16 with a float16 x and float32 with a bfloat16 x; y in x's dtype.
// Plain and blocked: W' and x widened to fp32 in the workspace, then each 16-row x
// 256-column output tile accumulates in fp32 over K (k-outer, the column loop vectorized by
// the compiler), tiles spread over the threads, one rounding to y's dtype.
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

constexpr int64_t kTileRows = 16;
constexpr int64_t kTileCols = 256;

float load(const hb_tensor& t, int64_t i) {
    switch (t.dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        default: return static_cast<const float*>(t.data)[i];
    }
}

const hb_tensor* optional_tensor(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present && a->count == 1 ? &a->tensors[0] : nullptr;
}

struct Problem {
    const hb_tensor *x = nullptr, *weight = nullptr, *scale = nullptr, *offset = nullptr, *bias = nullptr, *y = nullptr;
    int64_t m = 0, k = 0, n = 0;
};

const char* describe(const hb_call* call, Problem& p) {
    p.x = optional_tensor(call, "x");
    p.weight = optional_tensor(call, "weight");
    p.scale = optional_tensor(call, "antiquantScale");
    p.offset = optional_tensor(call, "antiquantOffset");
    p.bias = optional_tensor(call, "bias");
    const hb_arg* y = hb_output(call, "y");
    if (!p.x || !p.weight || !p.scale || !y || y->count != 1) return "weight_quant_batch_matmul: expected x, weight, antiquantScale and y";
    p.y = &y->tensors[0];
    for (const hb_tensor* t : {p.x, p.weight, p.scale, p.offset, p.bias, p.y})
        if (t && !hb_is_contiguous(t)) return "weight_quant_batch_matmul: only contiguous tensors are supported";
    if ((p.x->dtype != HB_FLOAT16 && p.x->dtype != HB_BFLOAT16) || p.weight->dtype != HB_INT8 || p.x->rank != 2 ||
        p.weight->rank != 2 || p.y->dtype != p.x->dtype)
        return "weight_quant_batch_matmul: x [M, K] float16/bfloat16, weight int8 [K, N], y in x's dtype";
    p.m = p.x->shape[0];
    p.k = p.x->shape[1];
    p.n = p.weight->shape[1];
    if (p.weight->shape[0] != p.k || hb_numel(p.y) != p.m * p.n) return "weight_quant_batch_matmul: shapes disagree";
    for (const hb_tensor* t : {p.scale, p.offset, p.bias})
        if (t && hb_numel(t) != p.n) return "weight_quant_batch_matmul: antiquantScale, antiquantOffset and bias must have N elements";
    return nullptr;
}

uint64_t workspace_floats(const Problem& p) { return static_cast<uint64_t>(p.k * p.n + p.m * p.k); }

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Problem p;
    return describe(call, p) ? 0 : workspace_floats(p) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Problem p;
    if (const char* error = describe(call, p)) return hb_fail(call, 2, error);
    if (call->workspace_bytes < workspace_floats(p) * sizeof(float))
        return hb_fail(call, 3, "weight_quant_batch_matmul: workspace too small");
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    float* w = static_cast<float*>(call->workspace);  // W' [K, N]
    float* a = w + p.k * p.n;                         // x [M, K]
    const auto* q = static_cast<const int8_t*>(p.weight->data);

#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static) nowait
        for (int64_t r = 0; r < p.k; ++r)
            for (int64_t j = 0; j < p.n; ++j) {
                float v = static_cast<float>(q[r * p.n + j]);
                if (p.offset) v += load(*p.offset, j);
                w[r * p.n + j] = v * load(*p.scale, j);
            }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < p.m * p.k; ++i) a[i] = load(*p.x, i);
    }

    const int64_t row_tiles = (p.m + kTileRows - 1) / kTileRows, col_tiles = (p.n + kTileCols - 1) / kTileCols;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
    for (int64_t t = 0; t < row_tiles * col_tiles; ++t) {
        const int64_t row0 = t / col_tiles * kTileRows, col0 = t % col_tiles * kTileCols;
        const int64_t rows = std::min(kTileRows, p.m - row0), cols = std::min(kTileCols, p.n - col0);
        float acc[kTileRows][kTileCols] = {};
        for (int64_t r = 0; r < p.k; ++r) {
            const float* wrow = w + r * p.n + col0;
            for (int64_t i = 0; i < rows; ++i) {
                const float ai = a[(row0 + i) * p.k + r];
                for (int64_t j = 0; j < cols; ++j) acc[i][j] += ai * wrow[j];
            }
        }
        auto* out = static_cast<uint16_t*>(p.y->data);
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
                float v = acc[i][j];
                if (p.bias) v += load(*p.bias, col0 + j);
                const int64_t at = (row0 + i) * p.n + col0 + j;
                out[at] = p.x->dtype == HB_FLOAT16 ? hb_f32_to_f16(v) : hb_f32_to_bf16(v);
            }
    }
    return 0;
}
