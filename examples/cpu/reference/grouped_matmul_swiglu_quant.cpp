// Reference grouped_matmul_swiglu_quant: x int8 [M, K], weight int8 [E, K, N], weight_scale
// float32 [E, N], x_scale float32 [M], group_list (E cumulative end rows, the last M). For row
// r of group g: mm = x[r] W_g in int32; deq = (float(mm) * x_scale[r]) * weight_scale[g];
// act = SiLU(deq[:N/2]) * deq[N/2:] with SiLU(t) = t / (1 + e^-t); a = max(max|act|, 2^-126);
// y_scale[r] = a / 127; y = clamp(round_half_even(act / y_scale), -128, 127) (NaN -> 0).
// Plain structure: the int32 products of every row into the workspace (OpenMP over blocks of
// 4 rows of one group and 256 columns, an axpy over K), then the fp32 epilogue OpenMP over rows.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hapbench/kernel.h"

namespace {

struct Problem {
    const int8_t *x = nullptr, *w = nullptr;
    const float *ws = nullptr, *xs = nullptr;
    int8_t* y = nullptr;
    float* y_scale = nullptr;
    int64_t m = 0, k = 0, n = 0, experts = 0;
    std::vector<int64_t> ends;
};

const char* read_call(const hb_call* call, Problem& p) {
    const hb_arg* x = hb_input(call, "x");
    const hb_arg* w = hb_input(call, "weight");
    const hb_arg* ws = hb_input(call, "weight_scale");
    const hb_arg* xs = hb_input(call, "x_scale");
    const hb_arg* y = hb_output(call, "y");
    const hb_arg* ys = hb_output(call, "y_scale");
    const hb_attr* list = hb_attr_find(call, "group_list");
    if (!x || !w || !ws || !xs || !y || !ys || !list || list->type != HB_ATTR_INT_LIST)
        return "grouped_matmul_swiglu_quant: expected inputs x, weight, weight_scale, x_scale, outputs y, y_scale and "
               "the int list group_list";
    const hb_tensor &xt = x->tensors[0], &wt = w->tensors[0], &wst = ws->tensors[0], &xst = xs->tensors[0];
    const hb_tensor &yt = y->tensors[0], &yst = ys->tensors[0];
    for (const hb_tensor* t : {&xt, &wt, &wst, &xst, &yt, &yst})
        if (!hb_is_contiguous(t)) return "grouped_matmul_swiglu_quant: only contiguous tensors are supported";
    if (xt.dtype != HB_INT8 || wt.dtype != HB_INT8 || wst.dtype != HB_FLOAT32 || xst.dtype != HB_FLOAT32 ||
        yt.dtype != HB_INT8 || yst.dtype != HB_FLOAT32)
        return "grouped_matmul_swiglu_quant: x, weight, y int8; weight_scale, x_scale, y_scale float32 expected";
    if (xt.rank != 2 || wt.rank != 3 || wt.shape[1] != xt.shape[1] || wt.shape[2] % 2 != 0)
        return "grouped_matmul_swiglu_quant: x [M, K] and weight [E, K, N] with N even expected";
    p.m = xt.shape[0];
    p.k = xt.shape[1];
    p.experts = wt.shape[0];
    p.n = wt.shape[2];
    if (list->count != p.experts) return "grouped_matmul_swiglu_quant: group_list needs one entry per expert";
    int64_t previous = 0;
    for (int32_t i = 0; i < list->count; ++i) {
        if (list->ints[i] < previous) return "grouped_matmul_swiglu_quant: group_list must be non-decreasing";
        previous = list->ints[i];
        p.ends.push_back(previous);
    }
    if (previous != p.m) return "grouped_matmul_swiglu_quant: group_list must end at M";
    p.x = static_cast<const int8_t*>(xt.data);
    p.w = static_cast<const int8_t*>(wt.data);
    p.ws = static_cast<const float*>(wst.data);
    p.xs = static_cast<const float*>(xst.data);
    p.y = static_cast<int8_t*>(yt.data);
    p.y_scale = static_cast<float*>(yst.data);
    return nullptr;
}

constexpr int64_t kRows = 4, kCols = 256;

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Problem p;
    if (read_call(call, p)) return 0;
    return static_cast<uint64_t>(p.m * p.n) * sizeof(int32_t);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Problem p;
    if (const char* error = read_call(call, p)) return hb_fail(call, 2, error);
    if (!call->workspace || call->workspace_bytes < static_cast<uint64_t>(p.m * p.n) * sizeof(int32_t))
        return hb_fail(call, 4, "grouped_matmul_swiglu_quant: the workspace from hapbench_workspace_bytes is missing");
    auto* mm = static_cast<int32_t*>(call->workspace);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    // Tasks: (group, block of 4 of its rows, block of 256 columns).
    struct Task {
        int64_t group, row;
    };
    std::vector<Task> blocks;
    for (int64_t g = 0; g < p.experts; ++g)
        for (int64_t r = g == 0 ? 0 : p.ends[g - 1]; r < p.ends[g]; r += kRows) blocks.push_back({g, r});
    const int64_t col_blocks = (p.n + kCols - 1) / kCols;
    const int64_t tasks = static_cast<int64_t>(blocks.size()) * col_blocks;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t task = 0; task < tasks; ++task) {
        const Task& b = blocks[static_cast<size_t>(task / col_blocks)];
        const int64_t c0 = (task % col_blocks) * kCols, nc = std::min(kCols, p.n - c0);
        const int64_t nr = std::min(kRows, p.ends[b.group] - b.row);
        int32_t acc[kRows][kCols] = {};
        const int8_t* wg = p.w + b.group * p.k * p.n + c0;
        for (int64_t i = 0; i < p.k; ++i) {
            const int8_t* wrow = wg + i * p.n;
            for (int64_t rr = 0; rr < nr; ++rr) {
                const int32_t xv = p.x[(b.row + rr) * p.k + i];
                for (int64_t cc = 0; cc < nc; ++cc) acc[rr][cc] += xv * static_cast<int32_t>(wrow[cc]);
            }
        }
        for (int64_t rr = 0; rr < nr; ++rr)
            for (int64_t cc = 0; cc < nc; ++cc) mm[(b.row + rr) * p.n + c0 + cc] = acc[rr][cc];
    }
    const int64_t half = p.n / 2;
    const float min_normal = std::ldexp(1.0f, -126);
