// Reference engram_gate_fusion, in fp32. Per (b, l, hc) row of D:
//   kn = keys / sqrt(mean(keys^2) + eps) * norm1[hc],  qn likewise with norm2
//   r = sum(kn * qn) / sqrt(D);  gate = sigmoid(sqrt(max(|r|, 1e-6)) * sign(r))
//   vg = gate * value[b, l];  n = vg / sqrt(mean(vg^2) + eps) * conv_norm[hc]
// then per channel c = hc * D + d over time, with Xc = [conv_state (or zeros) | n]:
//   conv[l] = sum over k < K of conv_weight[c, 0, k] * Xc[l + k * dilation]
//   output = vg + conv / (1 + e^-conv);  conv_state_out = the last (K - 1) * dilation steps of Xc
// keys, hidden_states, value, conv_state and both outputs are bfloat16; weights float32.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

namespace {

const void* input_data(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present ? a->tensors[0].data : nullptr;
}

float bf16(const uint16_t* p, int64_t i) { return hb_bf16_to_f32(p[i]); }

float rms(const uint16_t* v, int64_t n, float eps) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum += bf16(v, i) * bf16(v, i);
    return std::sqrt(sum / static_cast<float>(n) + eps);
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* keys_arg = hb_input(call, "keys");
    const hb_arg* out_arg = hb_output(call, "output");
    const hb_arg* state_arg = hb_output(call, "conv_state_out");
    if (!keys_arg || !out_arg || !state_arg)
        return hb_fail(call, 1, "engram_gate_fusion: expected input keys and outputs output, conv_state_out");
    const hb_tensor& k = keys_arg->tensors[0];
    if (k.rank != 4 || k.dtype != HB_BFLOAT16) return hb_fail(call, 2, "engram_gate_fusion: keys must be bfloat16 [B, L, HC, D]");
    for (int i = 0; i < call->num_inputs; ++i)
        if (call->inputs[i].present && !hb_is_contiguous(&call->inputs[i].tensors[0]))
            return hb_fail(call, 3, "engram_gate_fusion: only contiguous tensors are supported");
    const int64_t batch = k.shape[0], length = k.shape[1], heads = k.shape[2], dim = k.shape[3];
    const int64_t taps = hb_attr_int(call, "kernel_size", 4), dilation = hb_attr_int(call, "dilation", 3);
    const int64_t channels = heads * dim, state = (taps - 1) * dilation, rows = batch * length * heads;
    const float eps = static_cast<float>(hb_attr_float(call, "norm_eps", 1e-5));
    const auto* keys = static_cast<const uint16_t*>(k.data);
    const auto* hidden = static_cast<const uint16_t*>(input_data(call, "hidden_states"));
    const auto* value = static_cast<const uint16_t*>(input_data(call, "value"));
    const auto* norm1 = static_cast<const float*>(input_data(call, "norm1_weight"));
    const auto* norm2 = static_cast<const float*>(input_data(call, "norm2_weight"));
    const auto* conv_norm = static_cast<const float*>(input_data(call, "conv_norm_weight"));
    const auto* conv_weight = static_cast<const float*>(input_data(call, "conv_weight"));
    const auto* state_in = static_cast<const uint16_t*>(input_data(call, "conv_state"));
    auto* output = static_cast<uint16_t*>(out_arg->tensors[0].data);
    auto* state_out = static_cast<uint16_t*>(state_arg->tensors[0].data);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    std::vector<float> vg(static_cast<size_t>(rows * dim)), n(vg.size());

#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t hc = row % heads, token = row / heads;
        const float rk = rms(keys + row * dim, dim, eps), rq = rms(hidden + row * dim, dim, eps);
        float dot = 0.0f;
        for (int64_t d = 0; d < dim; ++d)
            dot += (bf16(keys, row * dim + d) / rk * norm1[hc * dim + d]) * (bf16(hidden, row * dim + d) / rq * norm2[hc * dim + d]);
        const float r = dot / std::sqrt(static_cast<float>(dim));
        const float sign = r > 0 ? 1.0f : r < 0 ? -1.0f : r == 0 ? 0.0f : r;  // NaN stays NaN
        const float magnitude = r != r ? r : std::fmax(std::fabs(r), 1e-6f);
        const float gate = 1.0f / (1.0f + std::exp(-(std::sqrt(magnitude) * sign)));
        float sum = 0.0f;
        for (int64_t d = 0; d < dim; ++d) {
            const float v = gate * bf16(value, token * dim + d);
            vg[static_cast<size_t>(row * dim + d)] = v;
            sum += v * v;
        }
        const float rv = std::sqrt(sum / static_cast<float>(dim) + eps);
        for (int64_t d = 0; d < dim; ++d)
            n[static_cast<size_t>(row * dim + d)] = vg[static_cast<size_t>(row * dim + d)] / rv * conv_norm[hc * dim + d];
    }

#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t bc = 0; bc < batch * channels; ++bc) {
        const int64_t b = bc / channels, c = bc % channels;
        auto xc = [&](int64_t t) -> float {  // step t of [conv_state | n]
            if (t < state) return state_in ? bf16(state_in, bc * state + t) : 0.0f;
            return n[static_cast<size_t>((b * length + t - state) * channels + c)];
        };
        for (int64_t l = 0; l < length; ++l) {
            float conv = 0.0f;
            for (int64_t tap = 0; tap < taps; ++tap) conv += conv_weight[c * taps + tap] * xc(l + tap * dilation);
            const int64_t at = (b * length + l) * channels + c;
            output[at] = hb_f32_to_bf16(vg[static_cast<size_t>(at)] + conv / (1.0f + std::exp(-conv)));
        }
        for (int64_t s = 0; s < state; ++s) state_out[bc * state + s] = hb_f32_to_bf16(xc(length + s));
    }
    return 0;
}
