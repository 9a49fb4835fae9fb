// Baseline for conv_3d_backprop_filter: oneDNN convolution_backward_weights (direct
// algorithm, with its forward primitive descriptor as the hint), through
// dnnl_conv_baseline.hpp: formats chosen by oneDNN with reorders of x and grad from NCDHW and
// of the filter gradient back to [Cout, Cin / groups, Kd, Kh, Kw] in every call, as PyTorch's
// oneDNN path does; a dtype oneDNN runs only in its reference kernel on this CPU goes through
// fp32 copies. Afterwards every filter tap that some non-finite gradient value reaches through
// the zero padding is set to NaN, the operator's 0 * inf (oneDNN skips padded positions).
#include <array>
#include <string>

#include "ops/dnnl_conv_baseline.hpp"

namespace {

using namespace hb::baseline;

struct BackpropCall {
    FlatTensor x, grad, y;
    std::int64_t n = 1, cin = 1, cout = 1, groups = 1;
    std::array<std::int64_t, 3> in{}, out{}, kernel{}, stride{}, dilation{}, pad_before{}, pad_after{};

    auto key() const {
        return std::make_tuple(n, cin, cout, groups, in, out, kernel, stride, dilation, pad_before, pad_after,
                               static_cast<int>(x.dtype));
    }
};

std::string views(const hb_call* call, BackpropCall& c) {
    std::string error = flat_view(hb_input(call, "x"), "input x", c.x);
    if (error.empty()) error = flat_view(hb_input(call, "grad"), "input grad", c.grad);
    if (error.empty()) error = flat_view(hb_output(call, "y"), "output y", c.y);
    if (!error.empty()) return error;
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& grad = hb_input(call, "grad")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    if (x.rank != 5 || grad.rank != 5 || y.rank != 5 || grad.shape[0] != x.shape[0] || y.shape[0] != grad.shape[1])
        return "conv_3d_backprop_filter: x [N, Cin, D, H, W], grad [N, Cout, Do, Ho, Wo] and y [Cout, Cin/groups, Kd, Kh, Kw] expected";
    if (c.grad.dtype != c.x.dtype || c.y.dtype != c.x.dtype)
        return "conv_3d_backprop_filter: x, grad and y must share one dtype";
    if (c.x.dtype != HB_FLOAT16 && c.x.dtype != HB_BFLOAT16)
        return "conv_3d_backprop_filter: float16 or bfloat16 expected";
    const hb_attr* strides = hb_attr_find(call, "strides");
    const hb_attr* pads = hb_attr_find(call, "pads");
    const hb_attr* dilations = hb_attr_find(call, "dilations");
    if (!strides || strides->type != HB_ATTR_INT_LIST || strides->count != 3 || !pads ||
        pads->type != HB_ATTR_INT_LIST || pads->count != 6 || !dilations || dilations->type != HB_ATTR_INT_LIST ||
        dilations->count != 3)
        return "conv_3d_backprop_filter: strides [3], pads [6] and dilations [3] expected";
    c.n = x.shape[0], c.cin = x.shape[1], c.cout = grad.shape[1];
    c.groups = hb_attr_int(call, "groups", 1);
    if (c.groups < 1 || c.cin % c.groups || c.cout % c.groups || y.shape[1] != c.cin / c.groups)
        return "conv_3d_backprop_filter: groups must divide Cin and Cout, and y must be [Cout, Cin/groups, ...]";
    for (int a = 0; a < 3; ++a) {
        const auto k = static_cast<std::size_t>(a);
        c.in[k] = x.shape[2 + a], c.out[k] = grad.shape[2 + a], c.kernel[k] = y.shape[2 + a];
        c.stride[k] = strides->ints[a], c.dilation[k] = dilations->ints[a];
        c.pad_before[k] = pads->ints[2 * a], c.pad_after[k] = pads->ints[2 * a + 1];
    }
    return {};
}

struct BackpropPlan {
    dnnl::convolution_backward_weights primitive;
    bool via_f32 = false;
    Placed src, diff_dst, diff_weights;
    F32Copies f32;  // x, grad, y when via_f32
    std::size_t bytes = 0;
};

dnnl::memory::dims dims3(const std::array<std::int64_t, 3>& v, std::int64_t minus = 0) {
    return {v[0] - minus, v[1] - minus, v[2] - minus};
}

BackpropPlan make_plan(const BackpropCall& c) {
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::dims src_dims{c.n, c.cin, c.in[0], c.in[1], c.in[2]};
    const dnnl::memory::dims dst_dims{c.n, c.cout, c.out[0], c.out[1], c.out[2]};
    const dnnl::memory::dims weights_dims = c.groups > 1
        ? dnnl::memory::dims{c.groups, c.cout / c.groups, c.cin / c.groups, c.kernel[0], c.kernel[1], c.kernel[2]}
        : dnnl::memory::dims{c.cout, c.cin, c.kernel[0], c.kernel[1], c.kernel[2]};
    auto make = [&](dnnl::memory::data_type t) {
        const dnnl::memory::desc src(src_dims, t, tag::any), weights(weights_dims, t, tag::any), dst(dst_dims, t, tag::any);
        const dnnl::convolution_forward::primitive_desc hint(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src,
                                            weights, dst, dims3(c.stride), dims3(c.dilation, 1), dims3(c.pad_before),
                                            dims3(c.pad_after)),
            cpu_engine());
        dnnl::convolution_backward_weights::primitive_desc pd(
            dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, src, weights, dst,
                                                     dims3(c.stride), dims3(c.dilation, 1), dims3(c.pad_before),
                                                     dims3(c.pad_after)),
            cpu_engine(), hint);
        if (t != dnnl::memory::data_type::f32 && is_reference_impl(pd))
            throw dnnl::error(dnnl_unimplemented, "only the reference kernel");
        return pd;
    };
    BackpropPlan plan;
    dnnl::memory::data_type t = c.x.type;
    std::optional<dnnl::convolution_backward_weights::primitive_desc> pd = try_create(make, t);
    if (!pd) {
        t = dnnl::memory::data_type::f32;
        pd = make(t);
        plan.via_f32 = true;
        for (const FlatTensor* tensor : {&c.x, &c.grad, &c.y}) plan.f32.add(tensor->n);
    }
    plan.primitive = dnnl::convolution_backward_weights(*pd);
    plan.bytes = plan.f32.bytes;
    plan.src = place(dnnl::memory::desc(src_dims, t, tag::ncdhw), pd->src_desc(), false, plan.bytes);
    plan.diff_dst = place(dnnl::memory::desc(dst_dims, t, tag::ncdhw), pd->diff_dst_desc(), false, plan.bytes);
    plan.diff_weights = place(dnnl::memory::desc(weights_dims, t, c.groups > 1 ? tag::goidhw : tag::oidhw),
                              pd->diff_weights_desc(), true, plan.bytes);
    return plan;
}

