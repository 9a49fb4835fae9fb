// What the convolution baselines (conv_2d, depthwise_conv_2d, conv_3d_backprop_filter)
// share, header-only like baseline_support.hpp: a oneDNN primitive descriptor is created with
// format_tag::any, so oneDNN picks its fastest (blocked) layouts, and the plain NCHW / OIHW
// tensors a framework holds are reordered into and out of them in every call, as PyTorch's
// oneDNN path does; a dtype that oneDNN runs only in its reference kernel (ref:any) on this
// CPU, or not at all, is converted to fp32 around an fp32 primitive instead. Buffers for the
// converted and reordered tensors come from the case's workspace.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ops/baseline_support.hpp"

#pragma GCC visibility push(hidden)

namespace hb::baseline {

// oneDNN's reference implementations are orders of magnitude slower than its jit kernels; a
// framework would not ship them as its path for a dtype (and PyTorch converts instead).
inline bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
    return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

// A tensor as the caller holds it (plain) and as the primitive wants it, with the reorder
// between them when they differ and its buffer's place in the workspace.
struct Placed {
    dnnl::memory::desc user, actual;
    std::optional<dnnl::reorder> reorder;  // user -> actual (inputs) or actual -> user (outputs)
    std::size_t offset = 0;                // of the reordered buffer in the workspace
};

inline std::size_t align64(std::size_t n) { return (n + 63) / 64 * 64; }

// Plans the reorder of one tensor; `bytes` grows by the buffer it needs.
inline Placed place(const dnnl::memory::desc& user, const dnnl::memory::desc& actual, bool is_output, std::size_t& bytes) {
    Placed p{user, actual, std::nullopt, 0};
    if (user == actual) return p;
    p.reorder = is_output ? dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), actual, cpu_engine(), user))
                          : dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), user, cpu_engine(), actual));
    p.offset = bytes;
    bytes += align64(actual.get_size());
    return p;
}

// The memory the primitive reads (an input: reordered into the workspace when needed).
inline dnnl::memory input_memory(const Placed& p, void* data, char* workspace, dnnl::stream& stream) {
    dnnl::memory user(p.user, cpu_engine(), data);
    if (!p.reorder) return user;
    dnnl::memory actual(p.actual, cpu_engine(), workspace + p.offset);
    p.reorder->execute(stream, user, actual);
    return actual;
}

// The memory the primitive writes (an output); finish_output moves it to the user's tensor.
inline dnnl::memory output_memory(const Placed& p, void* data, char* workspace) {
    return p.reorder ? dnnl::memory(p.actual, cpu_engine(), workspace + p.offset) : dnnl::memory(p.user, cpu_engine(), data);
}
inline void finish_output(const Placed& p, dnnl::memory actual, void* data, dnnl::stream& stream) {
    if (!p.reorder) return;
    dnnl::memory user(p.user, cpu_engine(), data);
    p.reorder->execute(stream, actual, user);
}

// fp32 copies of every tensor of a case computed through fp32: their offsets in the workspace.
struct F32Copies {
    std::vector<std::size_t> offsets;
    std::size_t bytes = 0;
    void add(std::int64_t elements) {
        offsets.push_back(bytes);
        bytes += align64(static_cast<std::size_t>(elements) * sizeof(float));
    }
};

template <typename Element>
bool is_nonfinite(Element v) {
    return !std::isfinite(to_f32(v));
}

// The fp32 result into the output tensor: narrowed for fp16/bf16 (narrow_from_f32), copied
// for fp32 (a float32 case never goes through fp32 copies, but this keeps the call total).
inline void narrow_or_copy_from_f32(const float* src, const FlatTensor& dst) {
    if (dst.dtype == HB_FLOAT32) std::memcpy(dst.data, src, static_cast<std::size_t>(dst.n) * sizeof(float));
    else narrow_from_f32(src, dst);
}

// ---------------------------------------------------------------- 2-D forward convolution

// A 2-D grouped forward convolution as the conv_2d and depthwise_conv_2d baselines read it
// from their calls: x [N, Cin, H, W], w [Cout, Cin / groups, Kh, Kw], bias [Cout], y [N, Cout,
// Ho, Wo], all of one dtype.
struct Conv2dCall {
    FlatTensor x, w, bias, y;
    std::int64_t n = 1, cin = 1, cout = 1, groups = 1, h = 1, wd = 1, kh = 1, kw = 1, oh = 1, ow = 1;
    std::int64_t sh = 1, sw = 1, dh = 1, dw = 1, top = 0, bottom = 0, left = 0, right = 0;

    auto key() const {
        return std::make_tuple(n, cin, cout, groups, h, wd, kh, kw, sh, sw, dh, dw, top, bottom, left, right,
                               static_cast<int>(x.dtype));
    }
};

