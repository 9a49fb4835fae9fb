// grid_sampler_3d(x [N, C, D, H, W], grid [N, Do, Ho, Wo, 3], interpolation_mode, padding_mode,
// align_corners): torch.nn.functional.grid_sample on 5-D input; y is [N, C, Do, Ho, Wo].
// grid[..., 0] is the W coordinate, [..., 1] H, [..., 2] D, normalized to [-1, 1] (values
// outside sample beyond the input, where the padding mode decides).
//   unnormalize: align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2
//   padding: zeros: as is (out-of-range voxels read 0); border: clipped to [0, size - 1];
//     reflection: reflected about the corner centers (align_corners) or the outer edges
//     (not), then clipped.
//   bilinear (trilinear): y = sum over the 8 corner voxels that lie inside the input of
//     value * weight (a corner of weight 0 still contributes value * 0, so an infinite value
//     there gives NaN, as in torch's CPU kernel); nearest: the voxel at round-half-even of the
//     coordinate (torch's nearbyint), 0 when it lies outside.
// x and grid share one dtype; fp16 computes in fp32.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/dtype_blocks.hpp"
#include "core/error.hpp"
#include "ops/formula_count.hpp"
#include "ops/register.hpp"

namespace hb {

namespace {

enum class Padding { zeros, border, reflection };

struct SamplerMode {
    bool nearest = false;
    Padding padding = Padding::zeros;
    bool align_corners = false;
};

SamplerMode sampler_mode(const Problem& p) {
    SamplerMode m;
    const std::string interp = p.attr_string("interpolation_mode");
    if (interp == "nearest") m.nearest = true;
    else if (interp != "bilinear")
        throw Error(p.context() + "interpolation_mode is \"" + interp +
                    "\"; it must be \"bilinear\" or \"nearest\" (5-D grid_sample has no bicubic)");
    const std::string pad = p.attr_string("padding_mode");
    if (pad == "zeros") m.padding = Padding::zeros;
    else if (pad == "border") m.padding = Padding::border;
    else if (pad == "reflection") m.padding = Padding::reflection;
    else throw Error(p.context() + "padding_mode is \"" + pad + "\"; it must be \"zeros\", \"border\" or \"reflection\"");
    m.align_corners = p.attr_bool("align_corners");
    return m;
}

// torch's reflect_coordinates: reflect `in` into [twice_low / 2, twice_high / 2].
template <typename T>
T reflect(T in, std::int64_t twice_low, std::int64_t twice_high) {
    if (twice_low == twice_high) return T(0);
    const T min = static_cast<T>(twice_low) / 2;
    const T span = static_cast<T>(twice_high - twice_low) / 2;
    in = std::fabs(in - min);
    const T extra = std::fmod(in, span);
    const auto flips = static_cast<std::int64_t>(std::floor(in / span));
    return flips % 2 == 0 ? extra + min : span - extra + min;
}

// The source coordinate, in voxels, of normalized coordinate g along a dim of `size`.
template <typename T>
T source_coordinate(T g, std::int64_t size, const SamplerMode& m) {
    const T s = static_cast<T>(size);
    T c = m.align_corners ? (g + 1) / 2 * (s - 1) : ((g + 1) * s - 1) / 2;
    if (m.padding == Padding::zeros) return c;
    if (m.padding == Padding::reflection)
        c = m.align_corners ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1);
    return std::min(s - 1, std::max(c, T(0)));
}

struct GridGeometry {
    std::int64_t n = 1, c = 1, d = 1, h = 1, w = 1;  // x
    std::int64_t points = 1;                         // Do * Ho * Wo per batch
};

GridGeometry grid_geometry(const Problem& p) {
    const TensorSpec& x = p.input("x").tensors.at(0);
    const TensorSpec& grid = p.input("grid").tensors.at(0);
    if (x.shape.size() != 5)
        throw Error(p.context() + "x has shape " + shape_to_string(x.shape) + "; it must be 5-D [N, C, D, H, W]");
    if (grid.shape.size() != 5 || grid.shape[4] != 3 || grid.shape[0] != x.shape[0])
        throw Error(p.context() + "grid has shape " + shape_to_string(grid.shape) + "; it must be [N, Do, Ho, Wo, 3] with N = " +
                    std::to_string(x.shape[0]) + " as in x");
    if (grid.dtype != x.dtype)
        throw Error(p.context() + "grid has dtype " + std::string(dtype_name(grid.dtype)) + " but x has " +
                    std::string(dtype_name(x.dtype)) + "; they must be equal");
    GridGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], x.shape[4], grid.shape[1] * grid.shape[2] * grid.shape[3]};
    return g;
}

}  // namespace

