// Baseline for dilation_2d (max-plus morphological dilation, float16): plain C++ with OpenMP
// over output rows, since oneDNN has no max-plus operation. Each output row widens the filter
// rows it needs once and the input rows into fp32 buffers padded with -inf (so the padding
// is added to the filter like any input, -inf + inf = NaN included), then takes the running
// maximum over the taps, vectorized over channels (NHWC) or output columns (NCHW). The
// maximum propagates NaN. fp16 + fp16 in fp32 rounds only where the exponents differ by more
// than 13 bits, and the result is rounded to fp16 once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

struct Dilation {
    const Half* x = nullptr;
    const Half* filter = nullptr;
    Half* y = nullptr;
    bool nchw = false;
    std::int64_t batch = 1, channels = 1, h = 1, w = 1, fh = 1, fw = 1, oh = 1, ow = 1;
    std::int64_t sh = 1, sw = 1, rh = 1, rw = 1, top = 0, left = 0;
};

std::int64_t leading_pad(const std::string& mode, std::int64_t in, std::int64_t out, std::int64_t eff,
                         std::int64_t stride, std::int64_t explicit_pad) {
    if (mode == "SAME") return std::max<std::int64_t>((out - 1) * stride + eff - in, 0) / 2;
    if (mode == "EXPLICIT") return explicit_pad;
    return 0;
}

std::string views(const hb_call* call, Dilation& d) {
    const hb_arg* x = hb_input(call, "x");
    const hb_arg* f = hb_input(call, "filter");
    const hb_arg* y = hb_output(call, "y");
    for (const hb_arg* a : {x, f, static_cast<const hb_arg*>(y)})
        if (!a || !a->present || a->count != 1 || !hb_is_contiguous(&a->tensors[0]) || a->tensors[0].dtype != HB_FLOAT16)
            return "dilation_2d: x, filter and y must be contiguous float16 tensors";
    const hb_tensor &xt = x->tensors[0], &ft = f->tensors[0], &yt = y->tensors[0];
    if (xt.rank != 4 || ft.rank != 3 || yt.rank != 4) return "dilation_2d: x and y 4-D, filter 3-D expected";
    d.nchw = std::string(hb_attr_string(call, "data_format", "NHWC")) == "NCHW";
    d.batch = xt.shape[0];
    d.channels = d.nchw ? xt.shape[1] : xt.shape[3];
    d.h = d.nchw ? xt.shape[2] : xt.shape[1];
    d.w = d.nchw ? xt.shape[3] : xt.shape[2];
    d.fh = d.nchw ? ft.shape[1] : ft.shape[0];
    d.fw = d.nchw ? ft.shape[2] : ft.shape[1];
    d.oh = d.nchw ? yt.shape[2] : yt.shape[1];
    d.ow = d.nchw ? yt.shape[3] : yt.shape[2];
    const hb_attr* strides = hb_attr_find(call, "strides");
    const hb_attr* rates = hb_attr_find(call, "rates");
    if (!strides || strides->type != HB_ATTR_INT_LIST || strides->count != 4 || !rates ||
        rates->type != HB_ATTR_INT_LIST || rates->count != 4)
        return "dilation_2d: strides and rates must list four integers";
    const int ah = d.nchw ? 2 : 1;
    d.sh = strides->ints[ah], d.sw = strides->ints[ah + 1], d.rh = rates->ints[ah], d.rw = rates->ints[ah + 1];
    const std::string mode = hb_attr_string(call, "padding_mode", "SAME");
    const hb_attr* pads = hb_attr_find(call, "pads");
    const bool have_pads = pads && pads->type == HB_ATTR_INT_LIST && pads->count == 4;
    d.top = leading_pad(mode, d.h, d.oh, (d.fh - 1) * d.rh + 1, d.sh, have_pads ? pads->ints[0] : 0);
    d.left = leading_pad(mode, d.w, d.ow, (d.fw - 1) * d.rw + 1, d.sw, have_pads ? pads->ints[2] : 0);
    d.x = static_cast<const Half*>(xt.data);
    d.filter = static_cast<const Half*>(ft.data);
    d.y = static_cast<Half*>(yt.data);
    return {};
}

// The running maximum that keeps a NaN once it has met one.
inline float nan_max(float acc, float v) { return (acc > v || acc != acc) ? acc : v; }