struct Conv2dPlan {
    dnnl::convolution_forward primitive;
    bool via_f32 = false;
    Placed src, weights, dst;
    dnnl::memory::desc bias;
    F32Copies f32;         // x, w, bias, y when via_f32
    std::size_t bytes = 0; // workspace: the fp32 copies, then the reordered buffers
};

// force_f32: plan the fp32 primitive (with conversions) even where the case dtype has one.
inline Conv2dPlan make_conv2d_plan(const Conv2dCall& c, bool force_f32 = false) {
    using tag = dnnl::memory::format_tag;
    auto make = [&](dnnl::memory::data_type t) {
        const dnnl::memory::dims weights_dims = c.groups > 1
            ? dnnl::memory::dims{c.groups, c.cout / c.groups, c.cin / c.groups, c.kh, c.kw}
            : dnnl::memory::dims{c.cout, c.cin, c.kh, c.kw};
        const dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
            dnnl::memory::desc({c.n, c.cin, c.h, c.wd}, t, tag::any), dnnl::memory::desc(weights_dims, t, tag::any),
            dnnl::memory::desc({c.cout}, t, tag::a), dnnl::memory::desc({c.n, c.cout, c.oh, c.ow}, t, tag::any),
            {c.sh, c.sw}, {c.dh - 1, c.dw - 1}, {c.top, c.left}, {c.bottom, c.right});
        dnnl::convolution_forward::primitive_desc pd(desc, cpu_engine());
        if (t != dnnl::memory::data_type::f32 && is_reference_impl(pd))
            throw dnnl::error(dnnl_unimplemented, "only the reference kernel");
        return pd;
    };
    Conv2dPlan plan;
    std::optional<dnnl::convolution_forward::primitive_desc> pd;
    if (!force_f32 || c.x.dtype == HB_FLOAT32) pd = try_create(make, c.x.type);
    dnnl::memory::data_type t = c.x.type;
    if (!pd) {
        t = dnnl::memory::data_type::f32;
        pd = make(t);
        plan.via_f32 = true;
        for (const FlatTensor* tensor : {&c.x, &c.w, &c.bias, &c.y}) plan.f32.add(tensor->n);
    }
    plan.primitive = dnnl::convolution_forward(*pd);
    plan.bytes = plan.f32.bytes;
    const dnnl::memory::desc weights_user =
        c.groups > 1 ? dnnl::memory::desc({c.groups, c.cout / c.groups, c.cin / c.groups, c.kh, c.kw}, t, tag::goihw)
                     : dnnl::memory::desc({c.cout, c.cin, c.kh, c.kw}, t, tag::oihw);
    plan.src = place(dnnl::memory::desc({c.n, c.cin, c.h, c.wd}, t, tag::nchw), pd->src_desc(), false, plan.bytes);
    plan.weights = place(weights_user, pd->weights_desc(), false, plan.bytes);
    plan.dst = place(dnnl::memory::desc({c.n, c.cout, c.oh, c.ow}, t, tag::nchw), pd->dst_desc(), true, plan.bytes);
    plan.bias = pd->bias_desc();
    return plan;
}

inline const Conv2dPlan& conv2d_plan(const Conv2dCall& c, bool force_f32 = false) {
    static PlanCache<decltype(std::tuple_cat(c.key(), std::make_tuple(force_f32))), Conv2dPlan> cache;
    return cache.get(std::tuple_cat(c.key(), std::make_tuple(force_f32)), [&] { return make_conv2d_plan(c, force_f32); });
}

// oneDNN's half-precision kernels pair taps for their dot-product instructions and pad a
// pair with a zero weight (first-layer kernels with few input channels pad the filter
// width, observed with bfloat16 on AVX512-BF16): an infinite x beside the window then meets
// 0 and gives NaN where the operator has +-inf. Cases whose x holds a non-finite value
// (one vectorized pass over the exponents) therefore take the fp32 primitive, whose kernels
// multiply only the window's taps.
inline bool has_nonfinite_half(const FlatTensor& t) {
    if (t.dtype != HB_FLOAT16 && t.dtype != HB_BFLOAT16) return false;
    const auto* bits = static_cast<const std::uint16_t*>(t.data);
    const std::uint16_t exponent = t.dtype == HB_FLOAT16 ? 0x7c00 : 0x7f80;
    int found = 0;
#pragma omp parallel for simd reduction(| : found) schedule(static)
    for (std::int64_t i = 0; i < t.n; ++i) found |= (bits[i] & exponent) == exponent;
    return found != 0;
}

