// Reference sparse_flash_attention: per (batch, KV head n2, query row s1) the set A of keys
// listed in sparseIndices (duplicates once), less j > s1 + (S2 - S1) when causal; the G query
// heads n1 = n2 G .. n2 G + G - 1 attend to A with scale scaleValue (as given). In fp32: the
// rows of A gathered and widened once, scores, the row maximum (NaN sticks), e_j = exp(s_j -
// max), y = sum e_j v_j / sum e_j; an empty A, or a maximum of -inf, gives 0. BSND or BNSD
// (inputLayout) for every tensor; float16 or bfloat16, indices int32. OpenMP over
// (batch, KV head, query row).
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

float load(const hb_tensor& t, int64_t i) {
    const uint16_t bits = static_cast<const uint16_t*>(t.data)[i];
    return t.dtype == HB_FLOAT16 ? hb_f16_to_f32(bits) : hb_bf16_to_f32(bits);
}

void store(const hb_tensor& t, int64_t i, float v) {
    static_cast<uint16_t*>(t.data)[i] = t.dtype == HB_FLOAT16 ? hb_f32_to_f16(v) : hb_f32_to_bf16(v);
}

// A [B, seq, heads, dim] tensor in the call's layout: the offset of (b, s, n, 0).
struct View {
    bool bsnd = true;
    int64_t seq = 0, heads = 0, dim = 0;
    int64_t at(int64_t b, int64_t s, int64_t n) const {
        return bsnd ? ((b * seq + s) * heads + n) * dim : ((b * heads + n) * seq + s) * dim;
    }
};

View view_of(const hb_tensor* t, bool bsnd) {
    return View{bsnd, bsnd ? t->shape[1] : t->shape[2], bsnd ? t->shape[2] : t->shape[1], t->shape[3]};
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* qa = hb_input(call, "query");
    const hb_arg* ka = hb_input(call, "key");
    const hb_arg* va = hb_input(call, "value");
    const hb_arg* ia = hb_input(call, "sparseIndices");
    const hb_arg* ya = hb_output(call, "y");
    if (!qa || !ka || !va || !ia || !ya)
        return hb_fail(call, 1, "sparse_flash_attention: expected inputs query, key, value, sparseIndices and output y");
    const hb_tensor &q = qa->tensors[0], &k = ka->tensors[0], &v = va->tensors[0], &idx = ia->tensors[0],
                    &y = ya->tensors[0];
    for (const hb_tensor* t : {&q, &k, &v, &idx, &y})
        if (t->rank != 4 || !hb_is_contiguous(t))
            return hb_fail(call, 2, "sparse_flash_attention: every tensor must be contiguous and 4-D");
    if ((q.dtype != HB_FLOAT16 && q.dtype != HB_BFLOAT16) || k.dtype != q.dtype || v.dtype != q.dtype ||
        idx.dtype != HB_INT32)
        return hb_fail(call, 2, "sparse_flash_attention: query, key, value float16 or bfloat16 alike, indices int32");
    const char* layout = hb_attr_string(call, "inputLayout", "BSND");
    if (std::strcmp(layout, "BSND") != 0 && std::strcmp(layout, "BNSD") != 0)
        return hb_fail(call, 2, "sparse_flash_attention: inputLayout must be BSND or BNSD");
    const bool bsnd = std::strcmp(layout, "BSND") == 0;
    const View qv = view_of(&q, bsnd), kv = view_of(&k, bsnd), vv = view_of(&v, bsnd), iv = view_of(&idx, bsnd),
               yv = view_of(&y, bsnd);
    const int64_t batch = q.shape[0], s1 = qv.seq, heads = qv.heads, s2 = kv.seq, kv_heads = kv.heads;
    const int64_t dk = qv.dim, dv = vv.dim, top_k = iv.dim;
    if (kv_heads < 1 || heads % kv_heads != 0)
        return hb_fail(call, 2, "sparse_flash_attention: N2 must divide N1");
    const int64_t group = heads / kv_heads;
    const auto scale = static_cast<float>(hb_attr_float(call, "scaleValue", 1.0));
    const bool causal = hb_attr_int(call, "is_causal", 0) != 0;
    const auto* indices = static_cast<const int32_t*>(idx.data);
    // An index outside [0, S2) is an error, reported once.
    for (int64_t t = 0; t < hb_numel(&idx); ++t)
        if (indices[t] < 0 || indices[t] >= s2)
            return hb_fail(call, 2, "sparse_flash_attention: an index is outside [0, S2)");
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        std::vector<char> seen(static_cast<size_t>(s2), 0);
        std::vector<int32_t> keys(static_cast<size_t>(top_k));
        std::vector<float> kf(static_cast<size_t>(top_k * dk)), vf(static_cast<size_t>(top_k * dv));
        std::vector<float> qrow(static_cast<size_t>(dk)), acc(static_cast<size_t>(dv)), e(static_cast<size_t>(top_k));
#pragma omp for schedule(dynamic, 2)
        for (int64_t task = 0; task < batch * kv_heads * s1; ++task) {
            const int64_t b = task / (kv_heads * s1), n2 = task / s1 % kv_heads, i = task % s1;
            const int64_t limit = causal ? i + s2 - s1 : s2 - 1;
            const int32_t* list = indices + iv.at(b, i, n2);
            int64_t count = 0;
            for (int64_t t = 0; t < top_k; ++t) {
                const int32_t j = list[t];
                if (j > limit || seen[static_cast<size_t>(j)]) continue;
                seen[static_cast<size_t>(j)] = 1;
                keys[static_cast<size_t>(count++)] = j;
            }
            for (int64_t c = 0; c < count; ++c) {
                const int32_t j = keys[static_cast<size_t>(c)];
                seen[static_cast<size_t>(j)] = 0;
                for (int64_t d = 0; d < dk; ++d) kf[static_cast<size_t>(c * dk + d)] = load(k, kv.at(b, j, n2) + d);
                for (int64_t d = 0; d < dv; ++d) vf[static_cast<size_t>(c * dv + d)] = load(v, vv.at(b, j, n2) + d);
            }
            for (int64_t gi = 0; gi < group; ++gi) {
                const int64_t h = n2 * group + gi;
                for (int64_t d = 0; d < dk; ++d) qrow[static_cast<size_t>(d)] = load(q, qv.at(b, i, h) + d);
                float max = -INFINITY;
                for (int64_t c = 0; c < count; ++c) {
                    const float* kr = kf.data() + c * dk;
                    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
                    for (int64_t d = 0; d < dk; ++d) dot += qrow[static_cast<size_t>(d)] * kr[d];
                    const float score = dot * scale;
                    e[static_cast<size_t>(c)] = score;
                    if (score != score || score > max) max = max != max ? max : score;
                }
                for (int64_t d = 0; d < dv; ++d) acc[static_cast<size_t>(d)] = 0.0f;
                if (count > 0 && max != -INFINITY) {
                    float sum = 0.0f;
                    for (int64_t c = 0; c < count; ++c) {
                        const float w = std::exp(e[static_cast<size_t>(c)] - max);
                        sum += w;
                        const float* vr = vf.data() + c * dv;
#pragma omp simd
                        for (int64_t d = 0; d < dv; ++d) acc[static_cast<size_t>(d)] += w * vr[d];
                    }
                    for (int64_t d = 0; d < dv; ++d) acc[static_cast<size_t>(d)] /= sum;
                }
                for (int64_t d = 0; d < dv; ++d) store(y, yv.at(b, i, h) + d, acc[static_cast<size_t>(d)]);
            }
        }
    }
    return 0;
}
