// Baseline for swi_glu: output = silu(a) * b, a and b the halves of input along dim.
// Viewed as [outer, 2, half_block], each half of an outer slice is contiguous. oneDNN 2.6
// on this AVX2 CPU runs eltwise and binary on strided views, and eltwise with a binary
// post-op, only as ref:any (over 10x slower than a plain loop, measured), so float32 runs
// the jit eltwise_swish on each contiguous first half (in place into the output) and the
// jit binary_mul with the second half. One primitive execution per slice only pays off
// for long halves; shorter ones, and fp16/bf16 (no f16/bf16 eltwise or binary without
// AVX-512), run an OpenMP loop that computes in fp32.
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

// Shortest contiguous half for which per-slice oneDNN calls beat the fused loop here.
// Measured single-threaded (4M-element fp32 input): oneDNN vs loop 28 vs 26 ms at
// 256-element halves, 20 vs 25 ms at 1024, 5 vs 21 ms at 4096, 2.7 vs 11 ms at one slice;
// each execution also forks the thread team, which raises the break-even with threads.
constexpr std::int64_t onednn_min_half_block = 4096;

struct SwishThenMul {
    dnnl::primitive swish, mul;
};

bool run_onednn(hb_dtype dtype, const char* input, char* output, std::int64_t outer, std::int64_t half_block) {
    const auto type = dnnl_type(dtype);
    if (!type || half_block < onednn_min_half_block) return false;
    const dnnl::memory::desc md = flat_desc(half_block, *type);
    const std::string key = dtype_label(dtype) + ":" + std::to_string(half_block);
    const auto& swish = cached_primitive("swish:" + key, [&]() -> std::optional<dnnl::primitive> {
        return dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_swish, md, 1.f),
            cpu_engine()));
    });
    const auto& mul = cached_primitive("mul:" + key, [&]() -> std::optional<dnnl::primitive> {
        return dnnl::binary(dnnl::binary::primitive_desc(
            dnnl::binary::desc(dnnl::algorithm::binary_mul, md, md, md), cpu_engine()));
    });
    if (!swish || !mul) return false;
    auto& engine = cpu_engine();
    auto& stream = cpu_stream();
    dnnl::memory a(md, engine, nullptr), b(md, engine, nullptr), y(md, engine, nullptr);
    const std::int64_t half_bytes = half_block * static_cast<std::int64_t>(dnnl::memory::data_type_size(*type));
    for (std::int64_t o = 0; o < outer; ++o) {
        a.set_data_handle(const_cast<char*>(input + o * 2 * half_bytes));
        b.set_data_handle(const_cast<char*>(input + o * 2 * half_bytes + half_bytes));
        y.set_data_handle(output + o * half_bytes);
        swish->execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_DST, y}});
        mul->execute(stream, {{DNNL_ARG_SRC_0, y}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, y}});
    }
    stream.wait();
    return true;
}

template <typename Element>
void run_loop(const Element* input, Element* output, std::int64_t outer, std::int64_t half_block) {
    // Blocks of each half-row, so that a single slice (dim 0) still spreads over threads.
    constexpr std::int64_t block = 4096;
    const std::int64_t blocks_per_slice = (half_block + block - 1) / block;
#pragma omp parallel for schedule(static)
    for (std::int64_t job = 0; job < outer * blocks_per_slice; ++job) {
        const std::int64_t o = job / blocks_per_slice;
        const std::int64_t begin = (job % blocks_per_slice) * block;
        const std::int64_t end = std::min(half_block, begin + block);
        const Element* a = input + o * 2 * half_block;
        const Element* b = a + half_block;
        Element* y = output + o * half_block;
        for (std::int64_t i = begin; i < end; ++i) {
            const float av = to_f32(a[i]);
            y[i] = from_f32<Element>(av / (1.f + std::exp(-av)) * to_f32(b[i]));
        }
    }
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* in = hb_input(call, "input");
    hb_arg* out = hb_output(call, "output");
    if (!in || !out || in->count != 1 || out->count != 1)
        return hb_fail(call, 1, "swi_glu: expected one input tensor 'input' and one output tensor 'output'");
    const hb_tensor& x = in->tensors[0];
    hb_tensor& y = out->tensors[0];
    if (x.rank < 1) return hb_fail(call, 1, "swi_glu: the input is 0-d");
    std::int64_t dim = hb_attr_int(call, "dim", -1);
    if (dim < 0) dim += x.rank;
    if (dim < 0 || dim >= x.rank) return hb_fail(call, 1, "swi_glu: dim is out of range for the input rank");
    if (x.shape[dim] % 2 != 0) return hb_fail(call, 1, "swi_glu: the split dimension has odd size");
    if (y.dtype != x.dtype) return hb_fail(call, 1, "swi_glu: output dtype differs from input dtype");
    if (!hb_is_contiguous(&x) || !hb_is_contiguous(&y)) return hb_fail(call, 1, "swi_glu: the baseline needs contiguous tensors");
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t d = 0; d < dim; ++d) outer *= x.shape[d];
    for (std::int64_t d = dim + 1; d < x.rank; ++d) inner *= x.shape[d];
    const std::int64_t half_block = x.shape[dim] / 2 * inner;
    if (hb_numel(&y) != outer * half_block) return hb_fail(call, 1, "swi_glu: output shape does not halve the split dimension");
    if (half_block == 0 || outer == 0) return 0;
    try {
        if (run_onednn(x.dtype, static_cast<const char*>(x.data), static_cast<char*>(y.data), outer, half_block)) return 0;
    } catch (const dnnl::error& e) {
        return hb_fail(call, 3, (std::string("swi_glu: oneDNN failed: ") + e.what()).c_str());
    }
    const bool known = with_float_element(x.dtype, [&](auto element) {
        using Element = decltype(element);
        run_loop(static_cast<const Element*>(x.data), static_cast<Element*>(y.data), outer, half_block);
    });
    return known ? 0 : hb_fail(call, 2, "swi_glu: unsupported dtype (float32, float16, bfloat16 only)");
}
