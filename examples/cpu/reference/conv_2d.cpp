// Reference conv_2d: x [N, Cin, H, W], filter [Cout, Cin, Kh, Kw], bias [Cout], strides
// [sh, sw], pads [top, bottom, left, right], dilations [dh, dw]; y [N, Cout, Ho, Wo] =
// bias + the cross-correlation of x, zero-padded, with the filter; one dtype (float32,
// float16 or bfloat16) for all. im2col and a plain GEMM loop: the filter is widened once
// into the workspace (fp32); OpenMP over (image, block of output rows, block of 64 output
// channels), each task gathering its rows' K = Cin Kh Kw input taps into a [K, positions]
// fp32 column buffer from input rows widened once into zero-padded lines (padded taps are
// zeros, multiplied like any other: 0 * inf = NaN, as the operator defines) and adding the
// products of every output row over K in fp64 (exact products of fp32 values): a long sum
// that cancels to a small result keeps its accuracy (an fp32 sum of thousands of taps can
// miss such a result by more than the gate's 10 tau), at half the FMA rate.
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

constexpr int64_t kChannelBlock = 64;  // output channels per task
constexpr int64_t kPositions = 64;     // output positions per task, at least (whole rows)

struct Shape {
    const hb_tensor *x, *w, *bias, *y;
    int64_t n, cin, cout, h, wd, kh, kw, oh, ow, sh, sw, dh, dw, top, left;
};

const char* read_call(const hb_call* call, Shape& s) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* w_arg = hb_input(call, "filter");
    const hb_arg* b_arg = hb_input(call, "bias");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !w_arg || !b_arg || !y_arg || !b_arg->present) return "conv_2d: expected inputs `x`, `filter`, `bias` and output `y`";
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& w = w_arg->tensors[0];
    const hb_tensor& bias = b_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&w) || !hb_is_contiguous(&bias) || !hb_is_contiguous(&y))
        return "conv_2d: only contiguous tensors are supported";
    if (x.dtype != HB_FLOAT32 && x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16) return "conv_2d: float32, float16 or bfloat16 expected";
    if (w.dtype != x.dtype || bias.dtype != x.dtype || y.dtype != x.dtype) return "conv_2d: x, filter, bias and y must share one dtype";
    if (x.rank != 4 || w.rank != 4 || y.rank != 4 || bias.rank != 1 || w.shape[1] != x.shape[1] ||
        bias.shape[0] != w.shape[0] || y.shape[0] != x.shape[0] || y.shape[1] != w.shape[0])
        return "conv_2d: x [N, Cin, H, W], filter [Cout, Cin, Kh, Kw], bias [Cout], y [N, Cout, Ho, Wo] expected";
    int64_t strides[2], pads[4], dilations[2] = {1, 1};
    if (!int_list(call, "strides", 2, strides) || !int_list(call, "pads", 4, pads))
        return "conv_2d: strides [sh, sw] and pads [top, bottom, left, right] expected";
    if (hb_attr_find(call, "dilations") && !int_list(call, "dilations", 2, dilations)) return "conv_2d: dilations must be [dh, dw]";
    s = Shape{&x, &w, &bias, &y, x.shape[0], x.shape[1], w.shape[0], x.shape[2], x.shape[3], w.shape[2], w.shape[3],
              y.shape[2], y.shape[3], strides[0], strides[1], dilations[0], dilations[1], pads[0], pads[2]};
    if (s.sh < 1 || s.sw < 1 || s.dh < 1 || s.dw < 1) return "conv_2d: strides and dilations must be at least 1";
    if (s.oh != (s.h + pads[0] + pads[1] - s.dh * (s.kh - 1) - 1) / s.sh + 1 ||
        s.ow != (s.wd + pads[2] + pads[3] - s.dw * (s.kw - 1) - 1) / s.sw + 1)
        return "conv_2d: y's spatial size does not follow from x, the filter and the attributes";
    return nullptr;
}

}  // namespace

