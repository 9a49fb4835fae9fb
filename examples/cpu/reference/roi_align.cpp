// Reference roi_align (torchvision's ROIAlign): x [B, C, H, W], boxes [K, 5] rows (batch
// index, x0, y0, x1, y1), outputHeight, outputWidth, spatial_scale, sampling_ratio, aligned;
// y [K, C, oh, ow] in x's dtype (float32 or float16, boxes too). Per box: start = box *
// scale - (aligned ? 0.5 : 0), size = end - start (at least 1 when not aligned), bin = size /
// bins, samples per bin and axis = sampling_ratio > 0 ? sampling_ratio : ceil(size / bins).
// Each sample is bilinear: 0 outside [-1, H] x [-1, W], coordinates clamped at 0, the last
// row/column repeated; y = the bin's sum / max(samples, 1). fp32; OpenMP over (box, block of
// 16 channels) pairs, each box's sample taps and weights listed once per pair.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load(const hb_tensor& t, int64_t i) {
    if (t.dtype == HB_FLOAT16) return hb_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
    return static_cast<const float*>(t.data)[i];
}

void store(const hb_tensor& t, int64_t i, float v) {
    if (t.dtype == HB_FLOAT16) static_cast<uint16_t*>(t.data)[i] = hb_f32_to_f16(v);
    else static_cast<float*>(t.data)[i] = v;
}

// The four taps and weights of one bilinear sample, appended to the lists (nothing for a
// sample outside [-1, H] x [-1, W], which adds 0); the four weights sum over the bin later.
void add_sample(int64_t h, int64_t w, float yy, float xx, std::vector<int64_t>& offsets, std::vector<float>& weights) {
    if (yy < -1.f || yy > static_cast<float>(h) || xx < -1.f || xx > static_cast<float>(w)) return;
    yy = std::max(yy, 0.f);
    xx = std::max(xx, 0.f);
    int64_t y_low = static_cast<int64_t>(yy), x_low = static_cast<int64_t>(xx), y_high, x_high;
    if (y_low >= h - 1) y_high = y_low = h - 1, yy = static_cast<float>(y_low);
    else y_high = y_low + 1;
    if (x_low >= w - 1) x_high = x_low = w - 1, xx = static_cast<float>(x_low);
    else x_high = x_low + 1;
    const float ly = yy - static_cast<float>(y_low), lx = xx - static_cast<float>(x_low);
    const float hy = 1.f - ly, hx = 1.f - lx;
    offsets.insert(offsets.end(), {y_low * w + x_low, y_low * w + x_high, y_high * w + x_low, y_high * w + x_high});
    weights.insert(weights.end(), {hy * hx, hy * lx, ly * hx, ly * lx});
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* b_arg = hb_input(call, "boxes");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !b_arg || !y_arg) return hb_fail(call, 1, "roi_align: expected inputs `x`, `boxes` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& boxes = b_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&boxes) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "roi_align: only contiguous tensors are supported");
    if ((x.dtype != HB_FLOAT32 && x.dtype != HB_FLOAT16) || boxes.dtype != x.dtype || y.dtype != x.dtype)
        return hb_fail(call, 2, "roi_align: x, boxes and y must all be float32 or all float16");
    if (x.rank != 4 || boxes.rank != 2 || boxes.shape[1] != 5 || y.rank != 4 || y.shape[0] != boxes.shape[0] ||
        y.shape[1] != x.shape[1])
        return hb_fail(call, 2, "roi_align: x [B, C, H, W], boxes [K, 5], y [K, C, oh, ow] expected");
    const int64_t batch = x.shape[0], channels = x.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t count = boxes.shape[0], oh = y.shape[2], ow = y.shape[3];
    if (hb_attr_int(call, "outputHeight", 0) != oh || hb_attr_int(call, "outputWidth", 0) != ow)
        return hb_fail(call, 4, "roi_align: outputHeight and outputWidth must be y's last two dims");
    const float scale = static_cast<float>(hb_attr_float(call, "spatial_scale", 1.0));
    const int64_t ratio = hb_attr_int(call, "sampling_ratio", -1);
    const bool aligned = hb_attr_int(call, "aligned", 0) != 0;
    const float offset = aligned ? 0.5f : 0.f;
    for (int64_t k = 0; k < count; ++k) {
        const float b = load(boxes, k * 5);
        if (!(b >= 0.f) || !(b < static_cast<float>(batch))) return hb_fail(call, 2, "roi_align: a batch index lies outside [0, B)");
    }
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    // Tasks are (box, block of 16 channels): each lists its box's samples once (four taps
    // and weights each, the same for every channel) and applies them to its channels.
    constexpr int64_t block = 16;
    const int64_t blocks = (channels + block - 1) / block, bins = oh * ow;
#pragma omp parallel num_threads(threads)
    {
        std::vector<int64_t> offsets, first(static_cast<size_t>(bins + 1));
        std::vector<float> weights;
#pragma omp for schedule(dynamic)
        for (int64_t task = 0; task < count * blocks; ++task) {
            const int64_t k = task / blocks, c0 = (task % blocks) * block;
            const auto b = static_cast<int64_t>(load(boxes, k * 5));
            const float start_w = load(boxes, k * 5 + 1) * scale - offset, start_h = load(boxes, k * 5 + 2) * scale - offset;
            float roi_w = load(boxes, k * 5 + 3) * scale - offset - start_w, roi_h = load(boxes, k * 5 + 4) * scale - offset - start_h;
            if (!aligned) roi_w = std::max(roi_w, 1.f), roi_h = std::max(roi_h, 1.f);
            const float bin_h = roi_h / static_cast<float>(oh), bin_w = roi_w / static_cast<float>(ow);
            const int64_t grid_h = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(roi_h / static_cast<float>(oh)));
            const int64_t grid_w = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(roi_w / static_cast<float>(ow)));
            const float samples = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
            offsets.clear(), weights.clear();
            for (int64_t ph = 0; ph < oh; ++ph)
                for (int64_t pw = 0; pw < ow; ++pw) {
                    for (int64_t iy = 0; iy < grid_h; ++iy) {
                        const float yy = start_h + static_cast<float>(ph) * bin_h + (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(grid_h);
                        for (int64_t ix = 0; ix < grid_w; ++ix) {
                            const float xx = start_w + static_cast<float>(pw) * bin_w + (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(grid_w);
                            add_sample(h, w, yy, xx, offsets, weights);
                        }
                    }
                    first[static_cast<size_t>(ph * ow + pw + 1)] = static_cast<int64_t>(weights.size());
                }
            for (int64_t c = c0; c < std::min(channels, c0 + block); ++c) {
                const int64_t base = (b * channels + c) * h * w;
                for (int64_t bin = 0; bin < bins; ++bin) {
                    float sum = 0.f;
                    for (int64_t t = first[static_cast<size_t>(bin)]; t < first[static_cast<size_t>(bin + 1)]; ++t)
                        sum += weights[static_cast<size_t>(t)] * load(x, base + offsets[static_cast<size_t>(t)]);
                    store(y, (k * channels + c) * bins + bin, sum / samples);
                }
            }
        }
    }
    return 0;
}
