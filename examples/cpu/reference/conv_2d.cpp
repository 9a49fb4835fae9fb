// Reference conv_2d: x [N, Cin, H, W], filter [Cout, Cin, Kh, Kw], bias [Cout], strides
// [sh, sw], pads [top, bottom, left, right], dilations [dh, dw]; y [N, Cout, Ho, Wo] =
// bias + the cross-correlation of x, zero-padded, with the filter; one dtype (float32,
// float16 or bfloat16) for all. Direct convolution in fp32, OpenMP over (image, block of 8
// output channels, output row): each input row a tap row reads is widened once into a
// zero-padded fp32 line and multiplied into the block's 8 accumulator rows. Padded taps are
// multiplied like any other (0 * inf = NaN, as the operator defines). Input channels are
// summed in groups of 32 whose partial sums are then added, which keeps fp32 rounding near
// that of a blocked GEMM on long reductions.
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

bool int_list(const hb_call* call, const char* name, int count, int64_t* out) {
    const hb_attr* a = hb_attr_find(call, name);
    if (!a || a->type != HB_ATTR_INT_LIST || a->count != count) return false;
    for (int i = 0; i < count; ++i) out[i] = a->ints[i];
    return true;
}

constexpr int64_t kBlock = 8;           // output channels per task
constexpr int64_t kChannelGroup = 32;   // input channels per partial sum

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* w_arg = hb_input(call, "filter");
    const hb_arg* b_arg = hb_input(call, "bias");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !w_arg || !b_arg || !y_arg || !b_arg->present)
        return hb_fail(call, 1, "conv_2d: expected inputs `x`, `filter`, `bias` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& w = w_arg->tensors[0];
    const hb_tensor& bias = b_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&w) || !hb_is_contiguous(&bias) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "conv_2d: only contiguous tensors are supported");
    if (x.dtype != HB_FLOAT32 && x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16)
        return hb_fail(call, 2, "conv_2d: float32, float16 or bfloat16 expected");
    if (w.dtype != x.dtype || bias.dtype != x.dtype || y.dtype != x.dtype)
        return hb_fail(call, 2, "conv_2d: x, filter, bias and y must share one dtype");
    if (x.rank != 4 || w.rank != 4 || y.rank != 4 || bias.rank != 1 || w.shape[1] != x.shape[1] ||
        bias.shape[0] != w.shape[0] || y.shape[0] != x.shape[0] || y.shape[1] != w.shape[0])
        return hb_fail(call, 2, "conv_2d: x [N, Cin, H, W], filter [Cout, Cin, Kh, Kw], bias [Cout], y [N, Cout, Ho, Wo] expected");
    int64_t strides[2], pads[4], dilations[2] = {1, 1};
    if (!int_list(call, "strides", 2, strides) || !int_list(call, "pads", 4, pads))
        return hb_fail(call, 4, "conv_2d: strides [sh, sw] and pads [top, bottom, left, right] expected");
    if (hb_attr_find(call, "dilations") && !int_list(call, "dilations", 2, dilations))
        return hb_fail(call, 4, "conv_2d: dilations must be [dh, dw]");
    const int64_t n = x.shape[0], cin = x.shape[1], h = x.shape[2], wd = x.shape[3];
    const int64_t cout = w.shape[0], kh = w.shape[2], kw = w.shape[3];
    const int64_t oh = y.shape[2], ow = y.shape[3];
    const int64_t sh = strides[0], sw = strides[1], dh = dilations[0], dw = dilations[1];
    const int64_t top = pads[0], left = pads[2];
    if (sh < 1 || sw < 1 || dh < 1 || dw < 1) return hb_fail(call, 4, "conv_2d: strides and dilations must be at least 1");
    if (oh != (h + pads[0] + pads[1] - dh * (kh - 1) - 1) / sh + 1 || ow != (wd + pads[2] + pads[3] - dw * (kw - 1) - 1) / sw + 1)
        return hb_fail(call, 2, "conv_2d: y's spatial size does not follow from x, the filter and the attributes");

    // The padded line spans every column a tap reads: [left zeros | W values | zeros].
    const int64_t line_width = std::max(left + wd, (ow - 1) * sw + (kw - 1) * dw + 1);
    const int64_t blocks = (cout + kBlock - 1) / kBlock;
    const int64_t tasks = n * blocks * oh;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        std::vector<float> line(static_cast<size_t>(line_width), 0.f);
        std::vector<float> partial(static_cast<size_t>(kBlock * ow)), total(static_cast<size_t>(kBlock * ow));
#pragma omp for schedule(static)
        for (int64_t task = 0; task < tasks; ++task) {
            const int64_t i = task % oh, block = (task / oh) % blocks, image = task / (oh * blocks);
            const int64_t o0 = block * kBlock, count = std::min(kBlock, cout - o0);
            std::fill(total.begin(), total.end(), 0.f);
            for (int64_t c0 = 0; c0 < cin; c0 += kChannelGroup) {
                std::fill(partial.begin(), partial.end(), 0.f);
                for (int64_t c = c0; c < std::min(cin, c0 + kChannelGroup); ++c)
                    for (int64_t a = 0; a < kh; ++a) {
                        const int64_t r = i * sh + a * dh - top;
                        std::fill(line.begin(), line.end(), 0.f);
                        if (r >= 0 && r < h) {
                            const int64_t base = ((image * cin + c) * h + r) * wd;
                            for (int64_t v = 0; v < wd; ++v) line[static_cast<size_t>(left + v)] = load(x, base + v);
                        }
                        for (int64_t b = 0; b < kw; ++b) {
                            float taps[kBlock] = {};
                            for (int64_t o = 0; o < count; ++o) taps[o] = load(w, (((o0 + o) * cin + c) * kh + a) * kw + b);
                            const float* src = line.data() + b * dw;
                            for (int64_t o = 0; o < count; ++o) {
                                float* acc = partial.data() + o * ow;
                                const float t = taps[o];
                                if (sw == 1)
                                    for (int64_t j = 0; j < ow; ++j) acc[j] += t * src[j];
                                else
                                    for (int64_t j = 0; j < ow; ++j) acc[j] += t * src[j * sw];
                            }
                        }
                    }
                for (int64_t k = 0; k < count * ow; ++k) total[static_cast<size_t>(k)] += partial[static_cast<size_t>(k)];
            }
            for (int64_t o = 0; o < count; ++o) {
                const float b = load(bias, o0 + o);
                const int64_t base = ((image * cout + o0 + o) * oh + i) * ow;
                for (int64_t j = 0; j < ow; ++j) store(y, base + j, total[static_cast<size_t>(o * ow + j)] + b);
            }
        }
    }
    return 0;
}
