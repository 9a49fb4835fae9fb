// Reference mla: q = [q_nope | q_rope], k = [k_nope | k_rope] on the head dim, values v, in
// the layout inputLayout names (BSND: [B, S, N, D]; BNSD: [B, N, S, D]); float16 or bfloat16.
// Query head h reads KV head h / G (G = Nq / numKVHeads); scale = scaleValue if > 0, else
// 1 / sqrt(dn + dr). Per query row, in fp32: scores over the keys the row may see (causal:
// j <= i + Skv - S), the row maximum (NaN sticks), e_j = exp(s_j - max), y = sum e_j v_j /
// sum e_j; a row that sees no key, or whose maximum is -inf, is 0. Keys (both parts side by
// side) and values are widened to fp32 once into the workspace, [B, Nkv, Skv, D]; OpenMP over
// blocks of query rows of one KV head, so that each key and value row is read once per block.
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
    const hb_tensor* t = nullptr;
    bool bsnd = true;
    int64_t batch = 0, seq = 0, heads = 0, dim = 0;
    int64_t at(int64_t b, int64_t s, int64_t n) const {
        return bsnd ? ((b * seq + s) * heads + n) * dim : ((b * heads + n) * seq + s) * dim;
    }
};

View view_of(const hb_tensor* t, bool bsnd) {
    View v;
    v.t = t;
    v.bsnd = bsnd;
    v.batch = t->shape[0];
    v.seq = bsnd ? t->shape[1] : t->shape[2];
    v.heads = bsnd ? t->shape[2] : t->shape[1];
    v.dim = t->shape[3];
    return v;
}

const char* const kNames[] = {"q_nope", "q_rope", "k_nope", "k_rope", "v"};

