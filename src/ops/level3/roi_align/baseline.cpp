// Baseline for roi_align: torchvision's CPU algorithm in plain C++ with OpenMP (oneDNN has no
// ROI align). Tasks are (box, block of 16 channels) pairs; each computes its box's sample
// taps and bilinear weights once, in fp32 (torchvision's pre_calc), and applies them to its
// channels, accumulating in fp32. fp16 is widened on load and rounded once on store. A tap
// of weight 0 is still multiplied (NaN and infinities propagate as in torchvision).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

struct RoiAlign {
    FlatTensor x, boxes, y;
    std::int64_t batch = 1, channels = 1, h = 1, w = 1, count = 0, oh = 1, ow = 1, sampling_ratio = -1;
    float scale = 1;
    bool aligned = false;
};

std::string views(const hb_call* call, RoiAlign& r) {
    std::string error = flat_view(hb_input(call, "x"), "input x", r.x);
    if (error.empty()) error = flat_view(hb_input(call, "boxes"), "input boxes", r.boxes);
    if (error.empty()) error = flat_view(hb_output(call, "y"), "output y", r.y);
    if (!error.empty()) return error;
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const hb_tensor& boxes = hb_input(call, "boxes")->tensors[0];
    const hb_tensor& y = hb_output(call, "y")->tensors[0];
    if (x.rank != 4 || boxes.rank != 2 || boxes.shape[1] != 5 || y.rank != 4 || y.shape[0] != boxes.shape[0] ||
        y.shape[1] != x.shape[1])
        return "roi_align: x [B, C, H, W], boxes [K, 5] and y [K, C, oh, ow] expected";
    if (r.boxes.dtype != r.x.dtype || r.y.dtype != r.x.dtype) return "roi_align: x, boxes and y must share one dtype";
    if (r.x.dtype != HB_FLOAT16 && r.x.dtype != HB_FLOAT32) return "roi_align: float16 or float32 expected";
    r.batch = x.shape[0], r.channels = x.shape[1], r.h = x.shape[2], r.w = x.shape[3];
    r.count = boxes.shape[0], r.oh = y.shape[2], r.ow = y.shape[3];
    r.scale = static_cast<float>(hb_attr_float(call, "spatial_scale", 1.0));
    r.sampling_ratio = hb_attr_int(call, "sampling_ratio", -1);
    r.aligned = hb_attr_int(call, "aligned", 0) != 0;
    return {};
}

struct Sample {
    std::int64_t offset[4];
    float weight[4];
};

