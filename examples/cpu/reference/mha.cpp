// Reference mha: query [B, S, N, D], key and value [B, Skv, N, D] (BSND, float16 or
// bfloat16), y [B, S, N, D]; query head h reads key and value head h. Per query row,
// in fp32: scores s_j = (q . k_j) * scale over the keys the row may see (causal: j <= i +
// Skv - S), the row maximum (NaN sticks), e_j = exp(s_j - max), y = sum e_j v_j / sum e_j.
// A row that sees no key, or whose maximum is -inf, is 0; masked keys are never touched.
// Keys and values are widened to fp32 once into the workspace; OpenMP over blocks of query
// rows of one head, so that each key and value row is read once per block.
#include <omp.h>

#include <cmath>
#include <cstdint>
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

struct Shape4 {
    int64_t b, s, n, d;
};

bool read_call(const hb_call* call, const hb_tensor*& q, const hb_tensor*& k, const hb_tensor*& v,
               const hb_tensor*& y) {
    const hb_arg* qa = hb_input(call, "query");
    const hb_arg* ka = hb_input(call, "key");
    const hb_arg* va = hb_input(call, "value");
    const hb_arg* ya = hb_output(call, "y");
    if (!qa || !ka || !va || !ya) return false;
    q = &qa->tensors[0];
    k = &ka->tensors[0];
    v = &va->tensors[0];
    y = &ya->tensors[0];
    return true;
}

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    const hb_tensor *q, *k, *v, *y;
    if (!read_call(call, q, k, v, y) || k->rank != 4) return 0;
    return static_cast<uint64_t>(hb_numel(k) + hb_numel(v)) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor *q, *k, *v, *y;
    if (!read_call(call, q, k, v, y)) return hb_fail(call, 1, "mha: expected inputs query, key, value and output y");
    if (q->rank != 4 || k->rank != 4 || v->rank != 4 || y->rank != 4)
        return hb_fail(call, 2, "mha: query, key, value and y must be 4-D [B, S, N, D]");
    if (!hb_is_contiguous(q) || !hb_is_contiguous(k) || !hb_is_contiguous(v) || !hb_is_contiguous(y))
        return hb_fail(call, 3, "mha: only contiguous tensors are supported");
    if ((q->dtype != HB_FLOAT16 && q->dtype != HB_BFLOAT16) || k->dtype != q->dtype || v->dtype != q->dtype)
        return hb_fail(call, 2, "mha: query, key and value must share one dtype, float16 or bfloat16");
    const Shape4 qs{q->shape[0], q->shape[1], q->shape[2], q->shape[3]};
    const Shape4 ks{k->shape[0], k->shape[1], k->shape[2], k->shape[3]};
    if (ks.n != qs.n || ks.d != qs.d || v->shape[3] != qs.d)
        return hb_fail(call, 2, "mha: query, key and value must have the same heads N and head dim D");
    if (call->workspace_bytes < static_cast<uint64_t>(hb_numel(k) + hb_numel(v)) * sizeof(float))
        return hb_fail(call, 2, "mha: the workspace is too small");
    const int64_t batch = qs.b, s = qs.s, heads = qs.n, skv = ks.s, kv_heads = ks.n, dim = qs.d;
    const int64_t group = 1;  // every head has its own key and value head
    const double given = hb_attr_float(call, "scaleValue", -1.0);
    const float scale = given > 0 ? static_cast<float>(given) : 1.0f / std::sqrt(static_cast<float>(dim));
    const bool causal = hb_attr_int(call, "is_causal", 0) != 0;
    float* kf = static_cast<float*>(call->workspace);
    float* vf = kf + hb_numel(k);
    // Tasks: blocks of up to kRows query rows of one (batch, head), so that each key and value
    // row is read once per block.
    constexpr int64_t kRows = 16;
    const int64_t rows = group * s, blocks = (rows + kRows - 1) / kRows;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        // Keys and values in fp32, as stored ([B, Skv, Nkv, D]).
#pragma omp for schedule(static)
        for (int64_t i = 0; i < hb_numel(k); ++i) {
            kf[i] = load(*k, i);
            vf[i] = load(*v, i);
        }
        std::vector<float> qb(static_cast<size_t>(kRows * dim)), acc(static_cast<size_t>(kRows * dim));
        std::vector<float> scores(static_cast<size_t>(kRows * skv)), max(kRows), sum(kRows);
        std::vector<int64_t> count(kRows);
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < batch * kv_heads * blocks; ++task) {
            const int64_t b = task / (kv_heads * blocks), kvh = task / blocks % kv_heads, r0 = task % blocks * kRows;
            const int64_t nr = r0 + kRows < rows ? kRows : rows - r0;
            int64_t most = 0;
            for (int64_t r = 0; r < nr; ++r) {
                const int64_t h = kvh * group + (r0 + r) / s, i = (r0 + r) % s;
                int64_t c = skv;
                if (causal) {
                    const int64_t limit = i + skv - s;  // keys j <= limit
                    c = limit < 0 ? 0 : (limit + 1 < skv ? limit + 1 : skv);
                }
                count[r] = c;
                most = c > most ? c : most;
                for (int64_t d = 0; d < dim; ++d) qb[r * dim + d] = load(*q, ((b * s + i) * heads + h) * dim + d);
                max[r] = -INFINITY;
                sum[r] = 0.0f;
            }
            // Scores: s = (q . k_j) * scale for the keys each row sees; the row maximum (NaN sticks).
            for (int64_t j = 0; j < most; ++j) {
                const float* kr = kf + ((b * skv + j) * kv_heads + kvh) * dim;
                for (int64_t r = 0; r < nr; ++r) {
                    if (j >= count[r]) continue;
                    const float* qr = qb.data() + r * dim;
                    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
                    for (int64_t d = 0; d < dim; ++d) dot += qr[d] * kr[d];
                    const float score = dot * scale;
                    scores[r * skv + j] = score;
                    if (score != score || score > max[r]) max[r] = max[r] != max[r] ? max[r] : score;
                }
            }
            // Weights e_j = exp(s_j - max); y = sum e_j v_j / sum e_j. A row without keys, or
            // whose maximum is -inf, stays 0.
            for (int64_t r = 0; r < nr; ++r) {
                for (int64_t d = 0; d < dim; ++d) acc[r * dim + d] = 0.0f;
                if (max[r] == -INFINITY) count[r] = 0;
                for (int64_t j = 0; j < count[r]; ++j) {
                    const float w = std::exp(scores[r * skv + j] - max[r]);
                    scores[r * skv + j] = w;
                    sum[r] += w;
                }
            }
            for (int64_t j = 0; j < most; ++j) {
                const float* vr = vf + ((b * skv + j) * kv_heads + kvh) * dim;
                for (int64_t r = 0; r < nr; ++r) {
                    if (j >= count[r]) continue;
                    const float w = scores[r * skv + j];
                    float* a = acc.data() + r * dim;
#pragma omp simd
                    for (int64_t d = 0; d < dim; ++d) a[d] += w * vr[d];
                }
            }
            for (int64_t r = 0; r < nr; ++r) {
                const int64_t h = kvh * group + (r0 + r) / s, i = (r0 + r) % s;
                const int64_t y0 = ((b * s + i) * heads + h) * dim;
                for (int64_t d = 0; d < dim; ++d)
                    store(*y, y0 + d, count[r] > 0 ? acc[r * dim + d] / sum[r] : 0.0f);
            }
        }
    }
    return 0;
}
