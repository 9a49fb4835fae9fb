// Reference mla_prolog (bfloat16 in and out, fp64 inside, intermediates never rounded): per
// token t of token_x [B, S, He],
//   c_q = RMSNorm(x w_dq; gamma_cq, eps_cq), RMSNorm(v) = (gamma * v) / sqrt(mean(v^2) + eps)
//   qr = c_q w_uq_qr, head n's columns n (D + Dr) .. (n + 1)(D + Dr) - 1 (content, then rotary)
//   query[t, n] = qr[t, n, :D] w_uk[n];  query_rope[t, n] = RoPE(qr[t, n, D:])
//   u = x w_dkv_kr;  c_kv = RMSNorm(u[:Hckv]; gamma_ckv, eps_ckv);  k_rope = RoPE(u[Hckv:])
// with rotate-half RoPE (h = Dr / 2): out[j] = v[j] cos[j] - v[j+h] sin[j], out[j+h] =
// v[j+h] cos[j+h] + v[j] sin[j+h]. Each projection is a plain loop over tokens and weight
// rows, OpenMP over blocks of output columns (weights are read once per block); the fp64
// intermediates live in the workspace. fp64, not fp32: with inputs in the thousands an fp32
// sum of thousands of products that cancels to a small k_rope value lands in the precision
// gate's normal region with a few percent of error (the same reason the level-3 convolution
// references sum in fp64).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

const char* const kInputs[] = {"token_x", "w_dq", "w_uq_qr", "w_uk", "w_dkv_kr",
                               "rmsnorm_gamma_cq", "rmsnorm_gamma_ckv", "rope_sin", "rope_cos"};
const char* const kOutputs[] = {"query", "query_rope", "c_kv", "k_rope"};

struct Dims {
    int64_t tokens, hidden, cq, heads, head_dim, ckv, rope;
    int64_t qr_width() const { return heads * (head_dim + rope); }
    // fp64 workspace: x, x w_dq, c_q, qr, u.
    int64_t workspace_values() const {
        return tokens * (hidden + 2 * cq + qr_width() + ckv + rope);
    }
};

bool dims_of(const hb_call* call, const hb_tensor* (&in)[9], hb_tensor* (&out)[4], Dims& d) {
    for (int a = 0; a < 9; ++a) {
        const hb_arg* arg = hb_input(call, kInputs[a]);
        if (!arg) return false;
        in[a] = &arg->tensors[0];
    }
    for (int a = 0; a < 4; ++a) {
        hb_arg* arg = hb_output(call, kOutputs[a]);
        if (!arg) return false;
        out[a] = &arg->tensors[0];
    }
    if (in[0]->rank != 3 || in[1]->rank != 2 || in[3]->rank != 3 || in[7]->rank != 3) return false;
    d.tokens = in[0]->shape[0] * in[0]->shape[1];
    d.hidden = in[0]->shape[2];
    d.cq = in[1]->shape[1];
    d.heads = in[3]->shape[0];
    d.head_dim = in[3]->shape[1];
    d.ckv = in[3]->shape[2];
    d.rope = in[7]->shape[2];
    return true;
}

const uint16_t* bits(const hb_tensor* t) { return static_cast<const uint16_t*>(t->data); }

// c[t, o] = sum_k a[t, k] w[k, o] for o in [0, n): a fp64 [tokens, k] (row stride lda), w
// bfloat16 [k, n] (row stride ldw), c fp64 (row stride ldc). Blocks of 64 output columns
// across threads; each block's accumulators stay in registers while its weight rows stream.
void project(const double* a, int64_t lda, const uint16_t* w, int64_t ldw, int64_t tokens, int64_t k, int64_t n,
             double* c, int64_t ldc) {
    constexpr int64_t kBlock = 64;
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (int64_t block = 0; block < (n + kBlock - 1) / kBlock; ++block)
        for (int64_t t = 0; t < tokens; ++t) {
            const int64_t o0 = block * kBlock, width = std::min(kBlock, n - o0);
            double acc[kBlock] = {};
            for (int64_t r = 0; r < k; ++r) {
                const double x = a[t * lda + r];
                const uint16_t* wr = w + r * ldw + o0;
#pragma omp simd
                for (int64_t o = 0; o < width; ++o) acc[o] += x * hb_bf16_to_f32(wr[o]);
            }
            for (int64_t o = 0; o < width; ++o) c[t * ldc + o0 + o] = acc[o];
        }
}

double bf16(uint16_t bits) { return hb_bf16_to_f32(bits); }
uint16_t to_bf16(double v) { return hb_f32_to_bf16(static_cast<float>(v)); }

// out may be v.
void rms_norm(const double* v, const uint16_t* gamma, int64_t n, double eps, double* out) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += v[i] * v[i];
    const double root = std::sqrt(sum / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i) out[i] = (bf16(gamma[i]) * v[i]) / root;
}

