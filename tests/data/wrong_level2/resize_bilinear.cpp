// WRONG on purpose (tests/integration/test_wrong_level2_resize.cpp): align_corners is ignored,
// every case maps coordinates as align_corners=false does (in / out, or 1 / scale_factor, with
// half-pixel offsets), so align_corners=true cases sample shifted positions.
// Reference resize_bilinear: torch.nn.functional.interpolate(mode="bilinear") on x [N, C, H, W]
// into y [N, C, Ho, Wo] (float32, float16 or bfloat16; math in fp32). The output size is y's
// shape; the attributes decide the coordinates, per dim (PyTorch's formulas, in fp32):
//   scale  = align_corners ? (out > 1 ? (in - 1) / (out - 1) : 0)
//          : scale_factor given ? 1 / scale_factor : in / out
//   source = align_corners ? scale * o : max(scale * (o + 0.5) - 0.5, 0)
//   i0 = min(floor(source), in - 1), i1 = i0 + (i0 < in - 1), l1 = clamp(source - i0, 0, 1),
//   l0 = 1 - l1; a dim with out == in is a copy (i0 = i1 = o, l0 = 1, l1 = 0).
//   y = (x[i0h][i0w] * l0w + x[i0h][i1w] * l1w) * l0h + (x[i1h][i0w] * l0w + x[i1h][i1w] * l1w) * l1h
// Both taps are always multiplied, also at weight 0 (an infinite value there gives NaN, as
// in PyTorch).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

struct Fp32 {
    using Storage = float;
    static float load(float v) { return v; }
    static float store(float v) { return v; }
};
struct Fp16 {
    using Storage = uint16_t;
    static float load(uint16_t v) { return hb_f16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_f16(v); }
};
struct Bf16 {
    using Storage = uint16_t;
    static float load(uint16_t v) { return hb_bf16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_bf16(v); }
};

struct Taps {
    std::vector<int64_t> i0, i1;
    std::vector<float> l0, l1;
};

Taps axis_taps(int64_t in, int64_t out, bool align_corners, bool by_scale, double factor) {
    Taps t{std::vector<int64_t>(out), std::vector<int64_t>(out), std::vector<float>(out), std::vector<float>(out)};
    float scale;
    if (align_corners) scale = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
    else if (by_scale) scale = static_cast<float>(1.0 / factor);
    else scale = static_cast<float>(in) / static_cast<float>(out);
    for (int64_t o = 0; o < out; ++o) {
        if (in == out) {
            t.i0[o] = t.i1[o] = o;
            t.l0[o] = 1.f;
            t.l1[o] = 0.f;
            continue;
        }
        float source = align_corners ? scale * static_cast<float>(o) : scale * (static_cast<float>(o) + 0.5f) - 0.5f;
        if (source < 0.f) source = 0.f;
        const int64_t i0 = std::min(static_cast<int64_t>(std::floor(source)), in - 1);
        const float l1 = std::min(std::max(source - static_cast<float>(i0), 0.f), 1.f);
        t.i0[o] = i0;
        t.i1[o] = i0 + (i0 < in - 1 ? 1 : 0);
        t.l1[o] = l1;
        t.l0[o] = 1.f - l1;
    }
    return t;
}

template <typename Type>
void resize(const hb_tensor& x, const hb_tensor& y, const Taps& th, const Taps& tw, int threads) {
    using S = typename Type::Storage;
    const int64_t h = x.shape[2], w = x.shape[3], oh = y.shape[2], ow = y.shape[3];
    const int64_t rows = x.shape[0] * x.shape[1] * oh;
    const auto* xs = static_cast<const S*>(x.data);
    auto* ys = static_cast<S*>(y.data);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t plane = row / oh, oy = row % oh;
        const S* r0 = xs + (plane * h + th.i0[oy]) * w;
        const S* r1 = xs + (plane * h + th.i1[oy]) * w;
        const float h0 = th.l0[oy], h1 = th.l1[oy];
        for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t a = tw.i0[ox], b = tw.i1[ox];
            const float w0 = tw.l0[ox], w1 = tw.l1[ox];
            const float top = Type::load(r0[a]) * w0 + Type::load(r0[b]) * w1;
            const float bottom = Type::load(r1[a]) * w0 + Type::load(r1[b]) * w1;
            ys[row * ow + ox] = Type::store(top * h0 + bottom * h1);
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg || x_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "resize_bilinear: expected input x and output y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "resize_bilinear: only contiguous tensors are supported");
    if (x.rank != 4 || y.rank != 4 || y.dtype != x.dtype || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1])
        return hb_fail(call, 2, "resize_bilinear: x [N, C, H, W] and y [N, C, Ho, Wo] of one dtype");
    const bool align = false;  // the bug: align_corners never read
    // scale_factor matters only with align_corners false: 1 / scale instead of in / out.
    bool by_scale = false;
    double scale_h = 0, scale_w = 0;
    const hb_attr* s = hb_attr_find(call, "scale_factor");
    if (s && s->count == 2 && (s->type == HB_ATTR_FLOAT_LIST || s->type == HB_ATTR_INT_LIST)) {
        by_scale = true;
        scale_h = s->type == HB_ATTR_FLOAT_LIST ? s->floats[0] : static_cast<double>(s->ints[0]);
        scale_w = s->type == HB_ATTR_FLOAT_LIST ? s->floats[1] : static_cast<double>(s->ints[1]);
    }
    const Taps th = axis_taps(x.shape[2], y.shape[2], align, by_scale, scale_h);
    const Taps tw = axis_taps(x.shape[3], y.shape[3], align, by_scale, scale_w);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: resize<Fp32>(x, y, th, tw, threads); return 0;
        case HB_FLOAT16: resize<Fp16>(x, y, th, tw, threads); return 0;
        case HB_BFLOAT16: resize<Bf16>(x, y, th, tw, threads); return 0;
        default: return hb_fail(call, 2, "resize_bilinear: dtype must be float32, float16 or bfloat16");
    }
}
