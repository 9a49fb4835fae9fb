// roi_align(x [B, C, H, W], boxes [K, 5], outputHeight, outputWidth, spatial_scale,
// sampling_ratio = -1, aligned = false): torchvision's ROIAlign; y [K, C, oh, ow] in x's dtype
// (boxes share it). A box row is (batch index, x0, y0, x1, y1) in input coordinates.
//   off = aligned ? 0.5 : 0; start = box * spatial_scale - off (x and y); size = end - start,
//   at least 1 when not aligned; bin = size / (oh or ow).
//   grid per axis = sampling_ratio > 0 ? sampling_ratio : ceil(size / (oh or ow)) (per box);
//   count = max(grid_h grid_w, 1).
//   Sample (iy, ix) of bin (ph, pw): yy = start_y + ph bin_h + (iy + 0.5) bin_h / grid_h (xx alike).
//   Bilinear sample: 0 when yy < -1, yy > H, xx < -1 or xx > W; coordinates below 0 clamp to 0;
//   y_low = floor(yy), and when y_low >= H - 1 both taps are row H - 1 (weight all on it);
//   weights (1 - ly)(1 - lx), (1 - ly) lx, ly (1 - lx), ly lx with ly = yy - y_low.
//   y[k, c, ph, pw] = (sum of the samples) / count; the batch index is column 0 truncated.
// Each tap is multiplied by its weight even when the weight is 0 (as torchvision), so NaN
// and infinities propagate from every tap touched. The golden runs these steps in fp64
// (torchvision's kernel in double, which is what the reference benchmark evaluates); the
// same-precision reference in fp32.
//
// Input contract (fix_inputs): boxes are regenerated inside the feature map (the reference
// benchmark's rule): batch index uniform in [0, B); with mx = (W - 1) / scale and
// my = (H - 1) / scale, x0 in [0, mx / 2), y0 in [0, my / 2), x1 = x0 + (0.1 + 0.4 u) mx,
// y1 = y0 + (0.1 + 0.4 u') my, rounded to the boxes' dtype. With adaptive sampling a box
// whose bin size lies within 1e-3 of an integer is drawn again: its grid size (a ceiling)
// could come out differently in fp32 and fp64; so is one with a sample coordinate that near
// an integer when x holds infinities (a zero tap weight decides NaN or inf there).
//
// Thresholds: the defaults. (The reference benchmark loosens them to 0.1 for float16 and
// 0.01 for float32, 100 and 80 times the defaults, which would accept a kernel sampling half
// a pixel off; hapbench's fp64 golden and any fp32 kernel agree within the defaults.)
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

struct RoiGeometry {
    std::int64_t batch = 1, channels = 1, h = 1, w = 1, boxes = 0;
    std::int64_t oh = 1, ow = 1;
    double scale = 1;
    std::int64_t sampling_ratio = -1;
    bool aligned = false;
};

RoiGeometry roi_geometry(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    const TensorSpec& boxes = p.input("boxes").tensors.at(0);
    if (x.shape.size() != 4)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; it must be 4-D [B, C, H, W]");
    if (boxes.shape.size() != 2 || boxes.shape[1] != 5)
        throw Error(p.context() + "boxes has shape " + shape_to_string(boxes.shape) +
                    "; it must be [K, 5], rows (batch index, x0, y0, x1, y1)");
    if (boxes.dtype != x.dtype)
        throw Error(p.context() + "x has dtype " + std::string(dtype_name(x.dtype)) + " and boxes " +
                    std::string(dtype_name(boxes.dtype)) + "; they must be equal");
    RoiGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], boxes.shape[0]};
    if (g.batch < 1 || g.channels < 1 || g.h < 1 || g.w < 1)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; no dimension may be empty");
    g.oh = p.attr_int("outputHeight");
    g.ow = p.attr_int("outputWidth");
    if (g.oh < 1 || g.ow < 1)
        throw Error(p.context() + "outputHeight and outputWidth are " + std::to_string(g.oh) + " and " +
                    std::to_string(g.ow) + "; both must be at least 1");
    g.scale = p.attr_float("spatial_scale");
    if (!(g.scale > 0) || !std::isfinite(g.scale))
        throw Error(p.context() + "spatial_scale is " + p.attr("spatial_scale").to_string() + "; it must be positive");
    g.sampling_ratio = p.attr_int("sampling_ratio");
    g.aligned = p.attr_bool("aligned");
    return g;
}

