// Baseline for weight_quant_batch_matmul: the int8 weight dequantized by a threaded C++
// pass, then one oneDNN matmul, what a framework without a fused weight-only-quantized
// kernel runs (oneDNN 2.6 cannot dequantize an int8 weight against float activations).
// bfloat16: W' = (weight + offset) * scale computed in fp32 and rounded once to bf16, then
// a bf16 matmul with the fp32 bias (brgemm: AMX or AVX512-BF16 where present) into an f32
// destination narrowed into y (with a bf16 destination oneDNN 2.6 keeps the partial sums of
// a blocked k in bf16, measured to fail the gate where they cancel). float16, and
// bfloat16 below AVX-512 (no oneDNN 2.6 kernel for either): x widened to fp32, W' in fp32,
// an f32 matmul with the bias widened, the product rounded into y.
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;
using dnnl::memory;

struct Geometry {
    std::int64_t m = 0, k = 0, n = 0;
    hb_dtype dtype = HB_FLOAT16;
    const hb_tensor* x = nullptr;
    const hb_tensor* weight = nullptr;
    const hb_tensor* scale = nullptr;
    const hb_tensor* offset = nullptr;
    const hb_tensor* bias = nullptr;
    const hb_tensor* y = nullptr;
};

const hb_tensor* optional_tensor(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present && a->count == 1 ? &a->tensors[0] : nullptr;
}

std::string geometry(const hb_call* call, Geometry& g) {
    g.x = optional_tensor(call, "x");
    g.weight = optional_tensor(call, "weight");
    g.scale = optional_tensor(call, "antiquantScale");
    g.offset = optional_tensor(call, "antiquantOffset");
    g.bias = optional_tensor(call, "bias");
    const hb_arg* y = hb_output(call, "y");
    if (!g.x || !g.weight || !g.scale || !y || y->count != 1)
        return "weight_quant_batch_matmul: expected x, weight, antiquantScale and y";
    g.y = &y->tensors[0];
    for (const hb_tensor* t : {g.x, g.weight, g.scale, g.offset, g.bias, g.y})
        if (t && !hb_is_contiguous(t)) return "weight_quant_batch_matmul: only contiguous tensors are supported";
    g.dtype = g.x->dtype;
    if ((g.dtype != HB_FLOAT16 && g.dtype != HB_BFLOAT16) || g.weight->dtype != HB_INT8 || g.x->rank != 2 ||
        g.weight->rank != 2 || g.y->dtype != g.dtype)
        return "weight_quant_batch_matmul: x [M, K] float16/bfloat16, weight int8 [K, N], y in x's dtype";
    g.m = g.x->shape[0];
    g.k = g.x->shape[1];
    g.n = g.weight->shape[1];
    if (g.weight->shape[0] != g.k) return "weight_quant_batch_matmul: x and weight disagree on K";
    for (const hb_tensor* t : {g.scale, g.offset, g.bias})
        if (t && (hb_numel(t) != g.n || !dnnl_type(t->dtype))) return "weight_quant_batch_matmul: per-column inputs must be float [N]";
    return {};
}

struct MatmulPlan {
    dnnl::matmul primitive;
    memory::desc src, weights, bias, dst;
};

using PlanKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, int, bool>;

const std::optional<MatmulPlan>& matmul_plan(const Geometry& g, memory::data_type type, bool bias) {
    static PlanCache<PlanKey, std::optional<MatmulPlan>> cache;
    return cache.get(PlanKey{g.m, g.k, g.n, static_cast<int>(type), bias}, [&]() -> std::optional<MatmulPlan> {
        const memory::desc src({g.m, g.k}, type, memory::format_tag::ab);
        const memory::desc weights({g.k, g.n}, type, memory::format_tag::ab);
        const memory::desc dst({g.m, g.n}, memory::data_type::f32, memory::format_tag::ab);
        const memory::desc bias_desc = bias ? memory::desc({1, g.n}, memory::data_type::f32, memory::format_tag::ab) : memory::desc();
        auto make = [&] {
            return bias ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, bias_desc, dst), cpu_engine())
                        : dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), cpu_engine());
        };
        auto pd = try_create(make);
        if (!pd) return std::nullopt;
        return MatmulPlan{dnnl::matmul(*pd), src, weights, bias_desc, dst};
    });
}

bool bf16_native(const Geometry& g) {
    return g.dtype == HB_BFLOAT16 && matmul_plan(g, memory::data_type::bf16, g.bias != nullptr).has_value();
}

