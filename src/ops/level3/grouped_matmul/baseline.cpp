// Baseline for grouped_matmul: one oneDNN matmul per non-empty group, the loop over experts
// a framework's grouped GEMM runs on a CPU (PyTorch's grouped mm falls back to one mm per
// group). Each group's rows of x are a contiguous [m_g, K] block; its weight is read in
// place, [K, N] or, with transpose_weight, [N, K] through transposed strides; its bias row
// is the matmul's bias; its output is its own list tensor or rows of the single one.
// Primitives are created once per (rows, K, N, types, layout) and cached, so timed calls
// run only the products. float32 runs in f32 and bfloat16 in bf16 (brgemm: AMX or
// AVX512-BF16 where present) with an f32 destination narrowed into y afterwards: with a bf16
// destination oneDNN 2.6 keeps the partial sums of a blocked k in bf16 (measured: absolute
// errors of 2^-9 of the partial sums, which fail the gate where they cancel). float16 has
// no oneDNN 2.6 matmul, and bfloat16 none below AVX-512: those run in f32 on copies (x
// widened once, each group's weight and bias as it is used, the product narrowed into y),
// as a framework converts around a missing kernel.
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;
using dnnl::memory;

struct Geometry {
    std::int64_t m = 0, k = 0, n = 0, experts = 0;
    bool transpose = false;
    bool single_output = false;
    std::vector<std::int64_t> begin, rows;
    hb_dtype dtype = HB_FLOAT32;
    const hb_tensor* x = nullptr;
    const hb_tensor* weight = nullptr;
    const hb_tensor* bias = nullptr;  // null when absent
    const hb_arg* y = nullptr;
};

// Empty on success, else a message for hb_fail.
std::string geometry(const hb_call* call, Geometry& g) {
    const hb_arg* x = hb_input(call, "x");
    const hb_arg* w = hb_input(call, "weight");
    const hb_arg* bias = hb_input(call, "bias");
    g.y = hb_output(call, "y");
    const hb_attr* list = hb_attr_find(call, "group_list");
    if (!x || !w || !g.y || x->count != 1 || w->count != 1) return "grouped_matmul: expected inputs x and weight and output list y";
    if (!list || list->type != HB_ATTR_INT_LIST) return "grouped_matmul: group_list (an int list) is missing";
    g.x = &x->tensors[0];
    g.weight = &w->tensors[0];
    g.bias = bias && bias->present && bias->count == 1 ? &bias->tensors[0] : nullptr;
    if (g.x->rank != 2 || g.weight->rank != 3) return "grouped_matmul: x must be [M, K] and weight [E, K, N] or [E, N, K]";
    if (!hb_is_contiguous(g.x) || !hb_is_contiguous(g.weight) || (g.bias && !hb_is_contiguous(g.bias)))
        return "grouped_matmul: only contiguous tensors are supported";
    g.dtype = g.x->dtype;
    if (!dnnl_type(g.dtype) || g.weight->dtype != g.dtype) return "grouped_matmul: x and weight must share a float dtype";
    g.transpose = hb_attr_int(call, "transpose_weight", 0) != 0;
    g.single_output = hb_attr_int(call, "split_item", 0) >= 2;
    g.m = g.x->shape[0];
    g.k = g.x->shape[1];
    g.experts = g.weight->shape[0];
    g.n = g.transpose ? g.weight->shape[1] : g.weight->shape[2];
    if ((g.transpose ? g.weight->shape[2] : g.weight->shape[1]) != g.k) return "grouped_matmul: weight and x disagree on K";
    if (list->count != g.experts) return "grouped_matmul: group_list needs one entry per expert";
    if (g.bias && (g.bias->rank != 2 || g.bias->shape[0] != g.experts || g.bias->shape[1] != g.n ||
                   !dnnl_type(g.bias->dtype)))
        return "grouped_matmul: bias must be a float [E, N]";
    std::int64_t previous = 0;
    for (std::int64_t e = 0; e < g.experts; ++e) {
        const std::int64_t end = list->ints[e];
        if (end < previous || end > g.m) return "grouped_matmul: group_list must be non-decreasing within [0, M]";
        g.begin.push_back(previous);
        g.rows.push_back(end - previous);
        previous = end;
    }
    if (g.y->count != (g.single_output ? 1 : g.experts)) return "grouped_matmul: y has the wrong number of tensors";
    for (std::int32_t t = 0; t < g.y->count; ++t)
        if (g.y->tensors[t].dtype != g.dtype || !hb_is_contiguous(&g.y->tensors[t]))
            return "grouped_matmul: every y tensor must be contiguous in x's dtype";
    return {};
}

