// Baseline for sparse_flash_attention: threaded C++ in fp32 (oneDNN has no gather, and one
// matmul per (query row, KV head) over its topK gathered keys would be dominated by call
// overhead). OpenMP over (batch, KV head, query row): the row's list deduplicated and cut at
// the causal limit, its key and value rows gathered and widened once into thread-local
// buffers and shared by the G query heads of the KV head; scores four keys at a time, a
// NaN-propagating maximum, exponentials, and the weighted sum of value rows, vectorized by the
// compiler (-O3 -march=native).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

struct Sparse {
    const hb_tensor *q = nullptr, *k = nullptr, *v = nullptr, *idx = nullptr;
    hb_tensor* y = nullptr;
    bool bsnd = true;
    std::int64_t batch = 1, s1 = 1, heads = 1, s2 = 1, kv_heads = 1, dk = 1, dv = 1, top_k = 1;
    float scale = 1;
    bool causal = false;
    std::int64_t at(std::int64_t b, std::int64_t pos, std::int64_t head, std::int64_t seq, std::int64_t nheads,
                    std::int64_t dim) const {
        return bsnd ? ((b * seq + pos) * nheads + head) * dim : ((b * nheads + head) * seq + pos) * dim;
    }
};

std::string sparse_of(const hb_call* call, Sparse& s) {
    const hb_arg* q = hb_input(call, "query");
    const hb_arg* k = hb_input(call, "key");
    const hb_arg* v = hb_input(call, "value");
    const hb_arg* idx = hb_input(call, "sparseIndices");
    const hb_arg* y = hb_output(call, "y");
    if (!q || !k || !v || !idx || !y) return "sparse_flash_attention: expected query, key, value, sparseIndices and y";
    s.q = &q->tensors[0], s.k = &k->tensors[0], s.v = &v->tensors[0], s.idx = &idx->tensors[0], s.y = &y->tensors[0];
    for (const hb_tensor* t : {s.q, s.k, s.v, s.idx, static_cast<const hb_tensor*>(s.y)})
        if (t->rank != 4 || !hb_is_contiguous(t)) return "sparse_flash_attention: tensors must be contiguous and 4-D";
    if ((s.q->dtype != HB_FLOAT16 && s.q->dtype != HB_BFLOAT16) || s.k->dtype != s.q->dtype || s.v->dtype != s.q->dtype ||
        s.idx->dtype != HB_INT32)
        return "sparse_flash_attention: query, key, value float16 or bfloat16 alike, sparseIndices int32";
    const char* layout = hb_attr_string(call, "inputLayout", "BSND");
    if (std::strcmp(layout, "BSND") != 0 && std::strcmp(layout, "BNSD") != 0)
        return "sparse_flash_attention: inputLayout must be BSND or BNSD";
    s.bsnd = std::strcmp(layout, "BSND") == 0;
    const int seq = s.bsnd ? 1 : 2, heads = s.bsnd ? 2 : 1;
    s.batch = s.q->shape[0];
    s.s1 = s.q->shape[seq];
    s.heads = s.q->shape[heads];
    s.s2 = s.k->shape[seq];
    s.kv_heads = s.k->shape[heads];
    s.dk = s.q->shape[3];
    s.dv = s.v->shape[3];
    s.top_k = s.idx->shape[3];
    if (s.kv_heads < 1 || s.heads % s.kv_heads != 0) return "sparse_flash_attention: N2 must divide N1";
    s.scale = static_cast<float>(hb_attr_float(call, "scaleValue", 1.0));
    s.causal = hb_attr_int(call, "is_causal", 0) != 0;
    return {};
}