// The fp32 copy of the filter.
extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Shape s;
    if (read_call(call, s)) return 0;  // the kernel reports the error
    return static_cast<uint64_t>(s.cout * s.cin * s.kh * s.kw) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Shape s;
    if (const char* error = read_call(call, s)) return hb_fail(call, 2, error);
    const int64_t k_total = s.cin * s.kh * s.kw;
    if (!call->workspace || call->workspace_bytes < static_cast<uint64_t>(s.cout * k_total) * sizeof(float))
        return hb_fail(call, 4, "conv_2d: the workspace from hapbench_workspace_bytes is missing");
    float* w32 = static_cast<float*>(call->workspace);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < s.cout * k_total; ++i) w32[i] = load(*s.w, i);

    const int64_t rows = std::min(s.oh, std::max<int64_t>(1, (kPositions + s.ow - 1) / s.ow));  // output rows per task
    const int64_t row_blocks = (s.oh + rows - 1) / rows, channel_blocks = (s.cout + kChannelBlock - 1) / kChannelBlock;
    const int64_t tasks = s.n * row_blocks * channel_blocks;
#pragma omp parallel num_threads(threads)
    {
        std::vector<float> col(static_cast<size_t>(k_total * rows * s.ow));
        std::vector<float> line(static_cast<size_t>(std::max(s.left + s.wd, (s.ow - 1) * s.sw + (s.kw - 1) * s.dw + 1)));
        std::vector<double> total(static_cast<size_t>(rows * s.ow));
#pragma omp for schedule(dynamic)
        for (int64_t task = 0; task < tasks; ++task) {
            const int64_t cb = task % channel_blocks, rb = (task / channel_blocks) % row_blocks, image = task / (channel_blocks * row_blocks);
            const int64_t i0 = rb * rows, i1 = std::min(s.oh, i0 + rows), positions = (i1 - i0) * s.ow;
            // col[k][p]: tap k = (c, a, b) of output position p of rows [i0, i1), copied from
            // the input row widened once into a zero-padded line.
            for (int64_t c = 0; c < s.cin; ++c)
                for (int64_t i = i0; i < i1; ++i)
                    for (int64_t a = 0; a < s.kh; ++a) {
                        const int64_t r = i * s.sh + a * s.dh - s.top;
                        std::fill(line.begin(), line.end(), 0.f);
                        if (r >= 0 && r < s.h) {
                            const int64_t base = ((image * s.cin + c) * s.h + r) * s.wd;
                            for (int64_t v = 0; v < s.wd; ++v) line[static_cast<size_t>(s.left + v)] = load(*s.x, base + v);
                        }
                        for (int64_t b = 0; b < s.kw; ++b) {
                            float* dst = col.data() + ((c * s.kh + a) * s.kw + b) * positions + (i - i0) * s.ow;
                            const float* src = line.data() + b * s.dw;
                            for (int64_t j = 0; j < s.ow; ++j) dst[j] = src[j * s.sw];
                        }
                    }
            for (int64_t o = cb * kChannelBlock; o < std::min(s.cout, (cb + 1) * kChannelBlock); ++o) {
                const float* wo = w32 + o * k_total;
                std::fill(total.begin(), total.begin() + positions, 0.0);
                double* acc = total.data();
                for (int64_t k = 0; k < k_total; ++k) {
                    const float wv = wo[k];
                    const float* src = col.data() + k * positions;
                    for (int64_t p = 0; p < positions; ++p) acc[p] += static_cast<double>(wv) * src[p];
                }
                const double b = load(*s.bias, o);
                const int64_t out = ((image * s.cout + o) * s.oh + i0) * s.ow;
                for (int64_t p = 0; p < positions; ++p) store(*s.y, out + p, static_cast<float>(total[static_cast<size_t>(p)] + b));
            }
        }
    }
    return 0;
}
