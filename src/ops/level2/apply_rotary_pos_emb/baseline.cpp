// Baseline for apply_rotary_pos_emb: out = x * cos + rotate(x) * sin for query and key
// (layout 0 [B, S, N, D], layout 1 [B, N, S, D]; cos/sin [S, D/2] or [B, S, D/2]; "half" or
// "interleaved" rotation). Plain C++ with OpenMP over the rows of D, one fused pass that
// looks each row's cos/sin row up instead of broadcasting the tables: oneDNN has no rotary
// embedding, and building it from binary primitives would materialize the rotated copy and
// the broadcast tables (several extra passes over memory), which no framework's fused RoPE
// does. fp16/bf16 load to fp32, compute, and round once.
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

struct Geometry {
    std::int64_t batch = 1, seq = 1, dim = 2;
    int layout = 0;
    bool per_batch = false, interleaved = false;
};

template <typename Element>
void rope(const Geometry& g, const hb_tensor& x, const hb_tensor& cos_t, const hb_tensor& sin_t, hb_tensor& y) {
    const auto* in = static_cast<const Element*>(x.data);
    const auto* cs = static_cast<const Element*>(cos_t.data);
    const auto* sn = static_cast<const Element*>(sin_t.data);
    auto* out = static_cast<Element*>(y.data);
    const std::int64_t d = g.dim, h = d / 2;
    const std::int64_t heads = g.layout == 0 ? x.shape[2] : x.shape[1];
    const std::int64_t rows = hb_numel(&x) / d;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
        std::int64_t b, s;
        if (g.layout == 0) {
            b = r / (g.seq * heads);
            s = (r / heads) % g.seq;
        } else {
            b = r / (heads * g.seq);
            s = r % g.seq;
        }
        const std::int64_t t = (g.per_batch ? b * g.seq + s : s) * h;
        const Element* src = in + r * d;
        Element* dst = out + r * d;
        if (g.interleaved) {
#pragma omp simd
            for (std::int64_t i = 0; i < h; ++i) {
                const float c = to_f32(cs[t + i]), si = to_f32(sn[t + i]);
                const float a = to_f32(src[2 * i]), bb = to_f32(src[2 * i + 1]);
                dst[2 * i] = from_f32<Element>(a * c - bb * si);
                dst[2 * i + 1] = from_f32<Element>(bb * c + a * si);
            }
        } else {
#pragma omp simd
            for (std::int64_t i = 0; i < h; ++i) {
                const float c = to_f32(cs[t + i]), si = to_f32(sn[t + i]);
                const float a = to_f32(src[i]), bb = to_f32(src[i + h]);
                dst[i] = from_f32<Element>(a * c - bb * si);
                dst[i + h] = from_f32<Element>(bb * c + a * si);
            }
        }
    }
}

const hb_tensor* one_tensor(const hb_arg* a) { return a && a->present && a->count == 1 ? &a->tensors[0] : nullptr; }

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor* q = one_tensor(hb_input(call, "query"));
    const hb_tensor* k = one_tensor(hb_input(call, "key"));
    const hb_tensor* c = one_tensor(hb_input(call, "cos"));
    const hb_tensor* s = one_tensor(hb_input(call, "sin"));
    hb_arg* qo_arg = hb_output(call, "query_out");
    hb_arg* ko_arg = hb_output(call, "key_out");
    if (!q || !k || !c || !s || !qo_arg || !ko_arg || qo_arg->count != 1 || ko_arg->count != 1)
        return hb_fail(call, 1, "apply_rotary_pos_emb: expected query, key, cos, sin and outputs query_out, key_out");
    hb_tensor& qo = qo_arg->tensors[0];
    hb_tensor& ko = ko_arg->tensors[0];
    for (const hb_tensor* t : {q, k, c, s, static_cast<const hb_tensor*>(&qo), static_cast<const hb_tensor*>(&ko)}) {
        if (!hb_is_contiguous(t)) return hb_fail(call, 2, "apply_rotary_pos_emb: only contiguous tensors are supported");
        if (t->dtype != q->dtype) return hb_fail(call, 2, "apply_rotary_pos_emb: all tensors must share query's dtype");
    }
    if (q->rank != 4 || k->rank != 4 || hb_numel(&qo) != hb_numel(q) || hb_numel(&ko) != hb_numel(k))
        return hb_fail(call, 2, "apply_rotary_pos_emb: query and key must be 4-D, outputs their size");
    Geometry g;
    g.layout = static_cast<int>(hb_attr_int(call, "layout", 0));
    const std::string mode = hb_attr_string(call, "rotaryMode", "half");
    if ((g.layout != 0 && g.layout != 1) || (mode != "half" && mode != "interleaved"))
        return hb_fail(call, 2, "apply_rotary_pos_emb: layout must be 0 or 1, rotaryMode half or interleaved");
    g.interleaved = mode == "interleaved";
    g.batch = q->shape[0];
    g.seq = g.layout == 0 ? q->shape[1] : q->shape[2];
    g.dim = q->shape[3];
    g.per_batch = c->rank == 3;
    if (g.dim % 2 != 0 || hb_numel(c) != (g.per_batch ? g.batch : 1) * g.seq * (g.dim / 2))
        return hb_fail(call, 2, "apply_rotary_pos_emb: D must be even and cos/sin [S, D/2] or [B, S, D/2]");
    const bool known = with_float_element(q->dtype, [&](auto element) {
        using Element = decltype(element);
        rope<Element>(g, *q, *c, *s, qo);
        rope<Element>(g, *k, *c, *s, ko);
    });
    if (!known) return hb_fail(call, 2, "apply_rotary_pos_emb: unsupported dtype (float32, float16, bfloat16 only)");
    return 0;
}
