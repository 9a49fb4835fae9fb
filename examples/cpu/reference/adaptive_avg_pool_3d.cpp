// Reference adaptive_avg_pool_3d: x [N, C, D, H, W], output_size [Od, Oh, Ow]; y [N, C, Od, Oh,
// Ow] in x's dtype (float32, float16 or bfloat16). Along an axis of length L with O outputs,
// output i averages [floor(i L / O), ceil((i + 1) L / O)); y is the mean over the product of
// the three ranges. fp32 sums (rows over W windows, then over D and H windows), one
// division by the box's volume; OpenMP over (plane, output depth) pairs.
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

int64_t start_of(int64_t i, int64_t in, int64_t out) { return i * in / out; }
int64_t end_of(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x_arg = hb_input(call, "x");
    const hb_arg* y_arg = hb_output(call, "y");
    if (!x_arg || !y_arg) return hb_fail(call, 1, "adaptive_avg_pool_3d: expected input `x` and output `y`");
    const hb_tensor& x = x_arg->tensors[0];
    const hb_tensor& y = y_arg->tensors[0];
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y))
        return hb_fail(call, 3, "adaptive_avg_pool_3d: only contiguous tensors are supported");
    if ((x.dtype != HB_FLOAT32 && x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16) || y.dtype != x.dtype)
        return hb_fail(call, 2, "adaptive_avg_pool_3d: x and y must share a float dtype");
    if (x.rank != 5 || y.rank != 5 || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1])
        return hb_fail(call, 2, "adaptive_avg_pool_3d: x [N, C, D, H, W] and y [N, C, Od, Oh, Ow] expected");
    const hb_attr* size = hb_attr_find(call, "output_size");
    if (!size || size->type != HB_ATTR_INT_LIST || size->count != 3 || size->ints[0] != y.shape[2] ||
        size->ints[1] != y.shape[3] || size->ints[2] != y.shape[4])
        return hb_fail(call, 4, "adaptive_avg_pool_3d: output_size must be y's [Od, Oh, Ow]");
    const int64_t d = x.shape[2], h = x.shape[3], w = x.shape[4];
    const int64_t od = y.shape[2], oh = y.shape[3], ow = y.shape[4];
    const int64_t planes = x.shape[0] * x.shape[1];
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        // Per output depth: each input row's sums over the W windows, added over the D window,
        // then summed over the H windows: every input element is read once per D window.
        std::vector<float> rows(static_cast<size_t>(h * ow)), line(static_cast<size_t>(w));
#pragma omp for schedule(static)
        for (int64_t item = 0; item < planes * od; ++item) {
            const int64_t plane = item / od, i = item % od;
            const int64_t d0 = start_of(i, d, od), d1 = end_of(i, d, od);
            std::fill(rows.begin(), rows.end(), 0.f);
            for (int64_t z = d0; z < d1; ++z)
                for (int64_t r = 0; r < h; ++r) {
                    const int64_t base = ((plane * d + z) * h + r) * w;
                    for (int64_t v = 0; v < w; ++v) line[static_cast<size_t>(v)] = load(x, base + v);
                    for (int64_t k = 0; k < ow; ++k) {
                        float sum = 0.f;
                        for (int64_t v = start_of(k, w, ow); v < end_of(k, w, ow); ++v) sum += line[static_cast<size_t>(v)];
                        rows[static_cast<size_t>(r * ow + k)] += sum;
                    }
                }
            for (int64_t j = 0; j < oh; ++j) {
                const int64_t h0 = start_of(j, h, oh), h1 = end_of(j, h, oh);
                for (int64_t k = 0; k < ow; ++k) {
                    float sum = 0.f;
                    for (int64_t r = h0; r < h1; ++r) sum += rows[static_cast<size_t>(r * ow + k)];
                    const auto volume = static_cast<float>((d1 - d0) * (h1 - h0) * (end_of(k, w, ow) - start_of(k, w, ow)));
                    store(y, ((plane * od + i) * oh + j) * ow + k, sum / volume);
                }
            }
        }
    }
    return 0;
}
