// Baseline for exp: y = e^(a*x + b) with a = scale, b = shift (base <= 0) or a = scale*ln(base),
// b = shift*ln(base) (base > 0). oneDNN 2.6 has no single eltwise for that: with the default
// attributes it is eltwise_exp; otherwise a binary_add of the constant b to x with a as the
// src0 scale and an eltwise_exp post-op, one jit pass. (eltwise_linear with an exp post-op
// would be the obvious form, but oneDNN 2.6 only has its reference kernel, ~60x slower here.)
// Per dtype on an AVX2 CPU (measured on the AMD EPYC of the reference machine):
//   float32: the jit primitive (jit:avx2 eltwise, jit:uni binary), x -> y directly.
//   float16, bfloat16: unimplemented without AVX-512, so x is widened into the fp32
//     workspace, the fp32 primitive runs in place, and the result is narrowed into y.
// Special values (measured): the jit exp returns +inf for NaN inputs, so the NaN cases fail
// the NaN-position check; infinities are right.
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <tuple>

#include "ops/dnnl_eltwise_baseline.hpp"

namespace {

using namespace hb::baseline;

struct AffineExp {
    float a = 1.f, b = 0.f;
    bool is_plain() const { return a == 1.f && b == 0.f; }
};

AffineExp affine_exp(const hb_call* call) {
    const double base = hb_attr_float(call, "base", -1.0);
    const double scale = hb_attr_float(call, "scale", 1.0);
    const double shift = hb_attr_float(call, "shift", 0.0);
    const double log_base = base > 0 ? std::log(base) : 1.0;
    return {static_cast<float>(scale * log_base), static_cast<float>(shift * log_base)};
}

struct AffineExpPlan {
    dnnl::binary primitive;
    dnnl::memory::desc desc;  // of src0 and dst
    dnnl::memory shift;       // the one-element src1 holding b
    bool via_f32 = false;     // x is widened into the workspace, computed there, and narrowed into y
};

using AffineExpKey = std::tuple<std::int64_t, int, float, float>;

const AffineExpPlan& affine_exp_plan(const FlatTensor& x, AffineExp f) {
    static PlanCache<AffineExpKey, AffineExpPlan> cache;
    return cache.get(AffineExpKey{x.n, static_cast<int>(x.dtype), f.a, f.b}, [&] {
        dnnl::primitive_attr attr;
        attr.set_scales(DNNL_ARG_SRC_0, 0, {f.a});
        dnnl::post_ops post_ops;
        post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_exp, 0.f, 0.f);
        attr.set_post_ops(post_ops);
        const auto shift_desc = flat_desc(1, dnnl::memory::data_type::f32);
        auto make = [&](dnnl::memory::data_type t) {
            const auto md = flat_desc(x.n, t);
            return dnnl::binary::primitive_desc(dnnl::binary::desc(dnnl::algorithm::binary_add, md, shift_desc, md),
                                                attr, cpu_engine());
        };
        dnnl::memory shift(shift_desc, cpu_engine());
        *static_cast<float*>(shift.get_data_handle()) = f.b;
        if (auto pd = try_create(make, x.type))
            return AffineExpPlan{dnnl::binary(*pd), pd->src0_desc(), shift, false};
        const auto pd = make(dnnl::memory::data_type::f32);
        return AffineExpPlan{dnnl::binary(pd), pd.src0_desc(), shift, true};
    });
}

int run_affine_exp(const hb_call* call, const FlatTensor& x, const FlatTensor& y, AffineExp f) {
    if (x.n == 0) return 0;
    const AffineExpPlan& plan = affine_exp_plan(x, f);
    return run_unary_plan(call, x, y, plan.via_f32, [&](void* src_data, void* dst_data) {
        dnnl::stream& stream = cpu_stream();
        dnnl::memory src(plan.desc, cpu_engine(), src_data), dst(plan.desc, cpu_engine(), dst_data);
        plan.primitive.execute(stream, {{DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, plan.shift}, {DNNL_ARG_DST, dst}});
        stream.wait();
    });
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    FlatTensor x, y;
    if (!unary_views(call, x, y).empty() || x.n == 0) return 0;  // the kernel reports errors
    const AffineExp f = affine_exp(call);
    try {
        const bool via_f32 = f.is_plain() ? eltwise_workspace_bytes(x, dnnl::algorithm::eltwise_exp, 0.f, 0.f) > 0
                                          : affine_exp_plan(x, f).via_f32;
        return f32_workspace_bytes(x, via_f32);
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    FlatTensor x, y;
    if (const std::string error = unary_views(call, x, y); !error.empty()) return hb_fail(call, 2, error.c_str());
    const AffineExp f = affine_exp(call);
    return guarded(call, [&] {
        return f.is_plain() ? run_eltwise(call, x, y, dnnl::algorithm::eltwise_exp, 0.f, 0.f)
                            : run_affine_exp(call, x, y, f);
    });
}