// The sampling grid of one box along one axis: its start and bin size in feature-map
// coordinates, and the samples per bin.
template <typename T>
struct BoxAxis {
    T start, bin;
    std::int64_t grid;
};

template <typename T>
BoxAxis<T> box_axis(T lo, T hi, std::int64_t bins, const RoiGeometry& g) {
    const T offset = g.aligned ? T(0.5) : T(0);
    const T scale = static_cast<T>(g.scale);
    const T start = lo * scale - offset;
    T size = hi * scale - offset - start;
    if (!g.aligned) size = std::max(size, T(1));
    const T bin = size / static_cast<T>(bins);
    const std::int64_t grid =
        g.sampling_ratio > 0 ? g.sampling_ratio : static_cast<std::int64_t>(std::ceil(size / static_cast<T>(bins)));
    return {start, bin, grid};
}

// torchvision's bilinear_interpolate: the four taps and weights of a sample (zeros outside).
template <typename T>
struct Taps {
    std::int64_t offset[4] = {0, 0, 0, 0};
    T weight[4] = {0, 0, 0, 0};
    bool any = false;
};

template <typename T>
Taps<T> sample_taps(T yy, T xx, std::int64_t h, std::int64_t w) {
    Taps<T> t;
    if (yy < T(-1) || yy > static_cast<T>(h) || xx < T(-1) || xx > static_cast<T>(w)) return t;
    if (yy <= 0) yy = 0;
    if (xx <= 0) xx = 0;
    auto y_low = static_cast<std::int64_t>(yy), x_low = static_cast<std::int64_t>(xx);
    std::int64_t y_high, x_high;
    if (y_low >= h - 1) {
        y_high = y_low = h - 1;
        yy = static_cast<T>(y_low);
    } else {
        y_high = y_low + 1;
    }
    if (x_low >= w - 1) {
        x_high = x_low = w - 1;
        xx = static_cast<T>(x_low);
    } else {
        x_high = x_low + 1;
    }
    const T ly = yy - static_cast<T>(y_low), lx = xx - static_cast<T>(x_low);
    const T hy = T(1) - ly, hx = T(1) - lx;
    t.offset[0] = y_low * w + x_low, t.offset[1] = y_low * w + x_high;
    t.offset[2] = y_high * w + x_low, t.offset[3] = y_high * w + x_high;
    t.weight[0] = hy * hx, t.weight[1] = hy * lx, t.weight[2] = ly * hx, t.weight[3] = ly * lx;
    t.any = true;
    return t;
}

// Samples per output of a box under this sampling_ratio, for the work model: exact when
// fixed; adaptive, the least any box of the input contract (fix_inputs) can take: its sides
// are at least a tenth of the map's (H - 1 and W - 1 in feature coordinates; 0.099 leaves
// room for rounding the corners to float16).
double samples_per_output(const RoiGeometry& g) {
    if (g.sampling_ratio > 0) return static_cast<double>(g.sampling_ratio * g.sampling_ratio);
    auto grid = [](std::int64_t size, std::int64_t bins) {
        return std::max(1.0, std::ceil(0.099 * static_cast<double>(size - 1) / static_cast<double>(bins)));
    };
    return grid(g.h, g.oh) * grid(g.w, g.ow);
}

}  // namespace

