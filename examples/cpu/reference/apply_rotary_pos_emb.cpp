// Reference apply_rotary_pos_emb: out = x * cos + rotate(x) * sin for x = query and key.
// layout 0: [B, S, N, D]; layout 1: [B, N, S, D] (key may have its own head count N).
// cos/sin: [S, D/2] or [B, S, D/2], repeated to D by rotaryMode:
//   "half": element i < D/2 pairs with i + D/2: out[i] = x[i]c - x[i+D/2]s,
//           out[i+D/2] = x[i+D/2]c + x[i]s, with c, s the table's entry i;
//   "interleaved": element 2i pairs with 2i+1 the same way, table entry i.
// All tensors share one dtype (float32, float16, bfloat16); math in fp32, rounded once.
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

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
struct Bf16 {
    using Storage = uint16_t;
    static float load(uint16_t v) { return hb_bf16_to_f32(v); }
    static uint16_t store(float v) { return hb_f32_to_bf16(v); }
};

struct Geometry {
    int64_t seq = 1, dim = 2;
    int layout = 0;
    bool per_batch = false, interleaved = false;
};

template <typename Type>
void rope(const Geometry& g, const hb_tensor& x, const hb_tensor& cos_t, const hb_tensor& sin_t, const hb_tensor& y,
          int threads) {
    using S = typename Type::Storage;
    const auto* in = static_cast<const S*>(x.data);
    const auto* cs = static_cast<const S*>(cos_t.data);
    const auto* sn = static_cast<const S*>(sin_t.data);
    auto* out = static_cast<S*>(y.data);
    const int64_t d = g.dim, h = d / 2;
    const int64_t heads = g.layout == 0 ? x.shape[2] : x.shape[1];
    const int64_t rows = hb_numel(&x) / d;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t r = 0; r < rows; ++r) {
        // The batch and sequence position of this row of D elements.
        const int64_t b = r / (g.seq * heads);
        const int64_t s = g.layout == 0 ? (r / heads) % g.seq : r % g.seq;
        const int64_t t = (g.per_batch ? b * g.seq + s : s) * h;
        for (int64_t i = 0; i < h; ++i) {
            const int64_t lo = g.interleaved ? 2 * i : i;
            const int64_t hi = g.interleaved ? 2 * i + 1 : i + h;
            const float c = Type::load(cs[t + i]), sv = Type::load(sn[t + i]);
            const float a = Type::load(in[r * d + lo]), bb = Type::load(in[r * d + hi]);
            out[r * d + lo] = Type::store(a * c - bb * sv);
            out[r * d + hi] = Type::store(bb * c + a * sv);
        }
    }
}

template <typename Type>
void both(const Geometry& g, const hb_tensor& q, const hb_tensor& k, const hb_tensor& c, const hb_tensor& s,
          const hb_tensor& qo, const hb_tensor& ko, int threads) {
    rope<Type>(g, q, c, s, qo, threads);
    rope<Type>(g, k, c, s, ko, threads);
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* args[4] = {hb_input(call, "query"), hb_input(call, "key"), hb_input(call, "cos"), hb_input(call, "sin")};
    const hb_arg* qo_arg = hb_output(call, "query_out");
    const hb_arg* ko_arg = hb_output(call, "key_out");
    for (const hb_arg* a : args)
        if (!a || a->count != 1) return hb_fail(call, 1, "apply_rotary_pos_emb: expected query, key, cos and sin");
    if (!qo_arg || !ko_arg || qo_arg->count != 1 || ko_arg->count != 1)
        return hb_fail(call, 1, "apply_rotary_pos_emb: expected outputs query_out and key_out");
    const hb_tensor& q = args[0]->tensors[0];
    const hb_tensor& k = args[1]->tensors[0];
    const hb_tensor& c = args[2]->tensors[0];
    const hb_tensor& s = args[3]->tensors[0];
    const hb_tensor& qo = qo_arg->tensors[0];
    const hb_tensor& ko = ko_arg->tensors[0];
    for (const hb_tensor* t : {&q, &k, &c, &s, &qo, &ko}) {
        if (!hb_is_contiguous(t)) return hb_fail(call, 3, "apply_rotary_pos_emb: only contiguous tensors are supported");
        if (t->dtype != q.dtype) return hb_fail(call, 2, "apply_rotary_pos_emb: all tensors must share one dtype");
    }
    if (q.rank != 4 || k.rank != 4) return hb_fail(call, 2, "apply_rotary_pos_emb: query and key must be 4-D");
    Geometry g;
    g.layout = static_cast<int>(hb_attr_int(call, "layout", 0));
    g.interleaved = strcmp(hb_attr_string(call, "rotaryMode", "half"), "interleaved") == 0;
    g.seq = g.layout == 0 ? q.shape[1] : q.shape[2];
    g.dim = q.shape[3];
    g.per_batch = c.rank == 3;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    switch (q.dtype) {
        case HB_FLOAT32: both<Fp32>(g, q, k, c, s, qo, ko, threads); return 0;
        case HB_FLOAT16: both<Fp16>(g, q, k, c, s, qo, ko, threads); return 0;
        case HB_BFLOAT16: both<Bf16>(g, q, k, c, s, qo, ko, threads); return 0;
        default: return hb_fail(call, 2, "apply_rotary_pos_emb: dtype must be float32, float16 or bfloat16");
    }
}