// Where a padded tap meets a non-finite weight the operator's product is 0 * inf = NaN, a
// NaN weight gives NaN anyway; oneDNN never multiplies padded taps. So every output whose
// window reaches into the padding at a tap where some weight of its channel is not finite is
// set to NaN (the weights are scanned once; nothing happens when they are all finite).
template <typename Element>
void nan_where_padding_meets_nonfinite_weights(const Conv2dCall& c) {
    const auto* w = static_cast<const Element*>(c.w.data);
    auto* y = static_cast<Element*>(c.y.data);
    const std::int64_t cg = c.cin / c.groups, taps = c.kh * c.kw;
    std::vector<char> bad(static_cast<std::size_t>(c.cout * taps), 0);
    bool any = false;
    for (std::int64_t o = 0; o < c.cout; ++o)
        for (std::int64_t ci = 0; ci < cg; ++ci)
            for (std::int64_t t = 0; t < taps; ++t)
                if (is_nonfinite(w[(o * cg + ci) * taps + t])) bad[static_cast<std::size_t>(o * taps + t)] = 1, any = true;
    if (!any) return;
    // Which taps of each output row and column fall into the padding.
    std::vector<char> row_pad(static_cast<std::size_t>(c.oh * c.kh)), col_pad(static_cast<std::size_t>(c.ow * c.kw));
    for (std::int64_t i = 0; i < c.oh; ++i)
        for (std::int64_t a = 0; a < c.kh; ++a) {
            const std::int64_t r = i * c.sh + a * c.dh - c.top;
            row_pad[static_cast<std::size_t>(i * c.kh + a)] = r < 0 || r >= c.h;
        }
    for (std::int64_t j = 0; j < c.ow; ++j)
        for (std::int64_t b = 0; b < c.kw; ++b) {
            const std::int64_t col = j * c.sw + b * c.dw - c.left;
            col_pad[static_cast<std::size_t>(j * c.kw + b)] = col < 0 || col >= c.wd;
        }
    const Element nan = from_f32<Element>(NAN);
#pragma omp parallel for schedule(static)
    for (std::int64_t no = 0; no < c.n * c.cout; ++no) {
        const std::int64_t o = no % c.cout;
        const char* bad_o = bad.data() + o * taps;
        bool channel_bad = false;
        for (std::int64_t t = 0; t < taps; ++t) channel_bad = channel_bad || bad_o[t];
        if (!channel_bad) continue;
        Element* yo = y + no * c.oh * c.ow;
        for (std::int64_t i = 0; i < c.oh; ++i)
            for (std::int64_t j = 0; j < c.ow; ++j) {
                bool hit = false;
                for (std::int64_t a = 0; a < c.kh && !hit; ++a)
                    for (std::int64_t b = 0; b < c.kw && !hit; ++b)
                        hit = bad_o[a * c.kw + b] &&
                              (row_pad[static_cast<std::size_t>(i * c.kh + a)] || col_pad[static_cast<std::size_t>(j * c.kw + b)]);
                if (hit) yo[i * c.ow + j] = nan;
            }
    }
}

// Room for either plan: the fp32 one is taken per call when x holds a non-finite value.
inline std::uint64_t conv2d_workspace_bytes(const Conv2dCall& c) {
    return std::max(conv2d_plan(c).bytes, conv2d_plan(c, true).bytes);
}

inline int run_conv2d(const hb_call* call, const Conv2dCall& c) {
    return guarded(call, [&] {
        const Conv2dPlan& native = conv2d_plan(c);
        const Conv2dPlan& plan = !native.via_f32 && has_nonfinite_half(c.x) ? conv2d_plan(c, true) : native;
        if (plan.bytes && (!call->workspace || call->workspace_bytes < plan.bytes))
            return hb_fail(call, 4, "the convolution needs the workspace from hapbench_workspace_bytes");
        char* ws = static_cast<char*>(call->workspace);
        void *x = c.x.data, *w = c.w.data, *bias = c.bias.data, *y = c.y.data;
        if (plan.via_f32) {
            x = ws + plan.f32.offsets[0], w = ws + plan.f32.offsets[1], bias = ws + plan.f32.offsets[2];
            y = ws + plan.f32.offsets[3];
            widen_to_f32(c.x, static_cast<float*>(x));
            widen_to_f32(c.w, static_cast<float*>(w));
            widen_to_f32(c.bias, static_cast<float*>(bias));
        }
        dnnl::stream& stream = cpu_stream();
        const dnnl::memory src = input_memory(plan.src, x, ws, stream);
        const dnnl::memory weights = input_memory(plan.weights, w, ws, stream);
        const dnnl::memory dst = output_memory(plan.dst, y, ws);
        plan.primitive.execute(stream, {{DNNL_ARG_SRC, src},
                                        {DNNL_ARG_WEIGHTS, weights},
                                        {DNNL_ARG_BIAS, dnnl::memory(plan.bias, cpu_engine(), bias)},
                                        {DNNL_ARG_DST, dst}});
        finish_output(plan.dst, dst, y, stream);
        stream.wait();
        if (plan.via_f32) narrow_or_copy_from_f32(static_cast<const float*>(y), c.y);
        with_float_element(c.x.dtype, [&](auto element) { nan_where_padding_meets_nonfinite_weights<decltype(element)>(c); });
        return 0;
    });
}

}  // namespace hb::baseline

#pragma GCC visibility pop
