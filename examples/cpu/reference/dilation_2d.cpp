// Reference dilation_2d (float16): grey-scale morphological dilation,
//   y[b, i, j, c] = max over a < fh, e < fw of (x_pad[b, i sh + a rh, j sw + e rw, c] + filter[a, e, c])
// with data_format NHWC (x [B, H, W, C], filter [fh, fw, C], strides/rates [1, h, w, 1]) or
// NCHW (x [B, C, H, W], filter [C, fh, fw], strides/rates [1, 1, h, w]). The padding value
// is -inf and is added to the filter like any input (-inf + inf = NaN). padding_mode SAME
// (TensorFlow: Ho = ceil(H / sh), the smaller half of the padding on top), VALID (none) or
// EXPLICIT (pads [top, bottom, left, right]); y's shape gives the output size. The maximum
// propagates NaN. fp32 arithmetic, one rounding to fp16; OpenMP over output rows, each input
// row they read widened once into an fp32 line padded with -inf.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

bool int_list(const hb_call* call, const char* name, int count, int64_t* out) {
    const hb_attr* a = hb_attr_find(call, name);
    if (!a || a->type != HB_ATTR_INT_LIST || a->count != count) return false;
    for (int i = 0; i < count; ++i) out[i] = a->ints[i];
    return true;
}

