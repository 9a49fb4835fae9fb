// Baseline for engram_gate_fusion: threaded C++ in fp32, two passes over an fp32 workspace
// holding vg and n ([B, L, HC*D] each). Pass 1, OpenMP over the (b, l, hc) rows of D: the
// RMSNorms of keys and hidden_states, their scaled dot product, the gate, vg and its RMSNorm.
// Pass 2, OpenMP over tokens with the channels innermost (vectorized): the causal dilated
// depthwise convolution over [conv_state | n] with the weights transposed to [K, HC*D] once
// per call, SiLU and the residual, then conv_state_out. oneDNN 2.6 has no RMS normalization
// and no gate; its depthwise convolution alone would need n transposed to [B, C, L] and
// another pass, so a framework's fused C++ path is what this measures.
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

struct Engram {
    std::int64_t batch = 0, length = 0, heads = 0, dim = 0, taps = 0, dilation = 1;
    std::int64_t state() const { return (taps - 1) * dilation; }
    std::int64_t channels() const { return heads * dim; }
    std::int64_t elements() const { return batch * length * heads * dim; }
};

const void* input_data(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present ? a->tensors[0].data : nullptr;
}

// Empty on success, else a message for hb_fail.
std::string shape_of(const hb_call* call, Engram& g) {
    const hb_arg* keys = hb_input(call, "keys");
    if (!keys || !hb_output(call, "output") || !hb_output(call, "conv_state_out"))
        return "engram_gate_fusion: expected input keys and outputs output, conv_state_out";
    const hb_tensor& k = keys->tensors[0];
    if (k.rank != 4 || k.dtype != HB_BFLOAT16) return "engram_gate_fusion: keys must be bfloat16 [B, L, HC, D]";
    for (int i = 0; i < call->num_inputs; ++i)
        if (call->inputs[i].present && !hb_is_contiguous(&call->inputs[i].tensors[0]))
            return "engram_gate_fusion: only contiguous tensors are supported";
    g.batch = k.shape[0];
    g.length = k.shape[1];
    g.heads = k.shape[2];
    g.dim = k.shape[3];
    g.taps = hb_attr_int(call, "kernel_size", 4);
    g.dilation = hb_attr_int(call, "dilation", 3);
    if (g.taps < 2 || g.dilation < 1) return "engram_gate_fusion: kernel_size >= 2 and dilation >= 1";
    return {};
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Engram g;
    if (!shape_of(call, g).empty()) return 0;
    return static_cast<std::uint64_t>(2 * g.elements()) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Engram g;
    if (const std::string error = shape_of(call, g); !error.empty()) return hb_fail(call, 2, error.c_str());
    if (call->workspace_bytes < static_cast<std::uint64_t>(2 * g.elements()) * sizeof(float))
        return hb_fail(call, 2, "engram_gate_fusion: the workspace is too small");
    const auto* keys = static_cast<const BFloat16*>(input_data(call, "keys"));
    const auto* hidden = static_cast<const BFloat16*>(input_data(call, "hidden_states"));
    const auto* value = static_cast<const BFloat16*>(input_data(call, "value"));
    const auto* norm1 = static_cast<const float*>(input_data(call, "norm1_weight"));
    const auto* norm2 = static_cast<const float*>(input_data(call, "norm2_weight"));
    const auto* conv_norm = static_cast<const float*>(input_data(call, "conv_norm_weight"));
    const auto* conv_weight = static_cast<const float*>(input_data(call, "conv_weight"));
    const auto* state_in = static_cast<const BFloat16*>(input_data(call, "conv_state"));
    auto* output = static_cast<BFloat16*>(hb_output(call, "output")->tensors[0].data);
    auto* state_out = static_cast<BFloat16*>(hb_output(call, "conv_state_out")->tensors[0].data);
    const auto eps = static_cast<float>(hb_attr_float(call, "norm_eps", 1e-5));
    const std::int64_t d_n = g.dim, c_n = g.channels(), s_n = g.state(), rows = g.batch * g.length * g.heads;
    float* vg = static_cast<float*>(call->workspace);
    float* n = vg + g.elements();
    const float inv_sqrt_d = 1.f / std::sqrt(static_cast<float>(d_n));

#pragma omp parallel for schedule(static)
    for (std::int64_t row = 0; row < rows; ++row) {
        const std::int64_t hc = row % g.heads, token = row / g.heads;
        const BFloat16* k = keys + row * d_n;
        const BFloat16* q = hidden + row * d_n;
        const float* w1 = norm1 + hc * d_n;
        const float* w2 = norm2 + hc * d_n;
        float kk = 0.f, qq = 0.f, kq = 0.f;
#pragma omp simd reduction(+ : kk, qq, kq)
        for (std::int64_t d = 0; d < d_n; ++d) {
            const float a = to_f32(k[d]), b = to_f32(q[d]);
            kk += a * a;
            qq += b * b;
            kq += (a * w1[d]) * (b * w2[d]);
        }
        const float r = kq / (std::sqrt(kk / d_n + eps) * std::sqrt(qq / d_n + eps)) * inv_sqrt_d;
        const float magnitude = std::sqrt(r != r ? r : std::fmax(std::fabs(r), 1e-6f));
        const float signed_root = r > 0 ? magnitude : r < 0 ? -magnitude : r == 0 ? 0.f : r;
        const float gate = 1.f / (1.f + std::exp(-signed_root));
        float* v = vg + row * d_n;
        const BFloat16* val = value + token * d_n;
        float vv = 0.f;
#pragma omp simd reduction(+ : vv)
        for (std::int64_t d = 0; d < d_n; ++d) {
            v[d] = gate * to_f32(val[d]);
            vv += v[d] * v[d];
        }
        const float rv = 1.f / std::sqrt(vv / d_n + eps);
        const float* wc = conv_norm + hc * d_n;
        float* nr = n + row * d_n;
#pragma omp simd
        for (std::int64_t d = 0; d < d_n; ++d) nr[d] = v[d] * rv * wc[d];
    }

    std::vector<float> taps(static_cast<std::size_t>(g.taps * c_n));  // [K, C]
    for (std::int64_t c = 0; c < c_n; ++c)
        for (std::int64_t t = 0; t < g.taps; ++t) taps[static_cast<std::size_t>(t * c_n + c)] = conv_weight[c * g.taps + t];
    const float* tw = taps.data();
#pragma omp parallel
    {
        std::vector<float> acc(static_cast<std::size_t>(c_n));
        float* a = acc.data();
#pragma omp for schedule(static)
        for (std::int64_t token = 0; token < g.batch * g.length; ++token) {
            const std::int64_t b = token / g.length, l = token % g.length;
            for (std::int64_t c = 0; c < c_n; ++c) a[c] = 0.f;
            for (std::int64_t tap = 0; tap < g.taps; ++tap) {
                const std::int64_t t = l + tap * g.dilation;  // step of [state | n]
                const float* w = tw + tap * c_n;
                if (t >= s_n) {
                    const float* src = n + (b * g.length + t - s_n) * c_n;
#pragma omp simd
                    for (std::int64_t c = 0; c < c_n; ++c) a[c] += w[c] * src[c];
                } else if (state_in) {
                    const BFloat16* src = state_in + b * c_n * s_n + t;
                    for (std::int64_t c = 0; c < c_n; ++c) a[c] += w[c] * to_f32(src[c * s_n]);
                }
            }
            const float* v = vg + token * c_n;
            BFloat16* y = output + token * c_n;
#pragma omp simd
            for (std::int64_t c = 0; c < c_n; ++c) y[c] = from_f32<BFloat16>(v[c] + a[c] / (1.f + std::exp(-a[c])));
        }
#pragma omp for schedule(static)
        for (std::int64_t bc = 0; bc < g.batch * c_n; ++bc) {
            const std::int64_t b = bc / c_n, c = bc % c_n;
            for (std::int64_t s = 0; s < s_n; ++s) {
                const std::int64_t t = g.length + s;
                const float x = t < s_n ? (state_in ? to_f32(state_in[bc * s_n + t]) : 0.f)
                                        : n[(b * g.length + t - s_n) * c_n + c];
                state_out[bc * s_n + s] = from_f32<BFloat16>(x);
            }
        }
    }
    return 0;
}
