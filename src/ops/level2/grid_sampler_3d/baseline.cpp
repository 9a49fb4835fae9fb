// Baseline for grid_sampler_3d: torch.nn.functional.grid_sample on 5-D input (trilinear or
// nearest; zeros, border or reflection padding; align_corners either way). Plain C++ with
// OpenMP: oneDNN has no grid sampler (its resampling primitive samples a regular grid
// only). The loop is the one of torch's CPU kernel, blocked: a block of 64 output points of
// one batch computes its coordinates, corner offsets and weights once in fp32, then every
// channel applies them, writing 64 contiguous outputs per channel. fp16 loads to fp32 and
// rounds once.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

enum class Padding { zeros, border, reflection };

struct Mode {
    bool nearest = false, align = false;
    Padding padding = Padding::zeros;
};

float reflect(float in, std::int64_t twice_low, std::int64_t twice_high) {
    if (twice_low == twice_high) return 0.f;
    const float min = static_cast<float>(twice_low) / 2;
    const float span = static_cast<float>(twice_high - twice_low) / 2;
    in = std::fabs(in - min);
    const float extra = std::fmod(in, span);
    const auto flips = static_cast<std::int64_t>(std::floor(in / span));
    return flips % 2 == 0 ? extra + min : span - extra + min;
}

float source(float g, std::int64_t size, const Mode& m) {
    const float s = static_cast<float>(size);
    float c = m.align ? (g + 1) / 2 * (s - 1) : ((g + 1) * s - 1) / 2;
    if (m.padding == Padding::zeros) return c;
    if (m.padding == Padding::reflection) c = m.align ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1);
    return std::fmin(s - 1, std::fmax(c, 0.f));
}

constexpr int kBlock = 64;

template <typename Element>
void grid_sample(const Mode& m, const hb_tensor& x, const hb_tensor& grid, hb_tensor& y) {
    const std::int64_t n_batch = x.shape[0], channels = x.shape[1], d = x.shape[2], h = x.shape[3], w = x.shape[4];
    const std::int64_t points = grid.shape[1] * grid.shape[2] * grid.shape[3];
    const std::int64_t volume = d * h * w;
    const auto* xs = static_cast<const Element*>(x.data);
    const auto* gs = static_cast<const Element*>(grid.data);
    auto* ys = static_cast<Element*>(y.data);
    const std::int64_t blocks_per_batch = (points + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
    for (std::int64_t blk = 0; blk < n_batch * blocks_per_batch; ++blk) {
        const std::int64_t n = blk / blocks_per_batch;
        const std::int64_t p0 = (blk % blocks_per_batch) * kBlock;
        const int count = static_cast<int>(std::min<std::int64_t>(kBlock, points - p0));
        // Per point: up to 8 corners (offset, weight; weight 0 and offset 0 for corners
        // outside, so that they add nothing: an outside corner is skipped, not multiplied).
        std::int64_t offset[kBlock][8];
        float weight[kBlock][8];
        bool inside[kBlock][8];
        for (int p = 0; p < count; ++p) {
            const Element* g = gs + (n * points + p0 + p) * 3;
            const float ix = source(to_f32(g[0]), w, m), iy = source(to_f32(g[1]), h, m), iz = source(to_f32(g[2]), d, m);
            if (m.nearest) {
                const auto xi = static_cast<std::int64_t>(std::nearbyint(ix));
                const auto yi = static_cast<std::int64_t>(std::nearbyint(iy));
                const auto zi = static_cast<std::int64_t>(std::nearbyint(iz));
                inside[p][0] = xi >= 0 && xi < w && yi >= 0 && yi < h && zi >= 0 && zi < d;
                offset[p][0] = inside[p][0] ? (zi * h + yi) * w + xi : 0;
                continue;
            }
            const auto x0 = static_cast<std::int64_t>(std::floor(ix));
            const auto y0 = static_cast<std::int64_t>(std::floor(iy));
            const auto z0 = static_cast<std::int64_t>(std::floor(iz));
            const float wx[2] = {static_cast<float>(x0 + 1) - ix, ix - static_cast<float>(x0)};
            const float wy[2] = {static_cast<float>(y0 + 1) - iy, iy - static_cast<float>(y0)};
            const float wz[2] = {static_cast<float>(z0 + 1) - iz, iz - static_cast<float>(z0)};
            for (int k = 0; k < 8; ++k) {
                const int dx = k & 1, dy = (k >> 1) & 1, dz = k >> 2;
                const std::int64_t xi = x0 + dx, yi = y0 + dy, zi = z0 + dz;
                inside[p][k] = xi >= 0 && xi < w && yi >= 0 && yi < h && zi >= 0 && zi < d;
                offset[p][k] = inside[p][k] ? (zi * h + yi) * w + xi : 0;
                weight[p][k] = wx[dx] * wy[dy] * wz[dz];
            }
        }
        for (std::int64_t c = 0; c < channels; ++c) {
            const Element* xc = xs + (n * channels + c) * volume;
            Element* yc = ys + (n * channels + c) * points + p0;
            for (int p = 0; p < count; ++p) {
                if (m.nearest) {
                    yc[p] = from_f32<Element>(inside[p][0] ? to_f32(xc[offset[p][0]]) : 0.f);
                    continue;
                }
                float acc = 0.f;
                for (int k = 0; k < 8; ++k)
                    if (inside[p][k]) acc += to_f32(xc[offset[p][k]]) * weight[p][k];
                yc[p] = from_f32<Element>(acc);
            }
        }
    }
}

const hb_tensor* one_tensor(const hb_arg* a) { return a && a->present && a->count == 1 ? &a->tensors[0] : nullptr; }

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor* x = one_tensor(hb_input(call, "x"));
    const hb_tensor* grid = one_tensor(hb_input(call, "grid"));
    hb_arg* y_arg = hb_output(call, "y");
    if (!x || !grid || !y_arg || y_arg->count != 1)
        return hb_fail(call, 1, "grid_sampler_3d: expected inputs x, grid and output y");
    hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(x) || !hb_is_contiguous(grid) || !hb_is_contiguous(&y))
        return hb_fail(call, 2, "grid_sampler_3d: only contiguous tensors are supported");
    if (x->rank != 5 || grid->rank != 5 || grid->shape[4] != 3 || grid->shape[0] != x->shape[0] ||
        grid->dtype != x->dtype || y.dtype != x->dtype)
        return hb_fail(call, 2, "grid_sampler_3d: x [N, C, D, H, W] and grid [N, Do, Ho, Wo, 3] of one dtype");
    Mode m;
    const std::string interp = hb_attr_string(call, "interpolation_mode", "bilinear");
    const std::string pad = hb_attr_string(call, "padding_mode", "zeros");
    m.nearest = interp == "nearest";
    m.padding = pad == "border" ? Padding::border : pad == "reflection" ? Padding::reflection : Padding::zeros;
    m.align = hb_attr_int(call, "align_corners", 0) != 0;
    if ((interp != "bilinear" && !m.nearest) || (pad != "zeros" && pad != "border" && pad != "reflection"))
        return hb_fail(call, 2, "grid_sampler_3d: unknown interpolation_mode or padding_mode");
    const bool known = with_float_element(x->dtype, [&](auto element) { grid_sample<decltype(element)>(m, *x, *grid, y); });
    if (!known) return hb_fail(call, 2, "grid_sampler_3d: unsupported dtype (float32, float16 only)");
    return 0;
}
