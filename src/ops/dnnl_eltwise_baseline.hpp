// The oneDNN path of the one-input elementwise baselines (exp, gelu, mish, sigmoid): x and y
// as flat tensors of one float dtype, a cached eltwise_forward plan, and the run that goes
// x -> y directly where oneDNN implements the dtype, else through fp32 in the workspace.
// On an AVX2 CPU oneDNN 2.6 implements eltwise (and binary) for fp16/bf16 only with
// AVX-512, so those dtypes are widened into the fp32 workspace, the fp32 primitive runs in
// place there, and the result is narrowed into y. Header-only like baseline_support.hpp.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <tuple>

#include "ops/baseline_support.hpp"

#pragma GCC visibility push(hidden)  // as in baseline_support.hpp

namespace hb::baseline {

// The workspace hapbench_workspace_bytes asks for: fp32 room for x when the primitive
// computes through fp32, else none.
inline std::uint64_t f32_workspace_bytes(const FlatTensor& x, bool via_f32) {
    return via_f32 ? static_cast<std::uint64_t>(x.n) * sizeof(float) : 0;
}

// Runs `execute(src, dst)` (creates the oneDNN memory, executes, waits) on x -> y directly,
// or, when the primitive computes in fp32 only (via_f32), widens x into the workspace,
// runs it in place there and narrows the result into y.
template <typename Execute>
int run_unary_plan(const hb_call* call, const FlatTensor& x, const FlatTensor& y, bool via_f32, Execute execute) {
    if (!via_f32) {
        execute(x.data, y.data);
        return 0;
    }
    if (!call->workspace || call->workspace_bytes < f32_workspace_bytes(x, true))
        return hb_fail(call, 4, "the fp32 conversion needs the workspace from hapbench_workspace_bytes");
    auto* f32 = static_cast<float*>(call->workspace);
    widen_to_f32(x, f32);
    execute(f32, f32);
    narrow_from_f32(f32, y);
    return 0;
}

struct EltwisePlan {
    dnnl::eltwise_forward primitive;
    dnnl::memory::desc desc;  // of its src and dst
    bool via_f32 = false;     // x is widened into the workspace, computed there, and narrowed into y
};

using EltwiseKey = std::tuple<std::int64_t, int, int, float, float>;

inline const EltwisePlan& eltwise_plan(const FlatTensor& x, dnnl::algorithm algorithm, float alpha, float beta) {
    static PlanCache<EltwiseKey, EltwisePlan> cache;
    const EltwiseKey key{x.n, static_cast<int>(x.dtype), static_cast<int>(algorithm), alpha, beta};
    return cache.get(key, [&] {
        auto make = [&](dnnl::memory::data_type t) {
            const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm,
                                                   flat_desc(x.n, t), alpha, beta);
            return dnnl::eltwise_forward::primitive_desc(desc, cpu_engine());
        };
        if (auto pd = try_create(make, x.type)) return EltwisePlan{dnnl::eltwise_forward(*pd), pd->src_desc(), false};
        const auto pd = make(dnnl::memory::data_type::f32);
        return EltwisePlan{dnnl::eltwise_forward(pd), pd.src_desc(), true};
    });
}

inline std::uint64_t eltwise_workspace_bytes(const FlatTensor& x, dnnl::algorithm algorithm, float alpha,
                                             float beta) {
    if (x.n == 0) return 0;
    return f32_workspace_bytes(x, eltwise_plan(x, algorithm, alpha, beta).via_f32);
}

inline int run_eltwise(const hb_call* call, const FlatTensor& x, const FlatTensor& y, dnnl::algorithm algorithm,
                       float alpha, float beta) {
    if (x.n == 0) return 0;
    const EltwisePlan& plan = eltwise_plan(x, algorithm, alpha, beta);
    return run_unary_plan(call, x, y, plan.via_f32, [&](void* src_data, void* dst_data) {
        dnnl::stream& stream = cpu_stream();
        dnnl::memory src(plan.desc, cpu_engine(), src_data), dst(plan.desc, cpu_engine(), dst_data);
        plan.primitive.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
        stream.wait();
    });
}

// x and y of a one-input elementwise operator: same dtype and element count.
inline std::string unary_views(const hb_call* call, FlatTensor& x, FlatTensor& y) {
    std::string error = flat_view(hb_input(call, "x"), "input x", x);
    if (error.empty()) error = flat_view(hb_output(call, "y"), "output y", y);
    if (error.empty() && (y.dtype != x.dtype || y.n != x.n)) error = "output y must have x's dtype and size";
    if (error.empty() && x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16 && x.dtype != HB_FLOAT32)
        error = "input x: expected float16, bfloat16 or float32";
    return error;
}

// The two entry points of a baseline that is one eltwise algorithm with alpha = beta = 0.
inline std::uint64_t eltwise_baseline_workspace_bytes(const hb_call* call, dnnl::algorithm algorithm) {
    FlatTensor x, y;
    if (!unary_views(call, x, y).empty()) return 0;  // the kernel reports it
    try {
        return eltwise_workspace_bytes(x, algorithm, 0.f, 0.f);
    } catch (const std::exception&) {
        return 0;
    }
}

inline int eltwise_baseline_kernel(const hb_call* call, dnnl::algorithm algorithm) {
    FlatTensor x, y;
    if (const std::string error = unary_views(call, x, y); !error.empty()) return hb_fail(call, 2, error.c_str());
    return guarded(call, [&] { return run_eltwise(call, x, y, algorithm, 0.f, 0.f); });
}

}  // namespace hb::baseline

#pragma GCC visibility pop