void run(const Dilation& d) {
    constexpr float neg_inf = -std::numeric_limits<float>::infinity();
    // Padded row width: every column an output reads, -inf outside the input.
    const std::int64_t wp = std::max(d.w + d.left, (d.ow - 1) * d.sw + (d.fw - 1) * d.rw + 1);
    const std::int64_t c = d.channels;
    std::vector<float> filter(static_cast<std::size_t>(d.fh * d.fw * c));
    for (std::size_t i = 0; i < filter.size(); ++i) filter[i] = to_f32(d.filter[i]);
    const std::int64_t rows = d.nchw ? d.batch * c * d.oh : d.batch * d.oh;
#pragma omp parallel
    {
        std::vector<float> line(static_cast<std::size_t>(wp * (d.nchw ? 1 : c)));
        std::vector<float> acc(static_cast<std::size_t>(d.ow));                        // NCHW: one output row
        std::vector<float> row_acc(static_cast<std::size_t>(d.nchw ? 0 : d.ow * c));  // NHWC: one output row
#pragma omp for schedule(static)
        for (std::int64_t row = 0; row < rows; ++row) {
            const std::int64_t i = row % d.oh;
            const std::int64_t b = d.nchw ? row / (d.oh * c) : row / d.oh;
            const std::int64_t ch = d.nchw ? (row / d.oh) % c : 0;
            if (d.nchw) {
                std::fill(acc.begin(), acc.end(), neg_inf);
                for (std::int64_t a = 0; a < d.fh; ++a) {
                    const std::int64_t r = i * d.sh + a * d.rh - d.top;
                    std::fill(line.begin(), line.end(), neg_inf);
                    if (r >= 0 && r < d.h) {
                        const Half* xr = d.x + ((b * c + ch) * d.h + r) * d.w;
                        for (std::int64_t v = 0; v < d.w; ++v) line[static_cast<std::size_t>(v + d.left)] = to_f32(xr[v]);
                    }
                    for (std::int64_t e = 0; e < d.fw; ++e) {
                        const float fv = filter[static_cast<std::size_t>((ch * d.fh + a) * d.fw + e)];
                        const float* src = line.data() + e * d.rw;
                        for (std::int64_t j = 0; j < d.ow; ++j) acc[static_cast<std::size_t>(j)] = nan_max(acc[static_cast<std::size_t>(j)], src[j * d.sw] + fv);
                    }
                }
                Half* yr = d.y + ((b * c + ch) * d.oh + i) * d.ow;
                for (std::int64_t j = 0; j < d.ow; ++j) yr[j] = from_f32<Half>(acc[static_cast<std::size_t>(j)]);
                continue;
            }
            // NHWC: the output row's accumulators [ow, C]; the fh input rows, one at a time,
            // each widened into a padded [wp, C] line.
            Half* yr = d.y + (b * d.oh + i) * d.ow * c;
            std::fill(row_acc.begin(), row_acc.end(), neg_inf);
            for (std::int64_t a = 0; a < d.fh; ++a) {
                const std::int64_t r = i * d.sh + a * d.rh - d.top;
                std::fill(line.begin(), line.end(), neg_inf);
                if (r >= 0 && r < d.h) {
                    const Half* xr = d.x + (b * d.h + r) * d.w * c;
                    float* dst = line.data() + d.left * c;
                    for (std::int64_t k = 0; k < d.w * c; ++k) dst[k] = to_f32(xr[k]);
                }
                for (std::int64_t j = 0; j < d.ow; ++j) {
                    float* accj = row_acc.data() + j * c;
                    for (std::int64_t e = 0; e < d.fw; ++e) {
                        const float* src = line.data() + (j * d.sw + e * d.rw) * c;
                        const float* fv = filter.data() + (a * d.fw + e) * c;
#pragma omp simd
                        for (std::int64_t k = 0; k < c; ++k) accj[k] = nan_max(accj[k], src[k] + fv[k]);
                    }
                }
            }
            for (std::int64_t k = 0; k < d.ow * c; ++k) yr[k] = from_f32<Half>(row_acc[static_cast<std::size_t>(k)]);
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Dilation d;
    if (const std::string error = views(call, d); !error.empty()) return hb_fail(call, 2, error.c_str());
    run(d);
    return 0;
}