class GridSampler3dOp final : public OperatorWithCompute<GridSampler3dOp> {
  public:
    std::string name() const override { return "grid_sampler_3d"; }
    int level() const override { return 2; }
    // 2: fix_inputs also draws again the float16 grid values whose fp32 and fp64 coordinates differ.
    int golden_version() const override { return 2; }
    std::string baseline_description() const override {
        return "plain C++ with OpenMP over (batch, output point) blocks, each point's coordinates and weights "
               "computed once and applied to every channel, fp16 computed in fp32: oneDNN has no grid sampler "
               "(its resampling primitive samples a regular grid only)";
    }
    // The grid's innermost dim is its 3 coordinates, never 512 bytes.
    bool can_align() const override { return false; }

    std::vector<ArgSpec> infer_outputs(const Problem& p) const override {
        sampler_mode(p);
        grid_geometry(p);
        const TensorSpec& x = p.input("x").tensors.at(0);
        const TensorSpec& grid = p.input("grid").tensors.at(0);
        ArgSpec y;
        y.name = "y";
        y.tensors.push_back(TensorSpec{x.dtype, Shape{x.shape[0], x.shape[1], grid.shape[1], grid.shape[2], grid.shape[3]}});
        return {y};
    }

    template <typename T>
    void compute(const Problem& p, const ValueArgs<T>& in, ValueArgs<T>& out) const {
        const SamplerMode m = sampler_mode(p);
        const GridGeometry g = grid_geometry(p);
        const auto& x = in[0].one().v;
        const auto& grid = in[1].one().v;
        auto& y = out[0].one().v;
        const std::int64_t volume = g.d * g.h * g.w;
        const std::int64_t depth = g.d, height = g.h, width = g.w;
        auto inside = [depth, height, width](std::int64_t zi, std::int64_t yi, std::int64_t xi) {
            return zi >= 0 && zi < depth && yi >= 0 && yi < height && xi >= 0 && xi < width;
        };
#pragma omp parallel for schedule(static) if (g.n * g.points >= 4096)
        for (std::int64_t np = 0; np < g.n * g.points; ++np) {
            const std::int64_t n = np / g.points, pt = np % g.points;
            const T* xyz = grid.data() + np * 3;
            const T ix = source_coordinate(xyz[0], g.w, m);
            const T iy = source_coordinate(xyz[1], g.h, m);
            const T iz = source_coordinate(xyz[2], g.d, m);
            const T* xn = x.data() + n * g.c * volume;
            T* yn = y.data() + n * g.c * g.points + pt;
            if (m.nearest) {
                const auto xi = static_cast<std::int64_t>(std::nearbyint(ix));  // round half to even
                const auto yi = static_cast<std::int64_t>(std::nearbyint(iy));
                const auto zi = static_cast<std::int64_t>(std::nearbyint(iz));
                const bool ok = inside(zi, yi, xi);
                for (std::int64_t c = 0; c < g.c; ++c)
                    yn[c * g.points] = ok ? xn[c * volume + (zi * g.h + yi) * g.w + xi] : T(0);
                continue;
            }
            const auto x0 = static_cast<std::int64_t>(std::floor(ix));
            const auto y0 = static_cast<std::int64_t>(std::floor(iy));
            const auto z0 = static_cast<std::int64_t>(std::floor(iz));
            // Weights of the lower and upper corner along each axis.
            const T wx[2] = {static_cast<T>(x0 + 1) - ix, ix - static_cast<T>(x0)};
            const T wy[2] = {static_cast<T>(y0 + 1) - iy, iy - static_cast<T>(y0)};
            const T wz[2] = {static_cast<T>(z0 + 1) - iz, iz - static_cast<T>(z0)};
            std::array<std::int64_t, 8> offset{};
            std::array<T, 8> weight{};
            int corners = 0;
            for (int dz = 0; dz < 2; ++dz)
                for (int dy = 0; dy < 2; ++dy)
                    for (int dx = 0; dx < 2; ++dx) {
                        if (!inside(z0 + dz, y0 + dy, x0 + dx)) continue;
                        offset[static_cast<std::size_t>(corners)] = ((z0 + dz) * g.h + (y0 + dy)) * g.w + (x0 + dx);
                        weight[static_cast<std::size_t>(corners)] = wx[dx] * wy[dy] * wz[dz];
                        ++corners;
                    }
            for (std::int64_t c = 0; c < g.c; ++c) {
                const T* xc = xn + c * volume;
                T acc = 0;
                for (int k = 0; k < corners; ++k)
                    acc += xc[offset[static_cast<std::size_t>(k)]] * weight[static_cast<std::size_t>(k)];
                yn[c * g.points] = acc;
            }
        }
    }

