// Baseline for cross_entropy_loss: a threaded C++ kernel, fused the way a tuned framework
// kernel is (one read of the logits, no [N, C] log-probability tensor in memory). oneDNN has
// no cross-entropy, NLL or gather primitive; its log_softmax plus a separate gather would
// write and re-read every logit, which is slower than this loop and not what a vendor's
// fused loss does.
// input is [N, C, inner] (inner = d1 * ...). inner == 1: OpenMP over rows, each row's max,
// sum of e^(x - max) (16 lane accumulators, a vectorizable polynomial exp) and target logit
// in fp32. inner > 1: OpenMP over (n, block of 64
// neighbouring positions), so every pass over the classes reads contiguous runs and
// vectorizes. Per-position losses go to the output (none) or into fp64 per-thread sums
// (mean, sum), which keeps the reduction exact to fp32 rounding whatever N is.
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

#pragma GCC visibility push(hidden)

namespace {

struct Fp32 {
    using Storage = float;
    static float load(float v) { return v; }
    static float store(float v) { return v; }
};
struct Fp16 {
    using Storage = std::uint16_t;
    static float load(std::uint16_t v) { return hb_f16_to_f32(v); }
    static std::uint16_t store(float v) { return hb_f32_to_f16(v); }
};
struct Bf16 {
    using Storage = std::uint16_t;
    static float load(std::uint16_t v) { return hb_bf16_to_f32(v); }
    static std::uint16_t store(float v) { return hb_f32_to_bf16(v); }
};

enum class Reduction { none, mean, sum };

struct Geometry {
    std::int64_t n = 1, classes = 1, inner = 1;
};

constexpr std::int64_t block = 64;
constexpr std::int64_t lanes = 16;

// e^x for x <= 0 (x - max), branch-free so that the loops vectorize (libm's expf does not
// without -ffast-math): x = n ln2 + r with |r| <= ln2/2, e^r by its degree-6 Taylor
// polynomial (relative error below 2e-7), 2^n through the exponent bits. Below -87 the
// result is 0 (e^-87 is under fp32's smallest normal); NaN stays NaN.
inline float exp_nonpositive(float x) {
    const float xc = x < -87.0f ? -87.0f : x;
    const float n = std::floor(xc * 1.44269504f + 0.5f);
    const float r = (xc - n * 0.693145752f) - n * 1.42860677e-6f;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const float scale = std::bit_cast<float>((static_cast<std::int32_t>(n) + 127) << 23);
    return x < -87.0f ? 0.0f : p * scale;
}

// Max and sum of e^(x - max) of one contiguous row, in `lanes` independent accumulators.
template <typename Type>
void row_max_sum(const typename Type::Storage* row, std::int64_t classes, float& max_out, float& sum_out) {
    float m[lanes], s[lanes];
    for (std::int64_t l = 0; l < lanes; ++l) m[l] = -INFINITY, s[l] = 0.f;
    const std::int64_t full = classes / lanes * lanes;
    for (std::int64_t c = 0; c < full; c += lanes)
        for (std::int64_t l = 0; l < lanes; ++l) {
            const float v = Type::load(row[c + l]);
            m[l] = v != v || v > m[l] ? v : m[l];  // NaN stays the max, as in torch
        }
    for (std::int64_t c = full; c < classes; ++c) {
        const float v = Type::load(row[c]);
        m[0] = v != v || v > m[0] ? v : m[0];
    }
    float max = m[0];
    for (std::int64_t l = 1; l < lanes; ++l) max = m[l] != m[l] || m[l] > max ? m[l] : max;
    for (std::int64_t c = 0; c < full; c += lanes)
        for (std::int64_t l = 0; l < lanes; ++l) s[l] += exp_nonpositive(Type::load(row[c + l]) - max);
    for (std::int64_t c = full; c < classes; ++c) s[0] += exp_nonpositive(Type::load(row[c]) - max);
    float sum = 0.f;
    for (std::int64_t l = 0; l < lanes; ++l) sum += s[l];
    max_out = max;
    sum_out = sum;
}

// Returns false when a target is neither ignore_index nor a class.
template <typename Type>
bool cross_entropy(const hb_tensor& input, const hb_tensor& target, const hb_tensor& loss, const Geometry& g,
                   std::int64_t ignore, Reduction reduction, int threads) {
    const auto* x = static_cast<const typename Type::Storage*>(input.data);
    const auto* t = static_cast<const std::int64_t*>(target.data);
    auto* out = static_cast<typename Type::Storage*>(loss.data);
    const std::int64_t blocks = (g.inner + block - 1) / block;
    const std::int64_t jobs = g.n * blocks;
    double total = 0;
    std::int64_t count = 0;
    bool bad = false;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : total, count) reduction(|| : bad)
    for (std::int64_t job = 0; job < jobs; ++job) {
        const std::int64_t n = job / blocks, i0 = (job % blocks) * block;
        const std::int64_t width = std::min(block, g.inner - i0);
        const std::int64_t base = n * g.classes * g.inner + i0;  // logit (n, 0, i0)
        const std::int64_t pos0 = n * g.inner + i0;              // position (n, i0)
        float max[block], sum[block];
        if (g.inner == 1) {
            row_max_sum<Type>(x + base, g.classes, max[0], sum[0]);
        } else {
            for (std::int64_t i = 0; i < width; ++i) max[i] = -INFINITY, sum[i] = 0.f;
            for (std::int64_t c = 0; c < g.classes; ++c)
                for (std::int64_t i = 0; i < width; ++i) {
                    const float v = Type::load(x[base + c * g.inner + i]);
                    max[i] = v != v || v > max[i] ? v : max[i];  // NaN stays the max, as in torch
                }
            for (std::int64_t c = 0; c < g.classes; ++c)
                for (std::int64_t i = 0; i < width; ++i)
                    sum[i] += exp_nonpositive(Type::load(x[base + c * g.inner + i]) - max[i]);
        }
        for (std::int64_t i = 0; i < width; ++i) {
            const std::int64_t k = t[pos0 + i];
            float l = 0.f;
            if (k != ignore) {
                if (k < 0 || k >= g.classes) {
                    bad = true;
                    continue;
                }
                l = (max[i] - Type::load(x[base + k * g.inner + i])) + std::log(sum[i]);
                total += l;
                ++count;
            }
            if (reduction == Reduction::none) out[pos0 + i] = Type::store(l);
        }
    }
    if (reduction == Reduction::sum) out[0] = Type::store(static_cast<float>(total));
    // Every position ignored: 0/0 = NaN, as torch.
    if (reduction == Reduction::mean) out[0] = Type::store(static_cast<float>(total / static_cast<double>(count)));
    return !bad;
}

}  // namespace