struct MatmulPlan {
    dnnl::matmul primitive;
    memory::desc src, weights, bias, dst;
};

// rows, K, N, operand type, bias type (-1: none), transposed weight.
using PlanKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, int, int, bool>;

// The product of one group with operands in `type` (f32 or bf16) and an f32 destination;
// nothing when oneDNN has no kernel.
const std::optional<MatmulPlan>& matmul_plan(std::int64_t rows, const Geometry& g, memory::data_type type,
                                             std::optional<memory::data_type> bias_type) {
    static PlanCache<PlanKey, std::optional<MatmulPlan>> cache;
    const PlanKey key{rows, g.k, g.n, static_cast<int>(type), bias_type ? static_cast<int>(*bias_type) : -1, g.transpose};
    return cache.get(key, [&]() -> std::optional<MatmulPlan> {
        const memory::desc src({rows, g.k}, type, memory::format_tag::ab);
        const memory::desc weights({g.k, g.n}, type, g.transpose ? memory::format_tag::ba : memory::format_tag::ab);
        const memory::desc dst({rows, g.n}, memory::data_type::f32, memory::format_tag::ab);
        const memory::desc bias = bias_type ? memory::desc({1, g.n}, *bias_type, memory::format_tag::ab) : memory::desc();
        auto make = [&] {
            return bias_type ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, bias, dst), cpu_engine())
                             : dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), cpu_engine());
        };
        auto pd = try_create(make);
        if (!pd) return std::nullopt;
        return MatmulPlan{dnnl::matmul(*pd), src, weights, bias, dst};
    });
}

// Whether x's dtype runs natively: f32 always, bf16 where oneDNN has a kernel for it.
bool runs_natively(const Geometry& g) {
    if (g.dtype == HB_FLOAT32) return true;
    if (g.dtype != HB_BFLOAT16) return false;
    std::optional<memory::data_type> bias_type;
    if (g.bias) bias_type = *dnnl_type(g.bias->dtype);
    for (std::int64_t rows : g.rows)
        if (rows > 0 && !matmul_plan(rows, g, memory::data_type::bf16, bias_type)) return false;
    return true;
}

std::int64_t max_rows(const Geometry& g) {
    std::int64_t most = 0;
    for (std::int64_t rows : g.rows) most = std::max(most, rows);
    return most;
}

// f32 copies: x, one group's weight, one group's bias, one group's product; natively, a
// bf16 product's f32 destination only.
std::uint64_t workspace_floats(const Geometry& g, bool native) {
    if (native) return g.dtype == HB_FLOAT32 ? 0 : static_cast<std::uint64_t>(max_rows(g) * g.n);
    return static_cast<std::uint64_t>(g.m * g.k + g.k * g.n + g.n + max_rows(g) * g.n);
}

void execute(const MatmulPlan& plan, void* src, void* weights, void* bias, void* dst) {
    dnnl::stream& stream = cpu_stream();
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(plan.src, cpu_engine(), src)},
                                            {DNNL_ARG_WEIGHTS, memory(plan.weights, cpu_engine(), weights)},
                                            {DNNL_ARG_DST, memory(plan.dst, cpu_engine(), dst)}};
    if (bias) args.emplace(DNNL_ARG_BIAS, memory(plan.bias, cpu_engine(), bias));
    plan.primitive.execute(stream, args);
    stream.wait();
}