template <typename Element>
void run(const Sparse& s) {
    const auto* q = static_cast<const Element*>(s.q->data);
    const auto* k = static_cast<const Element*>(s.k->data);
    const auto* v = static_cast<const Element*>(s.v->data);
    auto* y = static_cast<Element*>(s.y->data);
    const auto* indices = static_cast<const std::int32_t*>(s.idx->data);
    const std::int64_t group = s.heads / s.kv_heads, dk = s.dk, dv = s.dv;
#pragma omp parallel
    {
        std::vector<char> seen(static_cast<std::size_t>(s.s2), 0);
        std::vector<std::int32_t> keys(static_cast<std::size_t>(s.top_k));
        std::vector<float> kf(static_cast<std::size_t>(s.top_k * dk)), vf(static_cast<std::size_t>(s.top_k * dv));
        std::vector<float> qf(static_cast<std::size_t>(dk)), e(static_cast<std::size_t>(s.top_k)), acc(static_cast<std::size_t>(dv));
#pragma omp for schedule(dynamic, 2)
        for (std::int64_t task = 0; task < s.batch * s.kv_heads * s.s1; ++task) {
            const std::int64_t b = task / (s.kv_heads * s.s1), n2 = task / s.s1 % s.kv_heads, i = task % s.s1;
            const std::int64_t limit = s.causal ? i + s.s2 - s.s1 : s.s2 - 1;
            const std::int32_t* list = indices + s.at(b, i, n2, s.s1, s.kv_heads, s.top_k);
            std::int64_t count = 0;
            for (std::int64_t t = 0; t < s.top_k; ++t) {
                const std::int32_t j = list[t];
                if (j > limit || seen[static_cast<std::size_t>(j)]) continue;
                seen[static_cast<std::size_t>(j)] = 1;
                keys[static_cast<std::size_t>(count++)] = j;
            }
            for (std::int64_t c = 0; c < count; ++c) {
                const std::int32_t j = keys[static_cast<std::size_t>(c)];
                seen[static_cast<std::size_t>(j)] = 0;
                const Element* kr = k + s.at(b, j, n2, s.s2, s.kv_heads, dk);
                const Element* vr = v + s.at(b, j, n2, s.s2, s.kv_heads, dv);
                float* kd = kf.data() + c * dk;
                float* vd = vf.data() + c * dv;
#pragma omp simd
                for (std::int64_t d = 0; d < dk; ++d) kd[d] = to_f32(kr[d]);
#pragma omp simd
                for (std::int64_t d = 0; d < dv; ++d) vd[d] = to_f32(vr[d]);
            }
            for (std::int64_t gi = 0; gi < group; ++gi) {
                const std::int64_t h = n2 * group + gi;
                const Element* qr = q + s.at(b, i, h, s.s1, s.heads, dk);
#pragma omp simd
                for (std::int64_t d = 0; d < dk; ++d) qf[static_cast<std::size_t>(d)] = to_f32(qr[d]);
                float max = -INFINITY;
                std::int64_t c = 0;
                for (; c + 4 <= count; c += 4) {
                    const float* k0 = kf.data() + c * dk;
                    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
#pragma omp simd reduction(+ : d0, d1, d2, d3)
                    for (std::int64_t d = 0; d < dk; ++d) {
                        const float x = qf[static_cast<std::size_t>(d)];
                        d0 += x * k0[d];
                        d1 += x * k0[dk + d];
                        d2 += x * k0[2 * dk + d];
                        d3 += x * k0[3 * dk + d];
                    }
                    e[static_cast<std::size_t>(c)] = d0 * s.scale;
                    e[static_cast<std::size_t>(c + 1)] = d1 * s.scale;
                    e[static_cast<std::size_t>(c + 2)] = d2 * s.scale;
                    e[static_cast<std::size_t>(c + 3)] = d3 * s.scale;
                }
                for (; c < count; ++c) {
                    const float* kr = kf.data() + c * dk;
                    float dot = 0;
#pragma omp simd reduction(+ : dot)
                    for (std::int64_t d = 0; d < dk; ++d) dot += qf[static_cast<std::size_t>(d)] * kr[d];
                    e[static_cast<std::size_t>(c)] = dot * s.scale;
                }
                for (c = 0; c < count; ++c) {
                    const float score = e[static_cast<std::size_t>(c)];
                    if (score != score || score > max) max = max != max ? max : score;
                }
                std::fill(acc.begin(), acc.end(), 0.0f);
                if (count > 0 && max != -INFINITY) {
                    float sum = 0;
                    for (c = 0; c < count; ++c) {
                        const float w = std::exp(e[static_cast<std::size_t>(c)] - max);
                        sum += w;
                        const float* vr = vf.data() + c * dv;
#pragma omp simd
                        for (std::int64_t d = 0; d < dv; ++d) acc[static_cast<std::size_t>(d)] += w * vr[d];
                    }
                    const float inv = 1.0f / sum;
                    for (auto& a : acc) a *= inv;
                }
                Element* yr = y + s.at(b, i, h, s.s1, s.heads, dv);
                for (std::int64_t d = 0; d < dv; ++d) yr[d] = from_f32<Element>(acc[static_cast<std::size_t>(d)]);
            }
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Sparse s;
    if (const std::string error = sparse_of(call, s); !error.empty()) return hb_fail(call, 2, error.c_str());
    const auto* indices = static_cast<const std::int32_t*>(s.idx->data);
    const std::int64_t n = hb_numel(s.idx);
    int bad = 0;
#pragma omp parallel for simd reduction(| : bad) schedule(static)
    for (std::int64_t t = 0; t < n; ++t) bad |= indices[t] < 0 || indices[t] >= s.s2;
    if (bad) return hb_fail(call, 2, "sparse_flash_attention: an index is outside [0, S2)");
    return guarded(call, [&] {
        if (s.q->dtype == HB_FLOAT16) run<Half>(s);
        else run<BFloat16>(s);
        return 0;
    });
}