    WorkModel work(const Problem& p) const override {
        const SamplerMode m = sampler_mode(p);
        const GridGeometry g = grid_geometry(p);
        const TensorSpec& x = p.input("x").tensors.at(0);
        const TensorSpec& grid = p.input("grid").tensors.at(0);
        const TensorSpec& y = p.outputs.at(0).tensors.at(0);
        WorkModel w;
        // The grid is read once and y written once. x is gathered: a kernel reads at most all
        // of it, and no more than the 8 (bilinear) or 1 (nearest) voxels of each output value.
        const double per_output = m.nearest ? 1 : 8;
        w.bytes_read = static_cast<double>(grid.bytes()) +
                       std::min(static_cast<double>(x.bytes()), per_output * static_cast<double>(y.bytes()));
        w.bytes_written = static_cast<double>(y.bytes());
        const double points = static_cast<double>(g.n * g.points);
        const double outputs = static_cast<double>(y.numel());
        // Per point and axis (3 axes): unnormalize (1 FMA), then the padding: border clips
        // (2 cmp); reflection also folds (|c - min|, a multiply by 1/span and floor, the
        // remainder FMA, a parity select: 1 abs, 1 mul, 1 cast, 1 fma, 1 select) and clips.
        w.add_vector(OpClass::fma, x.dtype, 3 * points);
        if (m.padding != Padding::zeros) w.add_vector(OpClass::cmp, x.dtype, 6 * points);
        if (m.padding == Padding::reflection) {
            w.add_vector(OpClass::abs, x.dtype, 3 * points);
            w.add_vector(OpClass::mul, x.dtype, 3 * points);
            w.add_vector(OpClass::cast, x.dtype, 3 * points);
            w.add_vector(OpClass::fma, x.dtype, 3 * points);
            w.add_vector(OpClass::select, x.dtype, 3 * points);
        }
        if (m.nearest) {
            // Round (cast) and bounds test per axis; one select per output value.
            w.add_vector(OpClass::cast, x.dtype, 3 * points);
            w.add_vector(OpClass::cmp, x.dtype, 6 * points);
            w.add_vector(OpClass::select, x.dtype, outputs);
        } else {
            // Floor (cast), two axis weights (2 adds) and bounds tests per axis; the 8 corner
            // weights (2 multiplies each); then per output value 8 corner fetches (a gather:
            // one lane move each, charged as a select, the cheapest a gather can be) and one
            // FMA per corner.
            w.add_vector(OpClass::cast, x.dtype, 3 * points);
            w.add_vector(OpClass::add, x.dtype, 6 * points);
            w.add_vector(OpClass::cmp, x.dtype, 6 * points);
            w.add_vector(OpClass::mul, x.dtype, 16 * points);
            w.add_vector(OpClass::select, x.dtype, 8 * outputs);
            w.add_vector(OpClass::fma, x.dtype, 8 * outputs);
        }
        // cann-bench (docs/hap.md), grid_sample as written. Per grid point and axis: unnormalize
        // (mul, add), the padding (zeros: the two in-bounds tests; border: the clamp's min and
        // max; reflection: those and the fold, abs and add), then floor or round (cast); for
        // trilinear also the fraction and its complement (2 add), and the 8 corner weights (2
        // mul each). Per output value: trilinear 8 taps (moves), 8 mul and 7 add; nearest 1 tap.
        const double reflect = m.padding == Padding::reflection ? 3.0 : 0.0;
        add_formula_terms(w, x.dtype, FormulaMath::elementwise, points,
                          {{OpClass::mul, m.nearest ? 3.0 : 19.0}, {OpClass::add, (m.nearest ? 3.0 : 9.0) + reflect},
                           {OpClass::cmp, 6}, {OpClass::abs, reflect}, {OpClass::cast, 3}});
        if (m.nearest) add_formula(w, x.dtype, FormulaMath::elementwise, outputs, {{OpClass::select, 1}});
        else add_formula(w, x.dtype, FormulaMath::elementwise, outputs, {{OpClass::select, 8}, {OpClass::mul, 8}, {OpClass::add, 7}});
        w.parallel_items = outputs;
        w.innermost = y.shape.back();
        return w;
    }