float element(const hb_tensor* t, std::int64_t i) {
    switch (t->dtype) {
        case HB_FLOAT32: return static_cast<const float*>(t->data)[i];
        case HB_BFLOAT16: return to_f32(static_cast<const BFloat16*>(t->data)[i]);
        default: return to_f32(static_cast<const Half*>(t->data)[i]);
    }
}

// W'[k, n] = (weight + offset[n]) * scale[n], in fp32, stored as Element.
template <typename Element>
void dequantize(const Geometry& g, Element* out, float* scale, float* offset) {
    for (std::int64_t j = 0; j < g.n; ++j) {
        scale[j] = element(g.scale, j);
        offset[j] = g.offset ? element(g.offset, j) : 0.0f;
    }
    const auto* w = static_cast<const std::int8_t*>(g.weight->data);
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < g.k; ++r)
        for (std::int64_t j = 0; j < g.n; ++j) {
            const float v = (static_cast<float>(w[r * g.n + j]) + offset[j]) * scale[j];
            if constexpr (std::is_same_v<Element, float>) out[r * g.n + j] = v;
            else out[r * g.n + j] = BFloat16{hb_f32_to_bf16(v)};
        }
}

// Workspace: W' (bf16 or f32), per-column scale, offset and bias in f32, the product in f32
// before rounding; on the f32 path also x widened.
std::uint64_t workspace_bytes(const Geometry& g, bool native) {
    const std::uint64_t columns = static_cast<std::uint64_t>(3 * g.n) * sizeof(float);
    if (native) return static_cast<std::uint64_t>(g.k * g.n) * 2 + static_cast<std::uint64_t>(g.m * g.n) * 4 + columns;
    return static_cast<std::uint64_t>(g.k * g.n + g.m * g.k + g.m * g.n) * sizeof(float) + columns;
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

FlatTensor flat(void* data, hb_dtype dtype, std::int64_t n) {
    FlatTensor t;
    t.data = data;
    t.dtype = dtype;
    t.n = n;
    return t;
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Geometry g;
    if (!geometry(call, g).empty()) return 0;  // the kernel reports the error
    try {
        return workspace_bytes(g, bf16_native(g));
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Geometry g;
    if (const std::string error = geometry(call, g); !error.empty()) return hb_fail(call, 2, error.c_str());
    return guarded(call, [&] {
        const bool native = bf16_native(g);
        if (call->workspace_bytes < workspace_bytes(g, native))
            return hb_fail(call, 2, "weight_quant_batch_matmul: the workspace is smaller than hapbench_workspace_bytes asked for");
        char* at = static_cast<char*>(call->workspace);
        auto take = [&](std::uint64_t bytes) {
            char* p = at;
            at += bytes;
            return p;
        };
        auto* scale = reinterpret_cast<float*>(take(static_cast<std::uint64_t>(g.n) * 4));
        auto* offset = reinterpret_cast<float*>(take(static_cast<std::uint64_t>(g.n) * 4));
        auto* bias = reinterpret_cast<float*>(take(static_cast<std::uint64_t>(g.n) * 4));
        if (g.bias) widen_to_f32(flat(g.bias->data, g.bias->dtype, g.n), bias);
        if (native) {
            auto* y32 = reinterpret_cast<float*>(take(static_cast<std::uint64_t>(g.m * g.n) * 4));
            auto* weights = reinterpret_cast<BFloat16*>(take(static_cast<std::uint64_t>(g.k * g.n) * 2));
            dequantize(g, weights, scale, offset);
            execute(*matmul_plan(g, memory::data_type::bf16, g.bias != nullptr), g.x->data, weights, g.bias ? bias : nullptr, y32);
            narrow_from_f32(y32, flat(g.y->data, g.dtype, g.m * g.n));
            return 0;
        }
        auto* weights = reinterpret_cast<float*>(take(static_cast<std::uint64_t>(g.k * g.n) * 4));
        auto* x32 = reinterpret_cast<float*>(take(static_cast<std::uint64_t>(g.m * g.k) * 4));
        auto* y32 = reinterpret_cast<float*>(take(static_cast<std::uint64_t>(g.m * g.n) * 4));
        dequantize(g, weights, scale, offset);
        widen_to_f32(flat(g.x->data, g.dtype, g.m * g.k), x32);
        execute(*matmul_plan(g, memory::data_type::f32, g.bias != nullptr), x32, weights, g.bias ? bias : nullptr, y32);
        narrow_from_f32(y32, flat(g.y->data, g.dtype, g.m * g.n));
        return 0;
    });
}