const BackpropPlan& plan_for(const BackpropCall& c) {
    static PlanCache<decltype(c.key()), BackpropPlan> cache;
    return cache.get(c.key(), [&] { return make_plan(c); });
}

// The operator multiplies padded positions (zeros) by the gradient, so a non-finite gradient
// value at an output position whose window reaches into the padding makes NaN the taps that
// land there, for every input channel of the group. Only border positions can do that; the
// interior is skipped by whole rows.
template <typename Element>
void nan_where_padding_meets_nonfinite_grad(const BackpropCall& c) {
    const auto* grad = static_cast<const Element*>(c.grad.data);
    auto* y = static_cast<Element*>(c.y.data);
    const std::int64_t taps = c.kernel[0] * c.kernel[1] * c.kernel[2];
    const std::int64_t positions = c.out[0] * c.out[1] * c.out[2];
    // pad[a][o * K + t]: tap t of output index o along axis a reads padding.
    std::array<std::vector<char>, 3> pad;
    std::array<std::vector<char>, 3> any_pad;
    for (std::size_t a = 0; a < 3; ++a) {
        pad[a].assign(static_cast<std::size_t>(c.out[a] * c.kernel[a]), 0);
        any_pad[a].assign(static_cast<std::size_t>(c.out[a]), 0);
        for (std::int64_t o = 0; o < c.out[a]; ++o)
            for (std::int64_t t = 0; t < c.kernel[a]; ++t) {
                const std::int64_t i = o * c.stride[a] + t * c.dilation[a] - c.pad_before[a];
                const bool outside = i < 0 || i >= c.in[a];
                pad[a][static_cast<std::size_t>(o * c.kernel[a] + t)] = outside;
                if (outside) any_pad[a][static_cast<std::size_t>(o)] = 1;
            }
    }
    std::vector<std::int64_t> border_w;  // output columns whose window reaches the padding
    for (std::int64_t v = 0; v < c.out[2]; ++v)
        if (any_pad[2][static_cast<std::size_t>(v)]) border_w.push_back(v);
    const std::int64_t cg = c.cin / c.groups;
    const Element nan = from_f32<Element>(NAN);
#pragma omp parallel for schedule(dynamic)
    for (std::int64_t o = 0; o < c.cout; ++o) {
        std::vector<char> bad(static_cast<std::size_t>(taps), 0);
        bool any = false;
        auto visit = [&](std::int64_t t0, std::int64_t t1, std::int64_t t2) {
            for (std::int64_t a = 0; a < c.kernel[0]; ++a)
                for (std::int64_t b = 0; b < c.kernel[1]; ++b)
                    for (std::int64_t e = 0; e < c.kernel[2]; ++e)
                        if (pad[0][static_cast<std::size_t>(t0 * c.kernel[0] + a)] ||
                            pad[1][static_cast<std::size_t>(t1 * c.kernel[1] + b)] ||
                            pad[2][static_cast<std::size_t>(t2 * c.kernel[2] + e)])
                            bad[static_cast<std::size_t>((a * c.kernel[1] + b) * c.kernel[2] + e)] = 1, any = true;
        };
        for (std::int64_t n = 0; n < c.n; ++n) {
            const Element* g = grad + (n * c.cout + o) * positions;
            for (std::int64_t t0 = 0; t0 < c.out[0]; ++t0)
                for (std::int64_t t1 = 0; t1 < c.out[1]; ++t1) {
                    const Element* row = g + (t0 * c.out[1] + t1) * c.out[2];
                    if (any_pad[0][static_cast<std::size_t>(t0)] || any_pad[1][static_cast<std::size_t>(t1)]) {
                        for (std::int64_t t2 = 0; t2 < c.out[2]; ++t2)
                            if (is_nonfinite(row[t2])) visit(t0, t1, t2);
                    } else {
                        for (std::int64_t t2 : border_w)
                            if (is_nonfinite(row[t2])) visit(t0, t1, t2);
                    }
                }
        }
        if (!any) continue;
        for (std::int64_t ci = 0; ci < cg; ++ci)
            for (std::int64_t t = 0; t < taps; ++t)
                if (bad[static_cast<std::size_t>(t)]) y[(o * cg + ci) * taps + t] = nan;
    }
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    BackpropCall c;
    if (!views(call, c).empty()) return 0;  // the kernel reports the error
    try {
        return plan_for(c).bytes;
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    BackpropCall c;
    if (const std::string error = views(call, c); !error.empty()) return hb_fail(call, 2, error.c_str());
    return guarded(call, [&] {
        const BackpropPlan& plan = plan_for(c);
        if (plan.bytes && (!call->workspace || call->workspace_bytes < plan.bytes))
            return hb_fail(call, 4, "the convolution needs the workspace from hapbench_workspace_bytes");
        char* ws = static_cast<char*>(call->workspace);
        void *x = c.x.data, *grad = c.grad.data, *y = c.y.data;
        if (plan.via_f32) {
            x = ws + plan.f32.offsets[0], grad = ws + plan.f32.offsets[1], y = ws + plan.f32.offsets[2];
            widen_to_f32(c.x, static_cast<float*>(x));
            widen_to_f32(c.grad, static_cast<float*>(grad));
        }
        dnnl::stream& stream = cpu_stream();
        const dnnl::memory src = input_memory(plan.src, x, ws, stream);
        const dnnl::memory diff_dst = input_memory(plan.diff_dst, grad, ws, stream);
        const dnnl::memory diff_weights = output_memory(plan.diff_weights, y, ws);
        plan.primitive.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_WEIGHTS, diff_weights}});
        finish_output(plan.diff_weights, diff_weights, y, stream);
        stream.wait();
        if (plan.via_f32) narrow_or_copy_from_f32(static_cast<const float*>(y), c.y);
        with_float_element(c.x.dtype, [&](auto element) { nan_where_padding_meets_nonfinite_grad<decltype(element)>(c); });
        return 0;
    });
}
