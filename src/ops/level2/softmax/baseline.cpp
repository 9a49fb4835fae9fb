// Baseline for softmax, x viewed as [outer, size, inner] around the softmax axis.
// inner == 1 (the last dim, or only size-1 dims after it): oneDNN softmax_forward
// (softmax_accurate: the max is subtracted), jit:avx2 here. float32 runs directly from x
// into y; oneDNN 2.6 implements f16 softmax nowhere on the CPU and bf16 only with AVX-512,
// so those dtypes are widened into an fp32 workspace, normalized there in place and
// narrowed into y (the conversion a framework performs).
// inner > 1: an OpenMP loop in fp32. oneDNN 2.6 has only ref:any for a non-innermost axis
// of a plain layout, measured at 1.3 s for [18452, 256] along dim 0 and 6.7 s for
// [139, 296, 509] along dim 1 (fp32, 2 threads), 10 to 20x slower than this loop; the loop
// is what a framework (PyTorch's vectorized softmax over an inner dim) runs instead.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <type_traits>

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

// Softmax along the middle axis of [outer, size, inner], inner > 1: each job takes one outer
// index and a block of kBlock inner positions, so every pass reads contiguous runs of kBlock
// elements and the inner loops vectorize. fp32 y holds e^(x - max) between the passes; fp16
// and bf16 y cannot, so the exponential is evaluated again in the last pass.
template <typename Element>
void run_inner_loop(const Element* x, Element* y, const Geometry& g) {
    constexpr std::int64_t block = 64;
    const std::int64_t blocks = (g.inner + block - 1) / block;
#pragma omp parallel for schedule(static)
    for (std::int64_t job = 0; job < g.outer * blocks; ++job) {
        const std::int64_t i0 = (job % blocks) * block;
        const std::int64_t width = std::min(block, g.inner - i0);
        const std::int64_t base = job / blocks * g.size * g.inner + i0;
        float max[block], sum[block];
        for (std::int64_t i = 0; i < width; ++i) max[i] = -INFINITY, sum[i] = 0.f;
        for (std::int64_t k = 0; k < g.size; ++k)
            for (std::int64_t i = 0; i < width; ++i) {
                const float v = to_f32(x[base + k * g.inner + i]);
                max[i] = v != v || v > max[i] ? v : max[i];  // NaN stays the max, as in torch
            }
        for (std::int64_t k = 0; k < g.size; ++k)
            for (std::int64_t i = 0; i < width; ++i) {
                const std::int64_t at = base + k * g.inner + i;
                const float e = std::exp(to_f32(x[at]) - max[i]);
                if constexpr (std::is_same_v<Element, float>) y[at] = e;
                sum[i] += e;
            }
        for (std::int64_t i = 0; i < width; ++i) sum[i] = 1.f / sum[i];
        for (std::int64_t k = 0; k < g.size; ++k)
            for (std::int64_t i = 0; i < width; ++i) {
                const std::int64_t at = base + k * g.inner + i;
                if constexpr (std::is_same_v<Element, float>) y[at] *= sum[i];
                else y[at] = from_f32<Element>(std::exp(to_f32(x[at]) - max[i]) * sum[i]);
            }
    }
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
    if (!views(call, x, y, g).empty() || x.n == 0 || g.inner > 1) return 0;  // the kernel reports errors
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
    if (g.inner > 1) {
        with_float_element(x.dtype, [&](auto element) {
            using Element = decltype(element);
            run_inner_loop(static_cast<const Element*>(x.data), static_cast<Element*>(y.data), g);
        });
        return 0;
    }
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