// The leading pad along one axis.
int64_t leading_pad(const char* mode, int64_t in, int64_t out, int64_t eff, int64_t stride, int64_t explicit_pad) {
    if (std::strcmp(mode, "SAME") == 0) return std::max<int64_t>((out - 1) * stride + eff - in, 0) / 2;
    if (std::strcmp(mode, "EXPLICIT") == 0) return explicit_pad;
    return 0;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* f_arg = hb_input(call, "filter");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !f_arg || !y_arg) return hb_fail(call, 1, "dilation_2d: expected inputs `x`, `filter` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& f = f_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&f) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "dilation_2d: only contiguous tensors are supported");
    if (x.dtype != HB_FLOAT16 || f.dtype != HB_FLOAT16 || y.dtype != HB_FLOAT16)
        return hb_fail(call, 2, "dilation_2d: x, filter and y must be float16");
    if (x.rank != 4 || f.rank != 3 || y.rank != 4) return hb_fail(call, 2, "dilation_2d: x and y 4-D, filter 3-D expected");
    const char* format = hb_attr_string(call, "data_format", "NHWC");
    const char* mode = hb_attr_string(call, "padding_mode", "SAME");
    const bool nchw = std::strcmp(format, "NCHW") == 0;
    if (!nchw && std::strcmp(format, "NHWC") != 0) return hb_fail(call, 4, "dilation_2d: data_format must be NHWC or NCHW");
    if (std::strcmp(mode, "SAME") != 0 && std::strcmp(mode, "VALID") != 0 && std::strcmp(mode, "EXPLICIT") != 0)
        return hb_fail(call, 4, "dilation_2d: padding_mode must be SAME, VALID or EXPLICIT");
    int64_t strides[4], rates[4], pads[4] = {0, 0, 0, 0};
    if (!int_list(call, "strides", 4, strides) || !int_list(call, "rates", 4, rates))
        return hb_fail(call, 4, "dilation_2d: strides and rates must list four integers");
    if (hb_attr_find(call, "pads") && !int_list(call, "pads", 4, pads))
        return hb_fail(call, 4, "dilation_2d: pads must list four integers");
    const int ah = nchw ? 2 : 1;
    const int64_t batch = x.shape[0];
    const int64_t channels = nchw ? x.shape[1] : x.shape[3];
    const int64_t h = nchw ? x.shape[2] : x.shape[1], w = nchw ? x.shape[3] : x.shape[2];
    const int64_t fh = nchw ? f.shape[1] : f.shape[0], fw = nchw ? f.shape[2] : f.shape[1];
    const int64_t oh = nchw ? y.shape[2] : y.shape[1], ow = nchw ? y.shape[3] : y.shape[2];
    if ((nchw ? f.shape[0] : f.shape[2]) != channels || (nchw ? y.shape[1] : y.shape[3]) != channels || y.shape[0] != batch)
        return hb_fail(call, 2, "dilation_2d: x, filter and y disagree on the batch or channel count");
    const int64_t sh = strides[ah], sw = strides[ah + 1], rh = rates[ah], rw = rates[ah + 1];
    if (sh < 1 || sw < 1 || rh < 1 || rw < 1) return hb_fail(call, 4, "dilation_2d: strides and rates must be at least 1");
    const int64_t top = leading_pad(mode, h, oh, (fh - 1) * rh + 1, sh, pads[0]);
    const int64_t left = leading_pad(mode, w, ow, (fw - 1) * rw + 1, sw, pads[2]);

    const auto* xs = static_cast<const uint16_t*>(x.data);
    const auto* fs = static_cast<const uint16_t*>(f.data);
    auto* ys = static_cast<uint16_t*>(y.data);
    const float pad = -std::numeric_limits<float>::infinity();
    // Every output row reads whole input rows: each is widened once into an fp32 line with
    // -inf in the padding columns, so the inner loops run over contiguous channels (NHWC) or
    // output columns (NCHW) without bounds checks.
    const int64_t line_width = std::max(left + w, (ow - 1) * sw + (fw - 1) * rw + 1);
    std::vector<float> filter(static_cast<size_t>(fh * fw * channels));
    for (size_t i = 0; i < filter.size(); ++i) filter[i] = hb_f16_to_f32(fs[i]);
    const int64_t rows = nchw ? batch * channels * oh : batch * oh;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        const int64_t per_column = nchw ? 1 : channels;
        std::vector<float> line(static_cast<size_t>(line_width * per_column));
        std::vector<float> best(static_cast<size_t>(ow * per_column));
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; ++row) {
            const int64_t i = row % oh, b = nchw ? row / (oh * channels) : row / oh, c = nchw ? (row / oh) % channels : 0;
            std::fill(best.begin(), best.end(), pad);
            for (int64_t a = 0; a < fh; ++a) {
                const int64_t r = i * sh + a * rh - top;
                std::fill(line.begin(), line.end(), pad);
                if (r >= 0 && r < h) {
                    const uint16_t* src = nchw ? xs + ((b * channels + c) * h + r) * w : xs + (b * h + r) * w * channels;
                    for (int64_t k = 0; k < w * per_column; ++k) line[static_cast<size_t>(left * per_column + k)] = hb_f16_to_f32(src[k]);
                }
                // A NaN, once met, stays: the comparison keeps it and lets it in.
                for (int64_t e = 0; e < fw; ++e) {
                    if (nchw) {  // along the output row
                        const float* in = line.data() + e * rw;
                        const float fv = filter[static_cast<size_t>((c * fh + a) * fw + e)];
                        float* out = best.data();
                        for (int64_t j = 0; j < ow; ++j) {
                            const float v = in[j * sw] + fv;
                            out[j] = (out[j] >= v || out[j] != out[j]) ? out[j] : v;
                        }
                        continue;
                    }
                    for (int64_t j = 0; j < ow; ++j) {  // along the channels of each output pixel
                        const float* in = line.data() + (j * sw + e * rw) * channels;
                        const float* fv = filter.data() + (a * fw + e) * channels;
                        float* out = best.data() + j * channels;
                        for (int64_t k = 0; k < channels; ++k) {
                            const float v = in[k] + fv[k];
                            out[k] = (out[k] >= v || out[k] != out[k]) ? out[k] : v;
                        }
                    }
                }
            }
            uint16_t* dst = nchw ? ys + ((b * channels + c) * oh + i) * ow : ys + (b * oh + i) * ow * channels;
            for (int64_t k = 0; k < ow * per_column; ++k) dst[k] = hb_f32_to_f16(best[static_cast<size_t>(k)]);
        }
    }
    return 0;
}