template <typename Element>
int run(const hb_call* call, const RoiAlign& r) {
    const auto* x = static_cast<const Element*>(r.x.data);
    const auto* boxes = static_cast<const Element*>(r.boxes.data);
    auto* y = static_cast<Element*>(r.y.data);
    constexpr std::int64_t block = 16;
    const std::int64_t blocks = (r.channels + block - 1) / block;
    const std::int64_t bins = r.oh * r.ow, plane = r.h * r.w;
    bool bad_batch = false;
#pragma omp parallel
    {
        std::vector<Sample> samples;
        std::vector<std::int64_t> first(static_cast<std::size_t>(bins + 1));
#pragma omp for schedule(dynamic)
        for (std::int64_t task = 0; task < r.count * blocks; ++task) {
            const std::int64_t k = task / blocks, c0 = (task % blocks) * block, c1 = std::min(c0 + block, r.channels);
            const Element* box = boxes + k * 5;
            const float batch_value = to_f32(box[0]);
            if (!(batch_value >= 0.f) || !(batch_value < static_cast<float>(r.batch))) {
                bad_batch = true;
                continue;
            }
            const auto b = static_cast<std::int64_t>(batch_value);
            const float offset = r.aligned ? 0.5f : 0.f;
            const float start_w = to_f32(box[1]) * r.scale - offset, start_h = to_f32(box[2]) * r.scale - offset;
            float roi_w = to_f32(box[3]) * r.scale - offset - start_w, roi_h = to_f32(box[4]) * r.scale - offset - start_h;
            if (!r.aligned) roi_w = std::max(roi_w, 1.f), roi_h = std::max(roi_h, 1.f);
            const float bin_h = roi_h / static_cast<float>(r.oh), bin_w = roi_w / static_cast<float>(r.ow);
            const std::int64_t grid_h = r.sampling_ratio > 0 ? r.sampling_ratio : static_cast<std::int64_t>(std::ceil(roi_h / static_cast<float>(r.oh)));
            const std::int64_t grid_w = r.sampling_ratio > 0 ? r.sampling_ratio : static_cast<std::int64_t>(std::ceil(roi_w / static_cast<float>(r.ow)));
            const float inv_count = 1.f / static_cast<float>(std::max<std::int64_t>(grid_h * grid_w, 1));
            samples.clear();
            for (std::int64_t ph = 0; ph < r.oh; ++ph)
                for (std::int64_t pw = 0; pw < r.ow; ++pw) {
                    for (std::int64_t iy = 0; iy < grid_h; ++iy) {
                        float yy = start_h + static_cast<float>(ph) * bin_h + (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(grid_h);
                        for (std::int64_t ix = 0; ix < grid_w; ++ix) {
                            float xx = start_w + static_cast<float>(pw) * bin_w + (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(grid_w);
                            if (yy < -1.f || yy > static_cast<float>(r.h) || xx < -1.f || xx > static_cast<float>(r.w)) continue;
                            float sy = std::max(yy, 0.f), sx = std::max(xx, 0.f);
                            auto y_low = static_cast<std::int64_t>(sy), x_low = static_cast<std::int64_t>(sx);
                            std::int64_t y_high = y_low + 1, x_high = x_low + 1;
                            if (y_low >= r.h - 1) y_high = y_low = r.h - 1, sy = static_cast<float>(y_low);
                            if (x_low >= r.w - 1) x_high = x_low = r.w - 1, sx = static_cast<float>(x_low);
                            const float ly = sy - static_cast<float>(y_low), lx = sx - static_cast<float>(x_low);
                            const float hy = 1.f - ly, hx = 1.f - lx;
                            samples.push_back({{y_low * r.w + x_low, y_low * r.w + x_high, y_high * r.w + x_low, y_high * r.w + x_high},
                                               {hy * hx, hy * lx, ly * hx, ly * lx}});
                        }
                    }
                    first[static_cast<std::size_t>(ph * r.ow + pw + 1)] = static_cast<std::int64_t>(samples.size());
                }
            for (std::int64_t c = c0; c < c1; ++c) {
                const Element* xc = x + (b * r.channels + c) * plane;
                Element* yc = y + (k * r.channels + c) * bins;
                for (std::int64_t bin = 0; bin < bins; ++bin) {
                    float sum = 0;
                    for (std::int64_t s = first[static_cast<std::size_t>(bin)]; s < first[static_cast<std::size_t>(bin + 1)]; ++s) {
                        const Sample& t = samples[static_cast<std::size_t>(s)];
                        sum += t.weight[0] * to_f32(xc[t.offset[0]]) + t.weight[1] * to_f32(xc[t.offset[1]]) +
                               t.weight[2] * to_f32(xc[t.offset[2]]) + t.weight[3] * to_f32(xc[t.offset[3]]);
                    }
                    yc[bin] = from_f32<Element>(sum * inv_count);
                }
            }
        }
    }
    if (bad_batch) return hb_fail(call, 2, "roi_align: a box's batch index lies outside [0, B)");
    return 0;
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    RoiAlign r;
    if (const std::string error = views(call, r); !error.empty()) return hb_fail(call, 2, error.c_str());
    int status = 0;
    if (r.x.dtype == HB_FLOAT32) status = run<float>(call, r);
    else status = run<Half>(call, r);
    return status;
}
