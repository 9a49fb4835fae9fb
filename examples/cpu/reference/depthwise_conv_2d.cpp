// Reference depthwise_conv_2d: x [N, C, H, W], weight [C, Kh, Kw], bias [C], stride [sh, sw],
// padding [ph, pw] (both sides), dilation [dh, dw], groups = C; y [N, C, Ho, Wo] = bias[c] +
// the cross-correlation of channel c of x, zero-padded, with weight[c]; one dtype (float32,
// float16 or bfloat16). fp32, OpenMP over (image, channel, output row): each input row a
// tap row reads is widened once into a zero-padded fp32 line. Padded taps are multiplied
// like any other (0 * inf = NaN, as the operator defines).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load(const hb_tensor& t, int64_t i) {
    switch (t.dtype) {
        case HB_FLOAT16: return hb_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        case HB_BFLOAT16: return hb_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
        default: return static_cast<const float*>(t.data)[i];
    }
}

void store(const hb_tensor& t, int64_t i, float v) {
    switch (t.dtype) {
        case HB_FLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_f16(v); break;
        case HB_BFLOAT16: static_cast<uint16_t*>(t.data)[i] = hb_f32_to_bf16(v); break;
        default: static_cast<float*>(t.data)[i] = v; break;
    }
}

bool int_pair(const hb_call* call, const char* name, int64_t* out) {
    const hb_attr* a = hb_attr_find(call, name);
    if (!a || a->type != HB_ATTR_INT_LIST || a->count != 2) return false;
    out[0] = a->ints[0], out[1] = a->ints[1];
    return true;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* w_arg = hb_input(call, "weight");
    const hb_arg* b_arg = hb_input(call, "bias");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !w_arg || !b_arg || !y_arg || !b_arg->present)
        return hb_fail(call, 1, "depthwise_conv_2d: expected inputs `x`, `weight`, `bias` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& w = w_arg->tensors[0];
    const hb_tensor& bias = b_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&w) || !hb_is_contiguous(&bias) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "depthwise_conv_2d: only contiguous tensors are supported");
    if (x.dtype != HB_FLOAT32 && x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16)
        return hb_fail(call, 2, "depthwise_conv_2d: float32, float16 or bfloat16 expected");
    if (w.dtype != x.dtype || bias.dtype != x.dtype || y.dtype != x.dtype)
        return hb_fail(call, 2, "depthwise_conv_2d: x, weight, bias and y must share one dtype");
    if (x.rank != 4 || w.rank != 3 || y.rank != 4 || bias.rank != 1 || w.shape[0] != x.shape[1] ||
        bias.shape[0] != x.shape[1] || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1])
        return hb_fail(call, 2, "depthwise_conv_2d: x [N, C, H, W], weight [C, Kh, Kw], bias [C], y [N, C, Ho, Wo] expected");
    int64_t stride[2], padding[2], dilation[2];
    if (!int_pair(call, "stride", stride) || !int_pair(call, "padding", padding) || !int_pair(call, "dilation", dilation))
        return hb_fail(call, 4, "depthwise_conv_2d: stride, padding and dilation must each be two integers");
    if (hb_attr_int(call, "groups", 0) != x.shape[1]) return hb_fail(call, 4, "depthwise_conv_2d: groups must equal C");
    const int64_t n = x.shape[0], channels = x.shape[1], h = x.shape[2], wd = x.shape[3];
    const int64_t kh = w.shape[1], kw = w.shape[2], oh = y.shape[2], ow = y.shape[3];
    const int64_t sh = stride[0], sw = stride[1], ph = padding[0], pw = padding[1], dh = dilation[0], dw = dilation[1];
    if (sh < 1 || sw < 1 || dh < 1 || dw < 1) return hb_fail(call, 4, "depthwise_conv_2d: stride and dilation must be at least 1");
    if (oh != (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1 || ow != (wd + 2 * pw - dw * (kw - 1) - 1) / sw + 1)
        return hb_fail(call, 2, "depthwise_conv_2d: y's spatial size does not follow from x, the weight and the attributes");

    const int64_t line_width = std::max(pw + wd, (ow - 1) * sw + (kw - 1) * dw + 1);
    const int64_t tasks = n * channels * oh;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        std::vector<float> line(static_cast<size_t>(line_width), 0.f), acc(static_cast<size_t>(ow));
#pragma omp for schedule(static)
        for (int64_t task = 0; task < tasks; ++task) {
            const int64_t i = task % oh, plane = task / oh, c = plane % channels;
            std::fill(acc.begin(), acc.end(), 0.f);
            for (int64_t a = 0; a < kh; ++a) {
                const int64_t r = i * sh + a * dh - ph;
                std::fill(line.begin(), line.end(), 0.f);
                if (r >= 0 && r < h)
                    for (int64_t v = 0; v < wd; ++v) line[static_cast<size_t>(pw + v)] = load(x, (plane * h + r) * wd + v);
                for (int64_t b = 0; b < kw; ++b) {
                    const float t = load(w, (c * kh + a) * kw + b);
                    const float* src = line.data() + b * dw;
                    for (int64_t j = 0; j < ow; ++j) acc[static_cast<size_t>(j)] += t * src[j * sw];
                }
            }
            const float b = load(bias, c);
            for (int64_t j = 0; j < ow; ++j) store(y, (plane * oh + i) * ow + j, acc[static_cast<size_t>(j)] + b);
        }
    }
    return 0;
}