bool tensors_of(const hb_call* call, const hb_tensor* (&in)[5], const hb_tensor*& y) {
    for (int a = 0; a < 5; ++a) {
        const hb_arg* arg = hb_input(call, kNames[a]);
        if (!arg) return false;
        in[a] = &arg->tensors[0];
    }
    const hb_arg* ya = hb_output(call, "y");
    if (!ya) return false;
    y = &ya->tensors[0];
    return true;
}

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    const hb_tensor* in[5];
    const hb_tensor* y;
    if (!tensors_of(call, in, y)) return 0;
    return static_cast<uint64_t>(hb_numel(in[2]) + hb_numel(in[3]) + hb_numel(in[4])) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor* in[5];
    const hb_tensor* y;
    if (!tensors_of(call, in, y))
        return hb_fail(call, 1, "mla: expected inputs q_nope, q_rope, k_nope, k_rope, v and output y");
    for (const hb_tensor* t : in)
        if (t->rank != 4 || !hb_is_contiguous(t) || t->dtype != in[0]->dtype)
            return hb_fail(call, 2, "mla: every input must be a contiguous 4-D tensor of one dtype");
    if (in[0]->dtype != HB_FLOAT16 && in[0]->dtype != HB_BFLOAT16)
        return hb_fail(call, 2, "mla: inputs must be float16 or bfloat16");
    const char* layout = hb_attr_string(call, "inputLayout", "BSND");
    if (std::strcmp(layout, "BSND") != 0 && std::strcmp(layout, "BNSD") != 0)
        return hb_fail(call, 2, "mla: inputLayout must be BSND or BNSD");
    const bool bsnd = std::strcmp(layout, "BSND") == 0;
    const View qn = view_of(in[0], bsnd), qr = view_of(in[1], bsnd), kn = view_of(in[2], bsnd),
               kr = view_of(in[3], bsnd), vv = view_of(in[4], bsnd), yv = view_of(y, bsnd);
    const int64_t batch = qn.batch, s = qn.seq, heads = qn.heads, skv = kn.seq, kv_heads = kn.heads;
    const int64_t dn = qn.dim, dr = qr.dim, dqk = dn + dr, dv = vv.dim;
    if (kv_heads < 1 || heads % kv_heads != 0 || hb_attr_int(call, "numKVHeads", 1) != kv_heads)
        return hb_fail(call, 2, "mla: numKVHeads must equal k_nope's heads and divide the query heads");
    if (call->workspace_bytes < static_cast<uint64_t>(hb_numel(in[2]) + hb_numel(in[3]) + hb_numel(in[4])) * sizeof(float))
        return hb_fail(call, 2, "mla: the workspace is too small");
    const int64_t group = heads / kv_heads;
    const double given = hb_attr_float(call, "scaleValue", -1.0);
    const float scale = given > 0 ? static_cast<float>(given) : 1.0f / std::sqrt(static_cast<float>(dqk));
    const bool causal = hb_attr_int(call, "is_causal", 0) != 0;
    float* kf = static_cast<float*>(call->workspace);  // [B, Nkv, Skv, dn + dr]
    float* vf = kf + batch * kv_heads * skv * dqk;     // [B, Nkv, Skv, dv]
    constexpr int64_t kRows = 16;
    const int64_t rows = group * s, blocks = (rows + kRows - 1) / kRows;
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
        for (int64_t key = 0; key < batch * kv_heads * skv; ++key) {
            const int64_t b = key / (kv_heads * skv), n = key / skv % kv_heads, j = key % skv;
            for (int64_t d = 0; d < dn; ++d) kf[key * dqk + d] = load(*in[2], kn.at(b, j, n) + d);
            for (int64_t d = 0; d < dr; ++d) kf[key * dqk + dn + d] = load(*in[3], kr.at(b, j, n) + d);
            for (int64_t d = 0; d < dv; ++d) vf[key * dv + d] = load(*in[4], vv.at(b, j, n) + d);
        }
        // Blocks of up to kRows query rows of one (batch, KV head): row r = g * S + i of its G heads.
        std::vector<float> qb(static_cast<size_t>(kRows * dqk)), acc(static_cast<size_t>(kRows * dv));
        std::vector<float> scores(static_cast<size_t>(kRows * skv)), max(kRows), sum(kRows);
        std::vector<int64_t> count(kRows);
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < batch * kv_heads * blocks; ++task) {
            const int64_t b = task / (kv_heads * blocks), kvh = task / blocks % kv_heads, r0 = task % blocks * kRows;
            const int64_t nr = r0 + kRows < rows ? kRows : rows - r0;
            const float* keys = kf + (b * kv_heads + kvh) * skv * dqk;
            const float* values = vf + (b * kv_heads + kvh) * skv * dv;
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
                for (int64_t d = 0; d < dn; ++d) qb[r * dqk + d] = load(*in[0], qn.at(b, i, h) + d);
                for (int64_t d = 0; d < dr; ++d) qb[r * dqk + dn + d] = load(*in[1], qr.at(b, i, h) + d);
                max[r] = -INFINITY;
                sum[r] = 0.0f;
            }
            for (int64_t j = 0; j < most; ++j) {
                const float* kr = keys + j * dqk;
                for (int64_t r = 0; r < nr; ++r) {
                    if (j >= count[r]) continue;
                    const float* qrow = qb.data() + r * dqk;
                    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
                    for (int64_t d = 0; d < dqk; ++d) dot += qrow[d] * kr[d];
                    const float score = dot * scale;
                    scores[r * skv + j] = score;
                    if (score != score || score > max[r]) max[r] = max[r] != max[r] ? max[r] : score;
                }
            }
            for (int64_t r = 0; r < nr; ++r) {
                for (int64_t d = 0; d < dv; ++d) acc[r * dv + d] = 0.0f;
                if (max[r] == -INFINITY) count[r] = 0;
                for (int64_t j = 0; j < count[r]; ++j) {
                    const float w = std::exp(scores[r * skv + j] - max[r]);
                    scores[r * skv + j] = w;
                    sum[r] += w;
                }
            }
            for (int64_t j = 0; j < most; ++j) {
                const float* vr = values + j * dv;
                for (int64_t r = 0; r < nr; ++r) {
                    if (j >= count[r]) continue;
                    const float w = scores[r * skv + j];
                    float* a = acc.data() + r * dv;
#pragma omp simd
                    for (int64_t d = 0; d < dv; ++d) a[d] += w * vr[d];
                }
            }
            for (int64_t r = 0; r < nr; ++r) {
                const int64_t h = kvh * group + (r0 + r) / s, i = (r0 + r) % s;
                const int64_t y0 = yv.at(b, i, h);
                for (int64_t d = 0; d < dv; ++d) store(*y, y0 + d, count[r] > 0 ? acc[r * dv + d] / sum[r] : 0.0f);
            }
        }
    }
    return 0;
}