// Group e's rows of y: its own tensor, or rows of the single output.
char* group_output(const Geometry& g, std::int64_t e, std::size_t element) {
    if (!g.single_output) return static_cast<char*>(g.y->tensors[e].data);
    return static_cast<char*>(g.y->tensors[0].data) + static_cast<std::size_t>(g.begin[e] * g.n) * element;
}

FlatTensor flat(void* data, hb_dtype dtype, std::int64_t n) {
    FlatTensor t;
    t.data = data;
    t.dtype = dtype;
    t.n = n;
    return t;
}

int run_native(const Geometry& g, float* product) {
    const std::size_t element = g.dtype == HB_FLOAT32 ? 4 : 2;
    const memory::data_type type = *dnnl_type(g.dtype);
    std::optional<memory::data_type> bias_type;
    if (g.bias) bias_type = *dnnl_type(g.bias->dtype);
    const std::size_t bias_element = g.bias && g.bias->dtype == HB_FLOAT32 ? 4 : 2;
    for (std::int64_t e = 0; e < g.experts; ++e) {
        if (g.rows[e] == 0) continue;
        const MatmulPlan& plan = *matmul_plan(g.rows[e], g, type, bias_type);
        char* x = static_cast<char*>(g.x->data) + static_cast<std::size_t>(g.begin[e] * g.k) * element;
        char* w = static_cast<char*>(g.weight->data) + static_cast<std::size_t>(e * g.k * g.n) * element;
        char* b = g.bias ? static_cast<char*>(g.bias->data) + static_cast<std::size_t>(e * g.n) * bias_element : nullptr;
        if (g.dtype == HB_FLOAT32) {
            execute(plan, x, w, b, group_output(g, e, element));
        } else {
            execute(plan, x, w, b, product);
            narrow_from_f32(product, flat(group_output(g, e, element), g.dtype, g.rows[e] * g.n));
        }
    }
    return 0;
}

int run_via_f32(const Geometry& g, float* workspace) {
    const std::size_t element = 2;  // float16 or bfloat16
    float* x32 = workspace;
    float* w32 = x32 + g.m * g.k;
    float* b32 = w32 + g.k * g.n;
    float* y32 = b32 + g.n;
    widen_to_f32(flat(g.x->data, g.dtype, g.m * g.k), x32);
    for (std::int64_t e = 0; e < g.experts; ++e) {
        if (g.rows[e] == 0) continue;
        const MatmulPlan& plan = *matmul_plan(g.rows[e], g, memory::data_type::f32,
                                              g.bias ? std::optional(memory::data_type::f32) : std::nullopt);
        widen_to_f32(flat(static_cast<char*>(g.weight->data) + static_cast<std::size_t>(e * g.k * g.n) * element, g.dtype,
                          g.k * g.n),
                     w32);
        if (g.bias) {
            const std::size_t bias_element = g.bias->dtype == HB_FLOAT32 ? 4 : 2;
            widen_to_f32(flat(static_cast<char*>(g.bias->data) + static_cast<std::size_t>(e * g.n) * bias_element,
                              g.bias->dtype, g.n),
                         b32);
        }
        execute(plan, x32 + g.begin[e] * g.k, w32, g.bias ? b32 : nullptr, y32);
        narrow_from_f32(y32, flat(group_output(g, e, element), g.dtype, g.rows[e] * g.n));
    }
    return 0;
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Geometry g;
    if (!geometry(call, g).empty()) return 0;  // the kernel reports the error
    try {
        return workspace_floats(g, runs_natively(g)) * sizeof(float);
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Geometry g;
    if (const std::string error = geometry(call, g); !error.empty()) return hb_fail(call, 2, error.c_str());
    return guarded(call, [&] {
        const bool native = runs_natively(g);
        if (call->workspace_bytes < workspace_floats(g, native) * sizeof(float))
            return hb_fail(call, 2, "grouped_matmul: the workspace is smaller than hapbench_workspace_bytes asked for");
        if (native) return run_native(g, static_cast<float*>(call->workspace));
        return run_via_f32(g, static_cast<float*>(call->workspace));
    });
}
