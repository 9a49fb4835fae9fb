// WRONG on purpose (tests/integration/test_wrong_level2_spatial.cpp): unnormalizes every
// coordinate with the align_corners=false formula, so align_corners=true cases sample at
// shifted positions. Otherwise the reference kernel.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

struct Fp32 {
    using Storage = float;
    static float load(float v) { return v; }
    static float store(float v) { return v; }
};
struct Fp16 {
    using Storage = uint16_t;
    static float load(uint16_t v) { return hb_f16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_f16(v); }
};

enum Padding { kZeros, kBorder, kReflection };

float reflect(float in, int64_t twice_low, int64_t twice_high) {
    if (twice_low == twice_high) return 0.f;
    const float min = static_cast<float>(twice_low) / 2;
    const float span = static_cast<float>(twice_high - twice_low) / 2;
    in = std::fabs(in - min);
    const float extra = std::fmod(in, span);
    const int64_t flips = static_cast<int64_t>(std::floor(in / span));
    return flips % 2 == 0 ? extra + min : span - extra + min;
}

float source(float g, int64_t size, int padding, bool align) {
    const float s = static_cast<float>(size);
    float c = ((g + 1) * s - 1) / 2;  // the bug: align_corners ignored here
    if (padding == kZeros) return c;
    if (padding == kReflection) c = align ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1);
    return std::fmin(s - 1, std::fmax(c, 0.f));
}

template <typename Type>
void grid_sample(const hb_tensor& x, const hb_tensor& grid, const hb_tensor& y, bool nearest, int padding,
                 bool align, int threads) {
    using S = typename Type::Storage;
    const int64_t nb = x.shape[0], channels = x.shape[1], d = x.shape[2], h = x.shape[3], w = x.shape[4];
    const int64_t points = grid.shape[1] * grid.shape[2] * grid.shape[3];
    const auto* xs = static_cast<const S*>(x.data);
    const auto* gs = static_cast<const S*>(grid.data);
    auto* ys = static_cast<S*>(y.data);
    auto inside = [&](int64_t zi, int64_t yi, int64_t xi) {
        return zi >= 0 && zi < d && yi >= 0 && yi < h && xi >= 0 && xi < w;
    };
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t np = 0; np < nb * points; ++np) {
        const int64_t n = np / points, p = np % points;
        const S* g = gs + np * 3;
        const float ix = source(Type::load(g[0]), w, padding, align);
        const float iy = source(Type::load(g[1]), h, padding, align);
        const float iz = source(Type::load(g[2]), d, padding, align);
        for (int64_t c = 0; c < channels; ++c) {
            const S* xc = xs + (n * channels + c) * d * h * w;
            float out = 0.f;
            if (nearest) {
                const int64_t xi = static_cast<int64_t>(std::nearbyint(ix));
                const int64_t yi = static_cast<int64_t>(std::nearbyint(iy));
                const int64_t zi = static_cast<int64_t>(std::nearbyint(iz));
                if (inside(zi, yi, xi)) out = Type::load(xc[(zi * h + yi) * w + xi]);
            } else {
                const int64_t x0 = static_cast<int64_t>(std::floor(ix));
                const int64_t y0 = static_cast<int64_t>(std::floor(iy));
                const int64_t z0 = static_cast<int64_t>(std::floor(iz));
                const float wx[2] = {static_cast<float>(x0 + 1) - ix, ix - static_cast<float>(x0)};
                const float wy[2] = {static_cast<float>(y0 + 1) - iy, iy - static_cast<float>(y0)};
                const float wz[2] = {static_cast<float>(z0 + 1) - iz, iz - static_cast<float>(z0)};
                for (int k = 0; k < 8; ++k) {
                    const int dx = k & 1, dy = (k >> 1) & 1, dz = k >> 2;
                    if (inside(z0 + dz, y0 + dy, x0 + dx))
                        out += Type::load(xc[((z0 + dz) * h + (y0 + dy)) * w + (x0 + dx)]) * (wx[dx] * wy[dy] * wz[dz]);
                }
            }
            ys[(n * channels + c) * points + p] = Type::store(out);
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* grid_arg = hb_input(call, "grid");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !grid_arg || !y_arg || x_arg->count != 1 || grid_arg->count != 1 || y_arg->count != 1)
        return hb_fail(call, 1, "grid_sampler_3d: expected inputs x, grid and output y");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& grid = grid_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&grid) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "grid_sampler_3d: only contiguous tensors are supported");
    if (x.rank != 5 || grid.rank != 5 || grid.shape[4] != 3 || grid.dtype != x.dtype || y.dtype != x.dtype)
        return hb_fail(call, 2, "grid_sampler_3d: x [N, C, D, H, W] and grid [N, Do, Ho, Wo, 3] of one dtype");
    const char* interp = hb_attr_string(call, "interpolation_mode", "bilinear");
    const char* pad = hb_attr_string(call, "padding_mode", "zeros");
    const bool nearest = strcmp(interp, "nearest") == 0;
    const int padding = strcmp(pad, "border") == 0 ? kBorder : strcmp(pad, "reflection") == 0 ? kReflection : kZeros;
    const bool align = hb_attr_int(call, "align_corners", 0) != 0;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (x.dtype) {
        case HB_FLOAT32: grid_sample<Fp32>(x, grid, y, nearest, padding, align, threads); return 0;
        case HB_FLOAT16: grid_sample<Fp16>(x, grid, y, nearest, padding, align, threads); return 0;
        default: return hb_fail(call, 2, "grid_sampler_3d: dtype must be float32 or float16");
    }
}
