// Reference conv_3d_backprop_filter: x [N, Cin, D, H, W], grad [N, Cout, Do, Ho, Wo], strides
// [sd, sh, sw], pads [front, back, top, bottom, left, right], dilations [dd, dh, dw], groups,
// filter_size [Cout, Cin / groups, Kd, Kh, Kw]; y (that shape) = the weight gradient of the
// grouped, zero-padded 3-D cross-correlation:
//   y[o, c, a, b, e] = sum over n, t, u, v of grad[n, o, t, u, v] * x_pad[n, g(o) Cg + c,
//                      t sd + a dd - front, u sh + b dh - top, v sw + e dw - left]
// float16 or bfloat16, products in fp32. OpenMP over (o, c) pairs; per image the input
// channel is widened once into a zero-padded fp32 volume and the gradient channel into fp32,
// and each tap's products (exact in fp64) are added position by position into a [taps, Wo]
// array of fp64 sums (vectorizable), summed over Wo at the end: a sum over N Do Ho Wo positions that
// cancels to a small result keeps its accuracy. Padded positions are zeros that are
// multiplied (0 * inf = NaN, as the operator defines).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load(const hb_tensor& t, int64_t i) {
    const uint16_t bits = static_cast<const uint16_t*>(t.data)[i];
    return t.dtype == HB_FLOAT16 ? hb_f16_to_f32(bits) : hb_bf16_to_f32(bits);
}

void store(const hb_tensor& t, int64_t i, float v) {
    static_cast<uint16_t*>(t.data)[i] = t.dtype == HB_FLOAT16 ? hb_f32_to_f16(v) : hb_f32_to_bf16(v);
}

