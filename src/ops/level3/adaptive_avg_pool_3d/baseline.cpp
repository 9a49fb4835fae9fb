// Baseline for adaptive_avg_pool_3d. When every input size is a multiple of its output size
// the adaptive windows are one fixed kernel and stride (L / O), and oneDNN's
// pooling_forward (pooling_avg_exclude_padding, no padding) computes the operator: it runs on
// the NCDHW tensor as given when oneDNN has a jit kernel for that layout, else with reorders
// to and from the layout it picks (format_tag::any), as PyTorch's oneDNN path maps adaptive
// pooling. Otherwise (overlapping or uneven windows, up-sampling), and for a dtype oneDNN runs
// only in its reference kernel on this CPU, a plain C++ loop: OpenMP over (plane, output
// depth) pairs, each summing its rows along W per output column, then along H, in fp32 (what
// PyTorch's own CPU kernel does; oneDNN has no adaptive pooling).
#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "ops/dnnl_conv_baseline.hpp"

namespace {

using namespace hb::baseline;

struct Pool {
    FlatTensor x, y;
    std::int64_t n = 1, c = 1;
    std::array<std::int64_t, 3> in{}, out{};

    bool divisible() const {
        for (std::size_t a = 0; a < 3; ++a)
            if (in[a] % out[a] != 0) return false;
        return true;
    }
    auto key() const { return std::make_tuple(n, c, in, out, static_cast<int>(x.dtype)); }
};

std::string views(const hb_call* call, Pool& p) {
    std::string error = flat_view(hb_input(call, "x"), "input x", p.x);
    if (error.empty()) error = flat_view(hb_output(call, "y"), "output y", p.y);
    if (!error.empty()) return error;
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    if (x.rank != 5 || y.rank != 5 || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1])
        return "adaptive_avg_pool_3d: x [N, C, D, H, W] and y [N, C, Od, Oh, Ow] expected";
    if (p.y.dtype != p.x.dtype) return "adaptive_avg_pool_3d: y must have x's dtype";
    if (p.x.dtype != HB_FLOAT16 && p.x.dtype != HB_BFLOAT16 && p.x.dtype != HB_FLOAT32)
        return "adaptive_avg_pool_3d: float16, bfloat16 or float32 expected";
    p.n = x.shape[0], p.c = x.shape[1];
    for (std::size_t a = 0; a < 3; ++a) p.in[a] = x.shape[2 + a], p.out[a] = y.shape[2 + a];
    for (std::size_t a = 0; a < 3; ++a)
        if (p.in[a] < 1 || p.out[a] < 1) return "adaptive_avg_pool_3d: empty dimension";
    return {};
}

// ---------------------------------------------------------------- oneDNN path

struct PoolingPlan {
    std::optional<dnnl::pooling_forward> primitive;  // none: the loop computes this case
    Placed src, dst;
    std::size_t bytes = 0;
};

PoolingPlan make_plan(const Pool& p) {
    using tag = dnnl::memory::format_tag;
    PoolingPlan plan;
    if (!p.divisible()) return plan;
    const dnnl::memory::dims src_dims{p.n, p.c, p.in[0], p.in[1], p.in[2]};
    const dnnl::memory::dims dst_dims{p.n, p.c, p.out[0], p.out[1], p.out[2]};
    const dnnl::memory::dims window{p.in[0] / p.out[0], p.in[1] / p.out[1], p.in[2] / p.out[2]};
    auto make = [&](tag format) {
        dnnl::pooling_forward::primitive_desc pd(
            dnnl::pooling_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_avg_exclude_padding,
                                        dnnl::memory::desc(src_dims, p.x.type, format),
                                        dnnl::memory::desc(dst_dims, p.x.type, format), window, window, {0, 0, 0},
                                        {0, 0, 0}),
            cpu_engine());
        if (is_reference_impl(pd)) throw dnnl::error(dnnl_unimplemented, "only the reference kernel");
        return pd;
    };
    // Descriptors oneDNN rejects for a dtype (float16 pooling in oneDNN 2.6 fails as an
    // invalid descriptor, not as unimplemented) leave the case to the loop as well.
    std::optional<dnnl::pooling_forward::primitive_desc> pd;
    try {
        pd = try_create(make, tag::ncdhw);
        if (!pd) pd = try_create(make, tag::any);
    } catch (const dnnl::error&) {
        pd.reset();
    }
    if (!pd) return plan;
    plan.primitive = dnnl::pooling_forward(*pd);
    plan.src = place(dnnl::memory::desc(src_dims, p.x.type, tag::ncdhw), pd->src_desc(), false, plan.bytes);
    plan.dst = place(dnnl::memory::desc(dst_dims, p.x.type, tag::ncdhw), pd->dst_desc(), true, plan.bytes);
    return plan;
}