#pragma GCC visibility pop

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* input_arg = hb_input(call, "input");
    const hb_arg* target_arg = hb_input(call, "target");
    const hb_arg* loss_arg = hb_output(call, "loss");
    if (!input_arg || !target_arg || !loss_arg || input_arg->count != 1 || target_arg->count != 1 || loss_arg->count != 1)
        return hb_fail(call, 1, "cross_entropy_loss: expected input tensors input, target and output tensor loss");
    const hb_tensor& input = input_arg->tensors[0];
    const hb_tensor& target = target_arg->tensors[0];
    const hb_tensor& loss = loss_arg->tensors[0];
    if (!hb_is_contiguous(&input) || !hb_is_contiguous(&target) || !hb_is_contiguous(&loss))
        return hb_fail(call, 2, "cross_entropy_loss: only contiguous tensors are supported");
    if (input.rank < 2 || target.dtype != HB_INT64 || loss.dtype != input.dtype)
        return hb_fail(call, 2, "cross_entropy_loss: input must be [N, C, ...], target int64, loss input's dtype");
    const std::string r = hb_attr_string(call, "reduction", "mean");
    const Reduction reduction = r == "none" ? Reduction::none : r == "sum" ? Reduction::sum : Reduction::mean;
    if (r != "none" && r != "sum" && r != "mean")
        return hb_fail(call, 2, "cross_entropy_loss: reduction must be none, mean or sum");
    Geometry g;
    g.n = input.shape[0];
    g.classes = input.shape[1];
    for (std::int32_t d = 2; d < input.rank; ++d) g.inner *= input.shape[d];
    if (hb_numel(&target) != g.n * g.inner || hb_numel(&loss) != (reduction == Reduction::none ? g.n * g.inner : 1))
        return hb_fail(call, 2, "cross_entropy_loss: target or loss has the wrong number of elements");
    const std::int64_t ignore = hb_attr_int(call, "ignore_index", -100);
    const int threads = call->num_threads > 0 ? call->num_threads : omp_get_max_threads();
    bool ok = true;
    switch (input.dtype) {
        case HB_FLOAT32: ok = cross_entropy<Fp32>(input, target, loss, g, ignore, reduction, threads); break;
        case HB_FLOAT16: ok = cross_entropy<Fp16>(input, target, loss, g, ignore, reduction, threads); break;
        case HB_BFLOAT16: ok = cross_entropy<Bf16>(input, target, loss, g, ignore, reduction, threads); break;
        default: return hb_fail(call, 2, "cross_entropy_loss: input must be float32, float16 or bfloat16");
    }
    if (!ok) return hb_fail(call, 3, "cross_entropy_loss: a target is outside [0, C) and is not ignore_index");
    return 0;
}