bool int_list(const hb_call* call, const char* name, int count, int64_t* out) {
    const hb_attr* a = hb_attr_find(call, name);
    if (!a || a->type != HB_ATTR_INT_LIST || a->count != count) return false;
    for (int i = 0; i < count; ++i) out[i] = a->ints[i];
    return true;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* g_arg = hb_input(call, "grad");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !g_arg || !y_arg) return hb_fail(call, 1, "conv_3d_backprop_filter: expected inputs `x`, `grad` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& grad = g_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&grad) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "conv_3d_backprop_filter: only contiguous tensors are supported");
    if ((x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16) || grad.dtype != x.dtype || y.dtype != x.dtype)
        return hb_fail(call, 2, "conv_3d_backprop_filter: x, grad and y must all be float16 or all bfloat16");
    if (x.rank != 5 || grad.rank != 5 || y.rank != 5 || grad.shape[0] != x.shape[0] || y.shape[0] != grad.shape[1])
        return hb_fail(call, 2, "conv_3d_backprop_filter: x [N, Cin, D, H, W], grad [N, Cout, Do, Ho, Wo], y [Cout, Cin/groups, Kd, Kh, Kw] expected");
    int64_t s[3], p[6], d[3];
    if (!int_list(call, "strides", 3, s) || !int_list(call, "pads", 6, p) || !int_list(call, "dilations", 3, d))
        return hb_fail(call, 4, "conv_3d_backprop_filter: strides [3], pads [6] and dilations [3] expected");
    const int64_t groups = hb_attr_int(call, "groups", 1);
    const int64_t n = x.shape[0], cin = x.shape[1], cout = grad.shape[1];
    if (groups < 1 || cin % groups || cout % groups || y.shape[1] != cin / groups)
        return hb_fail(call, 4, "conv_3d_backprop_filter: groups must divide Cin and Cout, and y be [Cout, Cin/groups, ...]");
    const int64_t in[3] = {x.shape[2], x.shape[3], x.shape[4]};
    const int64_t out[3] = {grad.shape[2], grad.shape[3], grad.shape[4]};
    const int64_t k[3] = {y.shape[2], y.shape[3], y.shape[4]};
    for (int a = 0; a < 3; ++a) {
        if (s[a] < 1 || d[a] < 1) return hb_fail(call, 4, "conv_3d_backprop_filter: strides and dilations must be at least 1");
        if (out[a] != (in[a] + p[2 * a] + p[2 * a + 1] - d[a] * (k[a] - 1) - 1) / s[a] + 1)
            return hb_fail(call, 2, "conv_3d_backprop_filter: grad's size is not the forward convolution's output size");
    }
    const int64_t cg = cin / groups, og = cout / groups;
    const int64_t taps = k[0] * k[1] * k[2];
    // x's channel is widened once per image into a zero-padded fp32 volume whose rows are
    // split by column phase (column k * sw + ph at [ph][k]), so that every tap's products run
    // over a contiguous stretch whatever the stride; grad's channel is widened once per image.
    const int64_t dp = (out[0] - 1) * s[0] + (k[0] - 1) * d[0] + 1, hp = (out[1] - 1) * s[1] + (k[1] - 1) * d[1] + 1;
    const int64_t width = std::max(p[4] + in[2], (out[2] - 1) * s[2] + (k[2] - 1) * d[2] + 1);
    const int64_t phase_len = (width + s[2] - 1) / s[2], row_len = phase_len * s[2];
    const int64_t positions = out[0] * out[1] * out[2];
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        std::vector<float> volume(static_cast<size_t>(dp * hp * row_len)), g(static_cast<size_t>(positions));
        std::vector<double> sums(static_cast<size_t>(taps * out[2]));
#pragma omp for schedule(dynamic)
        for (int64_t oc = 0; oc < cout * cg; ++oc) {
            const int64_t o = oc / cg, c = oc % cg, channel = (o / og) * cg + c;
            std::fill(sums.begin(), sums.end(), 0.0);
            for (int64_t image = 0; image < n; ++image) {
                std::fill(volume.begin(), volume.end(), 0.f);
                for (int64_t zd = 0; zd < in[0]; ++zd)
                    for (int64_t zh = 0; zh < in[1]; ++zh) {
                        const int64_t vd = zd + p[0], vh = zh + p[2];
                        if (vd >= dp || vh >= hp) continue;  // rows no tap reaches
                        float* row = volume.data() + (vd * hp + vh) * row_len;
                        const int64_t x_base = (((image * cin + channel) * in[0] + zd) * in[1] + zh) * in[2];
                        for (int64_t v = 0; v < in[2]; ++v) {
                            const int64_t col = p[4] + v;
                            if (col < width) row[(col % s[2]) * phase_len + col / s[2]] = load(x, x_base + v);
                        }
                    }
                const int64_t grad_base = (image * cout + o) * positions;
                for (int64_t q = 0; q < positions; ++q) g[static_cast<size_t>(q)] = load(grad, grad_base + q);
                for (int64_t t = 0; t < out[0]; ++t)
                    for (int64_t u = 0; u < out[1]; ++u) {
                        const float* gr = g.data() + (t * out[1] + u) * out[2];
                        for (int64_t a = 0; a < k[0]; ++a)
                            for (int64_t b = 0; b < k[1]; ++b) {
                                const float* row = volume.data() + ((t * s[0] + a * d[0]) * hp + u * s[1] + b * d[1]) * row_len;
                                for (int64_t e = 0; e < k[2]; ++e) {
                                    const float* src = row + ((e * d[2]) % s[2]) * phase_len + (e * d[2]) / s[2];
                                    double* acc = sums.data() + ((a * k[1] + b) * k[2] + e) * out[2];
                                    for (int64_t v = 0; v < out[2]; ++v) acc[v] += static_cast<double>(gr[v]) * src[v];
                                }
                            }
                    }
            }
            for (int64_t tap = 0; tap < taps; ++tap) {
                double total = 0.0;
                for (int64_t v = 0; v < out[2]; ++v) total += sums[static_cast<size_t>(tap * out[2] + v)];
                store(y, oc * taps + tap, static_cast<float>(total));
            }
        }
    }
    return 0;
}