class RoiAlignOp final : public OperatorWithCompute<RoiAlignOp> {
  public:
    std::string name() const override { return "roi_align"; }
    int level() const override { return 3; }
    // 2: fix_inputs redraws ambiguous boxes for NaN x too, so the NaN cases' inputs changed.
    int golden_version() const override { return 2; }
    std::string baseline_description() const override {
        return "plain C++ with OpenMP over (box, channel block) pairs, torchvision's CPU algorithm (each bin's sample "
               "positions and bilinear weights computed once per box and applied to every channel), fp16 computed in "
               "fp32: oneDNN has no ROI align";
    }
    // boxes' innermost dim holds the 5 values of a row, never 512 bytes.
    bool can_align() const override { return false; }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        const RoiGeometry g = roi_geometry(p);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{p.input("x").tensors.at(0).dtype, Shape{g.boxes, g.channels, g.oh, g.ow}});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const RoiGeometry g = roi_geometry(p);
        const auto& x = in[0].one().v;
        const auto& boxes = in[1].one().v;
        auto& y = out[0].one().v;
        const std::int64_t plane = g.h * g.w, bins = g.oh * g.ow;
        for (std::int64_t k = 0; k < g.boxes; ++k) {
            const T* box = boxes.data() + k * 5;
            const double batch_value = static_cast<double>(box[0]);
            if (!(batch_value >= 0) || !(batch_value < static_cast<double>(g.batch)))
                throw Error(p.context() + "box " + std::to_string(k) + " has batch index " + std::to_string(batch_value) +
                            ", outside [0, " + std::to_string(g.batch) + ")");
            const auto b = static_cast<std::int64_t>(box[0]);
            const BoxAxis<T> ay = box_axis<T>(box[2], box[4], g.oh, g);
            const BoxAxis<T> ax = box_axis<T>(box[1], box[3], g.ow, g);
            const T count = static_cast<T>(std::max<std::int64_t>(ay.grid * ax.grid, 1));
            // Every bin's samples, the same for every channel.
            std::vector<Taps<T>> taps;
            std::vector<std::int64_t> first(static_cast<std::size_t>(bins + 1), 0);
            for (std::int64_t ph = 0; ph < g.oh; ++ph)
                for (std::int64_t pw = 0; pw < g.ow; ++pw) {
                    for (std::int64_t iy = 0; iy < ay.grid; ++iy) {
                        const T yy = ay.start + static_cast<T>(ph) * ay.bin +
                                     (static_cast<T>(iy) + T(0.5)) * ay.bin / static_cast<T>(ay.grid);
                        for (std::int64_t ix = 0; ix < ax.grid; ++ix) {
                            const T xx = ax.start + static_cast<T>(pw) * ax.bin +
                                         (static_cast<T>(ix) + T(0.5)) * ax.bin / static_cast<T>(ax.grid);
                            taps.push_back(sample_taps<T>(yy, xx, g.h, g.w));
                        }
                    }
                    first[static_cast<std::size_t>(ph * g.ow + pw + 1)] = static_cast<std::int64_t>(taps.size());
                }
#pragma omp parallel for schedule(static) if (g.channels * static_cast<std::int64_t>(taps.size()) >= 16384)
            for (std::int64_t c = 0; c < g.channels; ++c) {
                const T* xc = x.data() + (b * g.channels + c) * plane;
                T* yc = y.data() + (k * g.channels + c) * bins;
                for (std::int64_t bin = 0; bin < bins; ++bin) {
                    T sum = 0;
                    for (std::int64_t s = first[static_cast<std::size_t>(bin)]; s < first[static_cast<std::size_t>(bin + 1)]; ++s) {
                        const Taps<T>& t = taps[static_cast<std::size_t>(s)];
                        if (!t.any) continue;
                        sum += t.weight[0] * xc[t.offset[0]] + t.weight[1] * xc[t.offset[1]] + t.weight[2] * xc[t.offset[2]] +
                               t.weight[3] * xc[t.offset[3]];
                    }
                    yc[bin] = sum / count;
                }
            }
        }
    }

    // Formula-literal count (cann-bench convention, issue 15) per output element, with
    // count = grid_h * grid_w samples: per sample 4 multiplies and 3 additions (the bilinear
    // tap sum) and 1 addition into the bin's sum, less one, and one division (4):
    // 8 count + 3. (count = sampling_ratio^2, or per box ceil(h / oh) ceil(w / ow) adaptive.)
    WorkModel work(const Problem& p) const override {
        const RoiGeometry g = roi_geometry(p);
        const TensorSpec& x = p.input("x").tensors.at(0);
        const TensorSpec& boxes = p.input("boxes").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        const DType dtype = x.dtype;
        WorkModel w;
        const double outputs = static_cast<double>(y.numel());
        const double samples = samples_per_output(g);
        const double points = static_cast<double>(g.boxes * g.oh * g.ow) * samples;  // sample points
        // x is gathered: no kernel reads more than all of it, nor more than the 4 taps of
        // each sample of each output.
        w.bytes_read = static_cast<double>(boxes.bytes()) +
                       std::min(static_cast<double>(x.bytes()), 4 * samples * outputs * static_cast<double>(dtype_size(dtype)));
        w.bytes_written = static_cast<double>(y.bytes());
        // Per sample point (shared by the channels): 2 FMA for the coordinates, 2 floors
        // (casts), 2 subtractions for the fractions and 2 for their complements, 4 weight
        // multiplies, 4 bound compares. Per output and sample: 4 tap fetches (a gather, charged
        // as a select each, the cheapest a gather can be) and 4 FMA; per output one multiply
        // by 1 / count.
        w.add_vector(OpClass::fma, dtype, 2 * points + 4 * samples * outputs);
        w.add_vector(OpClass::cast, dtype, 2 * points);
        w.add_vector(OpClass::add, dtype, 4 * points);
        w.add_vector(OpClass::mul, dtype, 4 * points + outputs);
        w.add_vector(OpClass::cmp, dtype, 4 * points);
        w.add_vector(OpClass::select, dtype, 4 * samples * outputs);
        w.add_vector_io(dtype, outputs + w.bytes_read / static_cast<double>(dtype_size(dtype)));
        // cann-bench (docs/hap.md): per output and sample 4 multiplies and 4 additions (the
        // bilinear taps' sum and the bin's), less one addition, and the division: 8 count + 3.
        add_formula(w, dtype, FormulaMath::in_fp32, outputs,
                    {{OpClass::mul, 4 * samples}, {OpClass::add, 4 * samples - 1}, {OpClass::div, 1}});
        w.parallel_items = outputs;
        w.innermost = g.ow;
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        Rng& rng = sampler.rng();
        struct Variant {
            std::int64_t oh, ow;
            double scale;
            std::int64_t sampling_ratio;
            bool aligned;
        };
        // Twenty variants, cycled: output sizes 1x1 to 28x28 (and non-square), scales 1 to
        // 1/16, sampling ratios 1, 2, 4 and adaptive (0 and -1), both alignments.
        static const std::vector<Variant> variants = {
            {7, 7, 0.0625, 2, false}, {14, 14, 0.0625, 2, true},  {7, 7, 0.125, 1, false}, {28, 28, 0.25, 0, true},
            {1, 1, 1.0, 4, false},    {7, 7, 0.25, -1, false},   {5, 3, 0.5, 2, true},     {14, 14, 0.125, 4, false},
            {3, 3, 1.0, 1, true},     {7, 7, 0.0625, 0, true},   {2, 2, 0.25, 2, false},   {14, 7, 0.5, 1, false},
            {7, 7, 1.0, -1, true},    {28, 28, 0.125, 1, true},  {6, 6, 0.0625, 4, true},  {4, 9, 0.25, 2, false},
            {7, 7, 0.5, 0, false},    {1, 1, 0.0625, 2, true},   {10, 10, 1.0, 2, false},  {14, 14, 0.25, -1, true},
        };
        const Variant v = sampler.cycle(variants);
        double total = static_cast<double>(d.target_elements);
        if (total > 4e6) total = 3.1e6 * std::pow(total / 3.1e6, 0.5);
        const std::int64_t b = sampler.pick(std::vector<std::int64_t>{1, 2, 2, 3, 4});
        std::int64_t c = sampler.pick(std::vector<std::int64_t>{3, 16, 31, 64, 127, 256, 511});
        // At least a 16 x 16 map per channel.
        while (c > 1 && static_cast<double>(b * c) * 256 > total) c = std::max<std::int64_t>(1, c / 2);
        const double plane = std::max(256.0, total / static_cast<double>(b * c));
        const std::int64_t h = std::max<std::int64_t>(16, std::llround(std::sqrt(plane * rng.uniform(0.6, 1.6))));
        std::int64_t w = std::max<std::int64_t>(16, std::llround(plane / static_cast<double>(h)));
        if (w % 2 == 0) w += 1;
        // Boxes: the output (K C oh ow values of `samples` samples, 4 taps each) is capped at
        // 1e7 tap reads. Adaptive sampling takes up to ceil(0.5 H / oh) samples per axis. At
        // least two boxes, so that the timed calls' rotation (by whole boxes) changes them.
        double samples = samples_per_output({b, c, h, w, 0, v.oh, v.ow, v.scale, v.sampling_ratio, v.aligned});
        if (v.sampling_ratio <= 0)
            samples = std::ceil(std::max(1.0, 0.5 * static_cast<double>(h)) / static_cast<double>(v.oh)) *
                      std::ceil(std::max(1.0, 0.5 * static_cast<double>(w)) / static_cast<double>(v.ow));
        const double per_box = static_cast<double>(c * v.oh * v.ow) * samples * 4;
        const std::int64_t boxes = std::clamp<std::int64_t>(std::llround(1e7 / per_box * rng.uniform(0.3, 1.0)), 2, 300);
        out.inputs.at(0).shapes = {Shape{b, c, h, w}};
        out.inputs.at(1).shapes = {Shape{boxes, 5}};
        out.attrs = {{"outputHeight", AttrValue::of_int(v.oh)},
                     {"outputWidth", AttrValue::of_int(v.ow)},
                     {"spatial_scale", AttrValue::of_float(v.scale)},
                     {"sampling_ratio", AttrValue::of_int(v.sampling_ratio)},
                     {"aligned", AttrValue::of_bool(v.aligned)}};
    }

    // float32: +-1e30, so that sums of weighted samples stay finite in fp32; float16 keeps
    // its own limit (its sums fit fp32).
    ValueRange boundary_range(DType dtype) const override {
        return dtype == DType::f16 ? ValueRange{-65504, 65504} : ValueRange{-1e30, 1e30};
    }

    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        const RoiGeometry g = roi_geometry(p);
        Tensor& boxes = inputs.at(1).tensors.at(0);
        const DType dtype = boxes.spec.dtype;
        const double mx = static_cast<double>(g.w - 1) / g.scale, my = static_cast<double>(g.h - 1) / g.scale;
        // A bin size (adaptive sampling) within 1e-3 of an integer: its ceiling (the grid)
        // could differ between fp32 and fp64. With infinite or NaN x, also a sample coordinate
        // within 1e-3 of an integer: a tap weight exactly 0 in one precision and not in the
        // other turns 0 * inf = NaN into +-inf, and a tap cell one precision touches and the
        // other does not decides NaN or a number (finite x is continuous there). Found on
        // fresh timed-call inputs of the NaN case (2 of 3 eval seeds failed within 50 verified calls).
        const auto& x_range = p.spec.inputs.at(0).range;
        const bool special_x = x_range && (std::isinf(x_range->lo) || std::isinf(x_range->hi) ||
                                           std::isnan(x_range->lo) || std::isnan(x_range->hi));
        auto near_integer = [](double v) { return std::fabs(v - std::nearbyint(v)) < 1e-3; };
        auto ambiguous = [&](double lo, double hi, std::int64_t bins) {
            const BoxAxis<double> a = box_axis<double>(lo, hi, bins, g);
            if (g.sampling_ratio <= 0 && near_integer(a.bin)) return true;
            if (!special_x) return false;
            for (std::int64_t bin = 0; bin < bins; ++bin)
                for (std::int64_t i = 0; i < a.grid; ++i)
                    if (near_integer(a.start + static_cast<double>(bin) * a.bin +
                                     (static_cast<double>(i) + 0.5) * a.bin / static_cast<double>(a.grid)))
                        return true;
            return false;
        };
        for (std::int64_t k = 0; k < g.boxes; ++k) {
            const auto row = static_cast<std::size_t>(k * 5);
            boxes.set(row, static_cast<double>(rng.uniform_int(0, g.batch - 1)));
            for (int attempt = 0; attempt < 100; ++attempt) {
                const double x0 = round_to_dtype(rng.uniform(0, 0.5 * mx), dtype);
                const double y0 = round_to_dtype(rng.uniform(0, 0.5 * my), dtype);
                const double x1 = round_to_dtype(x0 + (0.1 + 0.4 * rng.uniform01()) * mx, dtype);
                const double y1 = round_to_dtype(y0 + (0.1 + 0.4 * rng.uniform01()) * my, dtype);
                boxes.set(row + 1, x0), boxes.set(row + 2, y0), boxes.set(row + 3, x1), boxes.set(row + 4, y1);
                if (!ambiguous(y0, y1, g.oh) && !ambiguous(x0, x1, g.ow)) break;
            }
        }
    }
};

HB_REGISTER_OPERATOR(RoiAlignOp)

}  // namespace hb
