// Baseline for moe_finalize_routing: threaded C++, OpenMP over source rows. Each row starts
// from skip1 + skip2 in a per-thread fp32 row, adds its K gathered expert rows (bias added
// before scaling, dropped for an expert id outside [0, E); idx -1 skipped) and is stored
// once. oneDNN has no gather or scatter-add: binary primitives would need the gathered rows
// written out first, an extra pass over the largest tensor.
#include <cstdint>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

struct Routing {
    std::int64_t mode = 0, num_rows = 0, k = 1, hidden = 0, num_dst = 0, experts = 0;
};

template <typename Element, typename Scale>
void run_rows(const hb_call* call, const Routing& g, const Scale* scales) {
    auto data = [&](const char* name) -> const void* {
        const hb_arg* a = hb_input(call, name);
        return a && a->present ? a->tensors[0].data : nullptr;
    };
    const auto* rows = static_cast<const Element*>(data("expanded_permuted_rows"));
    const auto* idx = static_cast<const std::int32_t*>(data("expanded_src_to_dst_row"));
    const auto* skip1 = static_cast<const Element*>(data("skip1"));
    const auto* skip2 = static_cast<const Element*>(data("skip2"));
    const auto* bias = static_cast<const Element*>(data("bias"));
    const auto* experts = static_cast<const std::int32_t*>(data("expert_for_source_row"));
    auto* out = static_cast<Element*>(hb_output(call, "out")->tensors[0].data);
    const std::int64_t h = g.hidden;
    const bool row_layout = g.mode == 2 || g.mode == 3;
#pragma omp parallel
    {
        std::vector<float> acc(static_cast<std::size_t>(h));
        float* a = acc.data();
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < g.num_rows; ++r) {
            const std::int64_t base = r * h;
#pragma omp simd
            for (std::int64_t j = 0; j < h; ++j)
                a[j] = (skip1 ? to_f32(skip1[base + j]) : 0.f) + (skip2 ? to_f32(skip2[base + j]) : 0.f);
            for (std::int64_t slot = 0; slot < g.k; ++slot) {
                const std::int64_t v = idx[row_layout ? r * g.k + slot : slot * g.num_rows + r];
                if (v < 0 || v >= g.num_dst) continue;  // -1: a dropped token
                const float scale = scales ? to_f32(scales[r * g.k + slot]) : 1.f;
                const Element* src = rows + v * h;
                const std::int64_t e = bias && experts ? experts[r * g.k + slot] : -1;
                if (e >= 0 && e < g.experts) {
                    const Element* b = bias + e * h;
#pragma omp simd
                    for (std::int64_t j = 0; j < h; ++j) a[j] += scale * (to_f32(src[j]) + to_f32(b[j]));
                } else {
#pragma omp simd
                    for (std::int64_t j = 0; j < h; ++j) a[j] += scale * to_f32(src[j]);
                }
            }
#pragma omp simd
            for (std::int64_t j = 0; j < h; ++j) out[base + j] = from_f32<Element>(a[j]);
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* rows = hb_input(call, "expanded_permuted_rows");
    const hb_arg* idx = hb_input(call, "expanded_src_to_dst_row");
    const hb_arg* scales = hb_input(call, "scales");
    const hb_arg* bias = hb_input(call, "bias");
    const hb_arg* out = hb_output(call, "out");
    if (!rows || !idx || !out) return hb_fail(call, 1, "moe_finalize_routing: missing expanded_permuted_rows, idx or out");
    for (int i = 0; i < call->num_inputs; ++i)
        if (call->inputs[i].present && !hb_is_contiguous(&call->inputs[i].tensors[0]))
            return hb_fail(call, 2, "moe_finalize_routing: only contiguous tensors are supported");
    Routing g;
    g.mode = hb_attr_int(call, "drop_pad_mode", 0);
    const hb_tensor& r = rows->tensors[0];
    g.hidden = r.shape[r.rank - 1];
    g.num_dst = g.hidden ? hb_numel(&r) / g.hidden : 0;
    g.k = scales && scales->present ? scales->tensors[0].shape[1] : 1;
    g.num_rows = idx->tensors[0].shape[0] / g.k;
    g.experts = bias && bias->present ? bias->tensors[0].shape[0] : 0;
    if (g.num_rows == 0 || g.hidden == 0) return 0;
    const bool have_scales = scales && scales->present;
    const hb_dtype scale_dtype = have_scales ? scales->tensors[0].dtype : r.dtype;
    const void* scale_data = have_scales ? scales->tensors[0].data : nullptr;
    bool known_scale = false;
    const bool known_rows = with_float_element(r.dtype, [&](auto element) {
        using Element = decltype(element);
        known_scale = with_float_element(scale_dtype, [&](auto scale) {
            using Scale = decltype(scale);
            run_rows<Element>(call, g, static_cast<const Scale*>(scale_data));
        });
    });
    return known_rows && known_scale ? 0 : hb_fail(call, 2, "moe_finalize_routing: float32, float16 or bfloat16 rows and scales only");
}
