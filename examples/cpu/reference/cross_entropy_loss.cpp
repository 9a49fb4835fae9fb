// Reference cross_entropy_loss (torch.nn.functional.cross_entropy, class-index targets, no
// weights): per position loss = (max - x_target) + log(sum_c e^(x_c - max)) over the classes
// in dim 1, computed in fp32 for every dtype and rounded once. input is [N, C, inner]; each
// job takes one n and a block of up to 64 neighbouring positions, so the passes over the
// classes read contiguous runs. Ignored positions give 0 (none) and are left out of the sum
// and of the mean's count, which is accumulated in fp64.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

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
        for (std::int64_t i = 0; i < width; ++i) max[i] = -INFINITY, sum[i] = 0.f;
        for (std::int64_t c = 0; c < g.classes; ++c)
            for (std::int64_t i = 0; i < width; ++i) {
                const float v = Type::load(x[base + c * g.inner + i]);
                max[i] = v != v || v > max[i] ? v : max[i];  // NaN stays the max, as in torch
            }
        for (std::int64_t c = 0; c < g.classes; ++c)
            for (std::int64_t i = 0; i < width; ++i) sum[i] += std::exp(Type::load(x[base + c * g.inner + i]) - max[i]);
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