    void sample_case(CaseSampler& sampler, CaseSpec& out) const override {
        const auto& d = sampler.draw();
        // Every (interpolation, padding, align_corners) triple, deterministically: 12 of them.
        struct Variant {
            const char* interp;
            const char* pad;
            bool align;
        };
        std::vector<Variant> variants;
        for (const char* interp : {"bilinear", "nearest"})
            for (const char* pad : {"zeros", "border", "reflection"})
                for (bool align : {false, true}) variants.push_back({interp, pad, align});
        const Variant v = sampler.cycle(variants);
        const std::int64_t n = sampler.pick(std::vector<std::int64_t>{1, 1, 2, 3});
        const std::int64_t c = sampler.pick(std::vector<std::int64_t>{1, 3, 4, 8, 16, 32});
        // Half of the budget to the grid (3 values per point), the rest to x; the output
        // (C values per point) is capped at 4e6 values: every value gathers 8 voxels from
        // all over x, and the timed runs of a case must fit the operator's time budget.
        const double budget = static_cast<double>(d.target_elements);
        const double points = std::max(1.0, std::min(budget / 6.0, 4e6 / static_cast<double>(c)) / static_cast<double>(n));
        const double volume = std::max(1.0, (budget - 3.0 * points * static_cast<double>(n)) / static_cast<double>(n * c));
        // Spatial dims near cube roots, perturbed, so that D, H and W differ.
        auto three_dims = [&](double total) {
            Shape s(3);
            double rest = total;
            for (int k = 0; k < 3; ++k) {
                const double target = k == 2 ? rest : std::cbrt(total) * sampler.rng().uniform(0.6, 1.5);
                s[static_cast<std::size_t>(k)] = std::max<std::int64_t>(1, std::llround(std::min(target, rest)));
                rest = std::max(1.0, rest / static_cast<double>(s[static_cast<std::size_t>(k)]));
            }
            // Odd innermost sizes, like the rest of the suite's non-aligned cases.
            if (s[2] > 1 && s[2] % 2 == 0) s[2] += 1;
            return s;
        };
        const Shape in = three_dims(volume), pts = three_dims(points);
        out.inputs.at(0).shapes = {Shape{n, c, in[0], in[1], in[2]}};
        out.inputs.at(1).shapes = {Shape{n, pts[0], pts[1], pts[2], 3}};
        // Grid coordinates reach past [-1, 1], so that every padding mode matters (three
        // reflections at +-3).
        out.inputs.at(1).range = sampler.pick(std::vector<ValueRange>{{-1.1, 1.1}, {-1.25, 1.25}, {-1.5, 1.5}, {-2, 2}, {-3, 3}});
        out.attrs = {{"interpolation_mode", AttrValue::of_string(v.interp)},
                     {"padding_mode", AttrValue::of_string(v.pad)},
                     {"align_corners", AttrValue::of_bool(v.align)}};
    }