void rope(const double* v, const uint16_t* sin, const uint16_t* cos, int64_t width, uint16_t* out) {
    const int64_t h = width / 2;
    for (int64_t j = 0; j < h; ++j) {
        const double lo = v[j] * bf16(cos[j]) - v[j + h] * bf16(sin[j]);
        const double hi = v[j + h] * bf16(cos[j + h]) + v[j] * bf16(sin[j + h]);
        out[j] = to_bf16(lo);
        out[j + h] = to_bf16(hi);
    }
}

}  // namespace

extern "C" HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call* call) {
    const hb_tensor* in[9];
    hb_tensor* out[4];
    Dims d;
    if (!dims_of(call, in, out, d)) return 0;
    return static_cast<uint64_t>(d.workspace_values()) * sizeof(double);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor* in[9];
    hb_tensor* out[4];
    Dims d;
    if (!dims_of(call, in, out, d))
        return hb_fail(call, 1, "mla_prolog: expected the nine inputs and four outputs of the interface, x [B, S, He]");
    for (const hb_tensor* t : in)
        if (t->dtype != HB_BFLOAT16 || !hb_is_contiguous(t))
            return hb_fail(call, 2, "mla_prolog: every input must be contiguous bfloat16");
    if (d.rope % 2 != 0 || hb_attr_int(call, "n_heads", 0) != d.heads)
        return hb_fail(call, 2, "mla_prolog: Dr must be even and n_heads must equal w_uk's first dim");
    if (call->workspace_bytes < static_cast<uint64_t>(d.workspace_values()) * sizeof(double))
        return hb_fail(call, 2, "mla_prolog: the workspace is too small");
    const double eps_cq = hb_attr_float(call, "rmsnorm_epsilon_cq", 1e-5);
    const double eps_ckv = hb_attr_float(call, "rmsnorm_epsilon_ckv", 1e-5);
    const int64_t tokens = d.tokens, qr_width = d.qr_width(), kv_width = d.ckv + d.rope, head_width = d.head_dim + d.rope;
    double* x = static_cast<double*>(call->workspace);
    double* a = x + tokens * d.hidden;
    double* c_q = a + tokens * d.cq;
    double* qr = c_q + tokens * d.cq;
    double* u = qr + tokens * qr_width;
    const uint16_t* sin = bits(in[7]);
    const uint16_t* cos = bits(in[8]);
    auto* query = static_cast<uint16_t*>(out[0]->data);
    auto* query_rope = static_cast<uint16_t*>(out[1]->data);
    auto* c_kv = static_cast<uint16_t*>(out[2]->data);
    auto* k_rope = static_cast<uint16_t*>(out[3]->data);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
        for (int64_t i = 0; i < tokens * d.hidden; ++i) x[i] = bf16(bits(in[0])[i]);
        project(x, d.hidden, bits(in[1]), d.cq, tokens, d.hidden, d.cq, a, d.cq);
        project(x, d.hidden, bits(in[4]), kv_width, tokens, d.hidden, kv_width, u, kv_width);
#pragma omp for schedule(static)
        for (int64_t t = 0; t < tokens; ++t) {
            rms_norm(a + t * d.cq, bits(in[5]), d.cq, eps_cq, c_q + t * d.cq);
            // c_kv in place in u (its value is only rounded on the way out).
            double* ckv_row = u + t * kv_width;
            rms_norm(ckv_row, bits(in[6]), d.ckv, eps_ckv, ckv_row);
            for (int64_t i = 0; i < d.ckv; ++i) c_kv[t * d.ckv + i] = to_bf16(ckv_row[i]);
            rope(u + t * kv_width + d.ckv, sin + t * d.rope, cos + t * d.rope, d.rope, k_rope + t * d.rope);
        }
        project(c_q, d.cq, bits(in[2]), qr_width, tokens, d.cq, qr_width, qr, qr_width);
        // query[t, n, :] = qr[t, n, :D] w_uk[n], written in bfloat16 as it is accumulated.
#pragma omp for schedule(static) collapse(2)
        for (int64_t n = 0; n < d.heads; ++n)
            for (int64_t t = 0; t < tokens; ++t) {
                const double* qc = qr + t * qr_width + n * head_width;
                const uint16_t* w = bits(in[3]) + n * d.head_dim * d.ckv;
                for (int64_t o0 = 0; o0 < d.ckv; o0 += 64) {
                    const int64_t width = std::min<int64_t>(64, d.ckv - o0);
                    double acc[64] = {};
                    for (int64_t r = 0; r < d.head_dim; ++r) {
                        const double xr = qc[r];
#pragma omp simd
                        for (int64_t o = 0; o < width; ++o) acc[o] += xr * hb_bf16_to_f32(w[r * d.ckv + o0 + o]);
                    }
                    for (int64_t o = 0; o < width; ++o) query[(t * d.heads + n) * d.ckv + o0 + o] = to_bf16(acc[o]);
                }
                rope(qc + d.head_dim, sin + t * d.rope, cos + t * d.rope, d.rope, query_rope + (t * d.heads + n) * d.rope);
            }
    }
    return 0;
}
