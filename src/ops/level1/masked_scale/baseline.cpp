// Baseline for masked_scale: oneDNN 2.6 binary_mul of x and the mask with the scale as the
// src0 scale attribute (dst = scale*x * mask), one jit pass.
// Per dtype pair on an AVX2 CPU (measured on the AMD EPYC of the reference machine), the
// jit:uni binary takes an fp32 src0 and dst with an int8, uint8, bf16 or fp32 mask; it
// implements nothing with an fp16 or bf16 src0/dst, nor an fp16 mask. So:
//   x float32: runs directly, except an fp16 mask, which is widened to fp32 first.
//   x float16, bfloat16: x is widened into the fp32 workspace, the primitive runs in place
//     there (fp16 masks widened too), and the result is narrowed into y.
// The choice is made by asking oneDNN (x's own dtypes first), not by this list.
#include <cstdint>
#include <exception>
#include <string>
#include <tuple>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;
using data_type = dnnl::memory::data_type;

struct MaskedScalePlan {
    dnnl::binary primitive;
    dnnl::memory::desc x_desc, mask_desc;  // x_desc also describes y
    bool x_via_f32 = false;     // x is widened into the workspace, computed there, narrowed into y
    bool mask_via_f32 = false;  // the mask is widened into the workspace after x's part

    std::uint64_t workspace_bytes(std::int64_t n) const {
        return static_cast<std::uint64_t>(n) * sizeof(float) * ((x_via_f32 ? 1 : 0) + (mask_via_f32 ? 1 : 0));
    }
};

using MaskedScaleKey = std::tuple<std::int64_t, int, int, float>;

const MaskedScalePlan& masked_scale_plan(const FlatTensor& x, const FlatTensor& mask, float scale) {
    static PlanCache<MaskedScaleKey, MaskedScalePlan> cache;
    const MaskedScaleKey key{x.n, static_cast<int>(x.dtype), static_cast<int>(mask.dtype), scale};
    return cache.get(key, [&] {
        dnnl::primitive_attr attr;
        attr.set_scales(DNNL_ARG_SRC_0, 0, {scale});
        auto make = [&](data_type x_type, data_type mask_type) {
            const auto x_md = flat_desc(x.n, x_type);
            const auto desc = dnnl::binary::desc(dnnl::algorithm::binary_mul, x_md, flat_desc(x.n, mask_type), x_md);
            return dnnl::binary::primitive_desc(desc, attr, cpu_engine());
        };
        // x's own dtype, then x in fp32, then both in fp32.
        if (auto pd = try_create(make, x.type, mask.type))
            return MaskedScalePlan{dnnl::binary(*pd), pd->src0_desc(), pd->src1_desc(), false, false};
        const bool x_via_f32 = x.type != data_type::f32;
        if (auto pd = try_create(make, data_type::f32, mask.type))
            return MaskedScalePlan{dnnl::binary(*pd), pd->src0_desc(), pd->src1_desc(), x_via_f32, false};
        const auto pd = make(data_type::f32, data_type::f32);
        return MaskedScalePlan{dnnl::binary(pd), pd.src0_desc(), pd.src1_desc(), x_via_f32, true};
    });
}

// Empty on success, else a message for hb_fail.
std::string masked_scale_views(const hb_call* call, FlatTensor& x, FlatTensor& mask, FlatTensor& y) {
    std::string error = flat_view(hb_input(call, "x"), "input x", x);
    if (error.empty()) error = flat_view(hb_input(call, "mask"), "input mask", mask);
    if (error.empty()) error = flat_view(hb_output(call, "y"), "output y", y);
    if (!error.empty()) return error;
    if (x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16 && x.dtype != HB_FLOAT32)
        return "input x: expected float16, bfloat16 or float32";
    if (mask.n != x.n) return "input mask must have x's size";
    if (y.dtype != x.dtype || y.n != x.n) return "output y must have x's dtype and size";
    return {};
}

int run_masked_scale(const hb_call* call, const FlatTensor& x, const FlatTensor& mask, const FlatTensor& y,
                     float scale) {
    if (x.n == 0) return 0;
    const MaskedScalePlan& plan = masked_scale_plan(x, mask, scale);
    if (call->workspace_bytes < plan.workspace_bytes(x.n) || (plan.workspace_bytes(x.n) > 0 && !call->workspace))
        return hb_fail(call, 4, "the fp32 conversion needs the workspace from hapbench_workspace_bytes");
    auto* workspace = static_cast<float*>(call->workspace);
    void* x_data = x.data;
    void* y_data = y.data;
    void* mask_data = mask.data;
    if (plan.x_via_f32) {
        widen_to_f32(x, workspace);
        x_data = y_data = workspace;
    }
    if (plan.mask_via_f32) {
        float* mask_f32 = workspace + (plan.x_via_f32 ? x.n : 0);
        widen_to_f32(mask, mask_f32);
        mask_data = mask_f32;
    }
    dnnl::stream& stream = cpu_stream();
    dnnl::memory src0(plan.x_desc, cpu_engine(), x_data), src1(plan.mask_desc, cpu_engine(), mask_data),
        dst(plan.x_desc, cpu_engine(), y_data);
    plan.primitive.execute(stream, {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}});
    stream.wait();
    if (plan.x_via_f32) narrow_from_f32(workspace, y);
    return 0;
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    FlatTensor x, mask, y;
    if (!masked_scale_views(call, x, mask, y).empty() || x.n == 0) return 0;  // the kernel reports errors
    try {
        return masked_scale_plan(x, mask, static_cast<float>(hb_attr_float(call, "scale", 1.0))).workspace_bytes(x.n);
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    FlatTensor x, mask, y;
    if (const std::string error = masked_scale_views(call, x, mask, y); !error.empty())
        return hb_fail(call, 2, error.c_str());
    const float scale = static_cast<float>(hb_attr_float(call, "scale", 1.0));
    return guarded(call, [&] { return run_masked_scale(call, x, mask, y, scale); });
}