    // Sampling is discontinuous in the coordinates at two kinds of points: nearest at
    // half-way points between voxels (k + 0.5), where the voxel read jumps; trilinear at
    // integer coordinates k, where the corner of weight 0 changes from k - 1 to k + 1 (it
    // still adds value * 0, which is NaN for a non-finite value). A float32 grid value whose
    // coordinate lies within 1e-3 voxel of such a point may land on either side in fp32 and
    // fp64, so it is drawn again. The check holds along all three axes at once, because the
    // timed calls rotate the grid's elements (methodology section 4), moving a value from one
    // axis to another. Trilinear sampling of finite x is continuous there and left alone.
    // A float16 grid's coordinates are exact in fp32 and fp64 alike (exact ties are decided by
    // round half to even), save for a few values: g + 1 needs 25 bits for a positive subnormal
    // that is an odd multiple of 2^-24, so fp32 rounds it to 1 and, on an odd size, puts the
    // coordinate exactly on a voxel where fp64 puts it 1e-6 past (the reference kernel met it
    // about once in 100 timed calls of case 18, as NaN where the golden is inf). Such a value,
    // or any whose fp32 and fp64 coordinates differ, is drawn again.
    void fix_inputs(const Problem& p, std::vector<Arg>& inputs, Rng& rng) const override {
        const SamplerMode m = sampler_mode(p);
        const GridGeometry g = grid_geometry(p);
        Tensor& grid = inputs.at(1).tensors.at(0);
        const auto& x_range = p.spec.inputs.at(0).range;
        const bool special_x = x_range && (!std::isfinite(x_range->lo) || !std::isfinite(x_range->hi));
        if (!m.nearest && !special_x) return;
        const auto& range = p.spec.inputs.at(1).range;
        const double lo = range && std::isfinite(range->lo) ? range->lo : -1.0;
        const double hi = range && std::isfinite(range->hi) && range->hi > lo ? range->hi : lo + 2.0;
        const double jump = m.nearest ? 0.5 : 0.0;  // where, past the integer part, sampling jumps
        const bool float32_grid = grid.spec.dtype == DType::f32;
        auto near_jump = [&](double v) {
            for (const std::int64_t size : {g.w, g.h, g.d}) {
                const double c = source_coordinate(v, size, m);
                if (float32_grid ? std::fabs(c - std::floor(c - jump + 0.5) - jump) < 1e-3
                                 : static_cast<double>(source_coordinate(static_cast<float>(v), size, m)) != c)
                    return true;
            }
            return false;
        };
        // Which values need drawing again is found on every thread (the test reads nothing but
        // the value); the draws then run in element order, as one loop over every element would
        // make them. On timed calls' fresh inputs the serial test was most of the input
        // preparation of this operator (12.8 ms a call on the public cases, 2-vCPU AMD EPYC).
        const std::int64_t n = grid.numel();
        constexpr std::int64_t chunk = 4096;
        std::vector<unsigned char> redraw(static_cast<std::size_t>(n));
        const auto* bytes = static_cast<const unsigned char*>(grid.data());
        const std::size_t size = dtype_size(grid.spec.dtype);
#pragma omp parallel if (n >= 4 * chunk)
        {
            std::vector<double> values(static_cast<std::size_t>(chunk));
#pragma omp for schedule(static)
            for (std::int64_t k0 = 0; k0 < n; k0 += chunk) {
                const std::int64_t count = std::min(chunk, n - k0);
                widen_block(bytes + static_cast<std::size_t>(k0) * size, static_cast<std::size_t>(count), grid.spec.dtype, values.data());
                for (std::int64_t k = 0; k < count; ++k) {
                    const double v = values[static_cast<std::size_t>(k)];
                    redraw[static_cast<std::size_t>(k0 + k)] = std::isfinite(v) && near_jump(v);
                }
            }
        }
        for (std::int64_t k = 0; k < n; ++k) {
            if (!redraw[static_cast<std::size_t>(k)]) continue;
            for (int attempt = 0; attempt < 100; ++attempt) {  // attempt 0's test is above
                if (attempt > 0) {
                    const double v = grid.get(static_cast<std::size_t>(k));
                    if (!std::isfinite(v) || !near_jump(v)) break;
                }
                grid.set(static_cast<std::size_t>(k), rng.uniform(lo, hi));
            }
        }
    }
};

HB_REGISTER_OPERATOR(GridSampler3dOp)

}  // namespace hb