#pragma omp parallel num_threads(threads)
    {
        std::vector<float> act(static_cast<size_t>(half));
#pragma omp for schedule(static)
        for (int64_t r = 0; r < p.m; ++r) {
            const int64_t g = std::upper_bound(p.ends.begin(), p.ends.end(), r) - p.ends.begin();
            const float* wsg = p.ws + g * p.n;
            const int32_t* mr = mm + r * p.n;
            float max_abs = 0;
            for (int64_t j = 0; j < half; ++j) {
                const float left = (static_cast<float>(mr[j]) * p.xs[r]) * wsg[j];
                const float right = (static_cast<float>(mr[half + j]) * p.xs[r]) * wsg[half + j];
                const float v = left / (1.0f + std::exp(-left)) * right;
                act[static_cast<size_t>(j)] = v;
                const float a = std::fabs(v);
                if (a != a || a > max_abs) max_abs = max_abs != max_abs ? max_abs : a;  // NaN sticks
            }
            const float scale = (max_abs != max_abs ? max_abs : std::max(max_abs, min_normal)) / 127.0f;
            p.y_scale[r] = scale;
            for (int64_t j = 0; j < half; ++j) {
                const float q = act[static_cast<size_t>(j)] / scale;
                p.y[r * half + j] = q != q ? 0 : static_cast<int8_t>(std::clamp(std::nearbyint(q), -128.0f, 127.0f));
            }
        }
    }
    return 0;
}