const PoolingPlan& plan_for(const Pool& p) {
    static PlanCache<decltype(p.key()), PoolingPlan> cache;
    return cache.get(p.key(), [&] { return make_plan(p); });
}

// ---------------------------------------------------------------- loop path

std::int64_t start_of(std::int64_t i, std::int64_t in, std::int64_t out) { return i * in / out; }
std::int64_t end_of(std::int64_t i, std::int64_t in, std::int64_t out) { return ((i + 1) * in + out - 1) / out; }

template <typename Element>
void run_loop(const Pool& p) {
    const auto* x = static_cast<const Element*>(p.x.data);
    auto* y = static_cast<Element*>(p.y.data);
    const std::int64_t d = p.in[0], h = p.in[1], w = p.in[2], od = p.out[0], oh = p.out[1], ow = p.out[2];
    std::vector<std::int64_t> w0(static_cast<std::size_t>(ow)), w1(static_cast<std::size_t>(ow));
    for (std::int64_t k = 0; k < ow; ++k) w0[static_cast<std::size_t>(k)] = start_of(k, w, ow), w1[static_cast<std::size_t>(k)] = end_of(k, w, ow);
    const std::int64_t items = p.n * p.c * od;
#pragma omp parallel
    {
        std::vector<float> rows(static_cast<std::size_t>(h * ow));  // per input row: the W-window sums
#pragma omp for schedule(static)
        for (std::int64_t item = 0; item < items; ++item) {
            const std::int64_t plane = item / od, i = item % od;
            const std::int64_t d0 = start_of(i, d, od), d1 = end_of(i, d, od);
            std::fill(rows.begin(), rows.end(), 0.f);
            for (std::int64_t z = d0; z < d1; ++z)
                for (std::int64_t r = 0; r < h; ++r) {
                    const Element* xr = x + ((plane * d + z) * h + r) * w;
                    float* sums = rows.data() + r * ow;
                    for (std::int64_t k = 0; k < ow; ++k) {
                        float s = 0;
                        for (std::int64_t v = w0[static_cast<std::size_t>(k)]; v < w1[static_cast<std::size_t>(k)]; ++v) s += to_f32(xr[v]);
                        sums[k] += s;
                    }
                }
            Element* yp = y + (plane * od + i) * oh * ow;
            for (std::int64_t j = 0; j < oh; ++j) {
                const std::int64_t h0 = start_of(j, h, oh), h1 = end_of(j, h, oh);
                for (std::int64_t k = 0; k < ow; ++k) {
                    float s = 0;
                    for (std::int64_t r = h0; r < h1; ++r) s += rows[static_cast<std::size_t>(r * ow + k)];
                    const auto volume = static_cast<float>((d1 - d0) * (h1 - h0) * (w1[static_cast<std::size_t>(k)] - w0[static_cast<std::size_t>(k)]));
                    yp[j * ow + k] = from_f32<Element>(s / volume);
                }
            }
        }
    }
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Pool p;
    if (!views(call, p).empty()) return 0;  // the kernel reports the error
    try {
        return plan_for(p).bytes;
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Pool p;
    if (const std::string error = views(call, p); !error.empty()) return hb_fail(call, 2, error.c_str());
    return guarded(call, [&] {
        const PoolingPlan& plan = plan_for(p);
        if (!plan.primitive) {
            with_float_element(p.x.dtype, [&](auto element) { run_loop<decltype(element)>(p); });
            return 0;
        }
        if (plan.bytes && (!call->workspace || call->workspace_bytes < plan.bytes))
            return hb_fail(call, 4, "the pooling needs the workspace from hapbench_workspace_bytes");
        char* ws = static_cast<char*>(call->workspace);
        dnnl::stream& stream = cpu_stream();
        const dnnl::memory src = input_memory(plan.src, p.x.data, ws, stream);
        const dnnl::memory dst = output_memory(plan.dst, p.y.data, ws);
        plan.primitive->execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
        finish_output(plan.dst, dst, p.y.data, stream);
        stream.wait();
        return 0;
    });
}
