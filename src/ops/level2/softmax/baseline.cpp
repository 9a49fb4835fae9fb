// Baseline for softmax: oneDNN softmax_forward (softmax_accurate: the max is subtracted)
// on x viewed as [outer, size, inner] with the softmax axis in the middle, so one 3-D
// descriptor covers every rank and dim. float32 runs directly from x into y. oneDNN 2.6
// implements f16 softmax nowhere on the CPU and bf16 only with AVX-512, so those dtypes
// are widened into an fp32 workspace, normalized there in place and narrowed into y (the
// conversion a framework performs).
#include <string>
#include <tuple>

#include "ops/dnnl_eltwise_baseline.hpp"

namespace {

using namespace hb::baseline;

struct SoftmaxPlan {
    dnnl::softmax_forward primitive;
    dnnl::memory::desc desc;
    bool via_f32 = false;
};

struct Geometry {
    std::int64_t outer = 1, size = 1, inner = 1;
};

using SoftmaxKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, int>;

const SoftmaxPlan& softmax_plan(const Geometry& g, const FlatTensor& x) {
    static PlanCache<SoftmaxKey, SoftmaxPlan> cache;
    return cache.get(SoftmaxKey{g.outer, g.size, g.inner, static_cast<int>(x.dtype)}, [&] {
        auto make = [&](dnnl::memory::data_type t) {
            const dnnl::memory::desc md({g.outer, g.size, g.inner}, t, dnnl::memory::format_tag::abc);
            return dnnl::softmax_forward::primitive_desc(
                dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), cpu_engine());
        };
        if (auto pd = try_create(make, x.type)) return SoftmaxPlan{dnnl::softmax_forward(*pd), pd->src_desc(), false};
        const auto pd = make(dnnl::memory::data_type::f32);
        return SoftmaxPlan{dnnl::softmax_forward(pd), pd.src_desc(), true};
    });
}

// Empty on success, else a message for hb_fail.
std::string views(const hb_call* call, FlatTensor& x, FlatTensor& y, Geometry& g) {
    if (const std::string error = unary_views(call, x, y); !error.empty()) return error;
    const hb_tensor& t = hb_input(call, "x")->tensors[0];
    if (t.rank < 1) return "softmax: x is 0-d";
    std::int64_t dim = hb_attr_int(call, "dim", -1);
    if (dim < 0) dim += t.rank;
    if (dim < 0 || dim >= t.rank) return "softmax: dim is out of range for x's rank";
    for (std::int64_t d = 0; d < dim; ++d) g.outer *= t.shape[d];
    g.size = t.shape[dim];
    for (std::int64_t d = dim + 1; d < t.rank; ++d) g.inner *= t.shape[d];
    return {};
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    FlatTensor x, y;
    Geometry g;
    if (!views(call, x, y, g).empty() || x.n == 0) return 0;  // the kernel reports errors
    try {
        return f32_workspace_bytes(x, softmax_plan(g, x).via_f32);
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    FlatTensor x, y;
    Geometry g;
    if (const std::string error = views(call, x, y, g); !error.empty()) return hb_fail(call, 2, error.c_str());
    if (x.n == 0) return 0;
    return guarded(call, [&] {
        const SoftmaxPlan& plan = softmax_plan(g, x);
        return run_unary_plan(call, x, y, plan.via_f32, [&](void* src_data, void* dst_data) {
            dnnl::stream& stream = cpu_stream();
            dnnl::memory src(plan.desc, cpu_engine(), src_data), dst(plan.desc, cpu_engine(), dst_data);
            plan.primitive.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
            stream.wait();
        });
    });
}
