// Baseline for quant_matmul: the int8 product by oneDNN, the dequantizing epilogue by one
// threaded C++ pass, the split a framework's quantized linear makes on a CPU when the
// library cannot fuse its epilogue.
// The product is one oneDNN matmul, s8 x s8 -> s32, over every batch entry at once (the
// batch dims padded to one rank, broadcast where they are 1): oneDNN picks its best int8
// kernel (brgemm on AMX or AVX512-VNNI where present, gemm:jit otherwise). oneDNN 2.6 has
// no f16 destination for int8 matmul, and its per-channel output scales and a per-token
// binary post-op move it off brgemm to the gemm:jit or ref_int8 kernels (measured), so
// scales, offset, per-token scale and biases are applied afterwards in fp32, in the
// operator's order, and rounded to the output dtype there.
// On CPUs without VNNI (oneDNN's effective ISA below avx2_vnni / avx512_core_vnni) its s8 x s8
// kernels sum u8 x s8 pairs in saturating 16-bit lanes (vpmaddubsw), which is wrong for
// full-range int8 (measured: 600 of 630 outputs off); there x1 and x2 are widened to fp32
// and multiplied by the f32 matmul, exact while |acc| < 2^24 and within 2^-24 beyond.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;
using dnnl::memory;

struct Geometry {
    std::int64_t m = 0, k = 0, n = 0, batch = 1;
    memory::dims x1_dims, x2_dims, out_dims;  // padded to one rank
    const hb_tensor* x1 = nullptr;
    const hb_tensor* x2 = nullptr;
    const hb_tensor* scale = nullptr;
    const hb_tensor* offset = nullptr;
    const hb_tensor* pertoken = nullptr;
    const hb_tensor* bias = nullptr;
    const hb_tensor* out = nullptr;
};

const hb_tensor* optional_tensor(const hb_call* call, const char* name) {
    const hb_arg* a = hb_input(call, name);
    return a && a->present && a->count == 1 ? &a->tensors[0] : nullptr;
}

// Empty on success, else a message for hb_fail.
std::string geometry(const hb_call* call, Geometry& g) {
    g.x1 = optional_tensor(call, "x1");
    g.x2 = optional_tensor(call, "x2");
    g.scale = optional_tensor(call, "scale");
    g.offset = optional_tensor(call, "offset");
    g.pertoken = optional_tensor(call, "pertoken_scale");
    g.bias = optional_tensor(call, "bias");
    const hb_arg* out = hb_output(call, "out");
    if (!g.x1 || !g.x2 || !g.scale || !out || out->count != 1) return "quant_matmul: expected x1, x2, scale and out";
    g.out = &out->tensors[0];
    for (const hb_tensor* t : {g.x1, g.x2, g.scale, g.offset, g.pertoken, g.bias, g.out})
        if (t && !hb_is_contiguous(t)) return "quant_matmul: only contiguous tensors are supported";
    if (g.x1->dtype != HB_INT8 || g.x2->dtype != HB_INT8 || g.x1->rank < 2 || g.x2->rank < 2)
        return "quant_matmul: x1 and x2 must be int8 with at least 2 dims";
    if (g.out->dtype != HB_FLOAT16 && g.out->dtype != HB_BFLOAT16) return "quant_matmul: out must be float16 or bfloat16";
    g.m = g.x1->shape[g.x1->rank - 2];
    g.k = g.x1->shape[g.x1->rank - 1];
    g.n = g.x2->shape[g.x2->rank - 1];
    if (g.x2->shape[g.x2->rank - 2] != g.k) return "quant_matmul: x1 and x2 disagree on k";
    const int rank = std::max(g.x1->rank, g.x2->rank);
    auto padded = [rank](const hb_tensor* t) {
        memory::dims d(static_cast<std::size_t>(rank - t->rank), 1);
        d.insert(d.end(), t->shape, t->shape + t->rank);
        return d;
    };
    g.x1_dims = padded(g.x1);
    g.x2_dims = padded(g.x2);
    g.out_dims = g.x1_dims;
    for (int d = 0; d < rank - 2; ++d) {
        const auto a = g.x1_dims[d], b = g.x2_dims[d];
        if (a != b && a != 1 && b != 1) return "quant_matmul: the batch dims of x1 and x2 do not broadcast";
        g.out_dims[d] = std::max(a, b);
        g.batch *= g.out_dims[d];
    }
    g.out_dims[rank - 1] = g.n;
    if (hb_numel(g.out) != g.batch * g.m * g.n) return "quant_matmul: out has the wrong size";
    const std::int64_t scales = hb_numel(g.scale);
    if ((scales != 1 && scales != g.n) || (g.scale->dtype != HB_FLOAT32 && g.scale->dtype != HB_BFLOAT16))
        return "quant_matmul: scale must be float32 or bfloat16 [1] or [n]";
    if (g.offset && ((hb_numel(g.offset) != 1 && hb_numel(g.offset) != g.n) || g.offset->dtype != HB_FLOAT32))
        return "quant_matmul: offset must be float32 [1] or [n]";
    if (g.pertoken && (hb_numel(g.pertoken) != g.m || g.pertoken->dtype != HB_FLOAT32))
        return "quant_matmul: pertoken_scale must be float32 [m]";
    if (g.bias) {
        const std::int64_t b = hb_numel(g.bias);
        if (b != g.n && !(rank == 3 && b == g.batch * g.n)) return "quant_matmul: bias must be [n], [1, n] or [batch, 1, n]";
        if (g.bias->dtype != HB_INT32 && !dnnl_type(g.bias->dtype)) return "quant_matmul: bias must be int32 or float";
    }
    return {};
}

// Whether oneDNN's int8 kernels use VNNI here (exact s8 x s8 products).
bool int8_exact() {
    const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    auto has = [isa](dnnl_cpu_isa_t level) { return (isa & static_cast<unsigned>(level)) == static_cast<unsigned>(level); };
    return has(dnnl_cpu_isa_avx512_core_vnni) || has(dnnl_cpu_isa_avx2_vnni);
}

using PlanKey = std::tuple<memory::dims, memory::dims, bool>;

// s8 x s8 -> s32, or f32 x f32 -> f32 where int8 is not exact.
const dnnl::matmul& product_plan(const Geometry& g, bool exact, memory::desc& src, memory::desc& weights, memory::desc& dst) {
    auto tag = [](std::size_t rank) {
        static const memory::format_tag tags[] = {memory::format_tag::ab, memory::format_tag::abc, memory::format_tag::abcd,
                                                   memory::format_tag::abcde, memory::format_tag::abcdef};
        return tags[rank - 2];
    };
    const auto operand = exact ? memory::data_type::s8 : memory::data_type::f32;
    src = memory::desc(g.x1_dims, operand, tag(g.x1_dims.size()));
    weights = memory::desc(g.x2_dims, operand, tag(g.x2_dims.size()));
    dst = memory::desc(g.out_dims, exact ? memory::data_type::s32 : memory::data_type::f32, tag(g.out_dims.size()));
    static PlanCache<PlanKey, dnnl::matmul> cache;
    return cache.get(PlanKey{g.x1_dims, g.x2_dims, exact}, [&] {
        return dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), cpu_engine()));
    });
}

float element(const hb_tensor* t, std::int64_t i) {
    switch (t->dtype) {
        case HB_FLOAT32: return static_cast<const float*>(t->data)[i];
        case HB_BFLOAT16: return to_f32(static_cast<const BFloat16*>(t->data)[i]);
        case HB_FLOAT16: return to_f32(static_cast<const Half*>(t->data)[i]);
        case HB_INT32: return static_cast<float>(static_cast<const std::int32_t*>(t->data)[i]);
        default: return 0;
    }
}

// Per-column parameters widened to fp32 once (n or 1 entries each).
std::vector<float> widened(const hb_tensor* t) {
    std::vector<float> v(t ? static_cast<std::size_t>(hb_numel(t)) : 0);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = element(t, static_cast<std::int64_t>(i));
    return v;
}

// One row of fp32 values rounded into the output dtype, vectorized (F16C or bit operations).
template <typename Out>
void narrow_row(const float* v, Out* y, std::int64_t n) {
    std::int64_t j = 0;
    if constexpr (std::is_same_v<Out, Half>) {
#if defined(__F16C__)
        for (; j + 8 <= n; j += 8)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(y + j),
                             _mm256_cvtps_ph(_mm256_loadu_ps(v + j), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
        for (; j < n; ++j) y[j] = from_f32<Half>(v[j]);
    } else {
        for (; j < n; ++j) y[j] = BFloat16{hb_f32_to_bf16(v[j])};
    }
}

template <typename Out, typename Acc>
void run_epilogue(const Geometry& g, const Acc* acc) {
    const std::vector<float> scale = widened(g.scale), offset = widened(g.offset), pertoken = widened(g.pertoken);
    const bool int_bias = g.bias && g.bias->dtype == HB_INT32;
    const std::vector<float> float_bias = g.bias && !int_bias ? widened(g.bias) : std::vector<float>();
    const auto* ibias = int_bias ? static_cast<const std::int32_t*>(g.bias->data) : nullptr;
    const bool batched_bias = g.bias && hb_numel(g.bias) != g.n;
    // Per-tensor parameters broadcast to a row once, so the row loop has one shape.
    std::vector<float> scale_row(static_cast<std::size_t>(g.n)), offset_row(offset.empty() ? 0 : static_cast<std::size_t>(g.n));
    for (std::int64_t j = 0; j < g.n; ++j) {
        scale_row[static_cast<std::size_t>(j)] = scale[scale.size() > 1 ? static_cast<std::size_t>(j) : 0];
        if (!offset.empty()) offset_row[static_cast<std::size_t>(j)] = offset[offset.size() > 1 ? static_cast<std::size_t>(j) : 0];
    }
    auto* out = static_cast<Out*>(g.out->data);
    const std::int64_t rows = g.batch * g.m;
#pragma omp parallel
    {
        std::vector<float> v(static_cast<std::size_t>(g.n));
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t b = r / g.m, i = r % g.m;
            const Acc* a = acc + r * g.n;
            const std::int64_t bias_row = batched_bias ? b * g.n : 0;
            for (std::int64_t j = 0; j < g.n; ++j) {
                const Acc integer = ibias ? a[j] + static_cast<Acc>(ibias[bias_row + j]) : a[j];
                v[static_cast<std::size_t>(j)] = static_cast<float>(integer) * scale_row[static_cast<std::size_t>(j)];
            }
            if (!offset.empty())
                for (std::int64_t j = 0; j < g.n; ++j) v[static_cast<std::size_t>(j)] += offset_row[static_cast<std::size_t>(j)];
            if (!pertoken.empty()) {
                const float pt = pertoken[static_cast<std::size_t>(i)];
                for (std::int64_t j = 0; j < g.n; ++j) v[static_cast<std::size_t>(j)] *= pt;
            }
            if (!float_bias.empty())
                for (std::int64_t j = 0; j < g.n; ++j) v[static_cast<std::size_t>(j)] += float_bias[static_cast<std::size_t>(bias_row + j)];
            narrow_row(v.data(), out + r * g.n, g.n);
        }
    }
}

// The product (s32 or f32), and where int8 is not exact x1 and x2 widened to f32.
std::uint64_t workspace_bytes(const Geometry& g, bool exact) {
    const std::uint64_t product = static_cast<std::uint64_t>(g.batch * g.m * g.n) * 4;
    if (exact) return product;
    return product + static_cast<std::uint64_t>(hb_numel(g.x1) + hb_numel(g.x2)) * sizeof(float);
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Geometry g;
    if (!geometry(call, g).empty()) return 0;  // the kernel reports the error
    return workspace_bytes(g, int8_exact());
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Geometry g;
    if (const std::string error = geometry(call, g); !error.empty()) return hb_fail(call, 2, error.c_str());
    const bool exact = int8_exact();
    if (call->workspace_bytes < workspace_bytes(g, exact))
        return hb_fail(call, 2, "quant_matmul: the workspace is smaller than hapbench_workspace_bytes asked for");
    return guarded(call, [&] {
        memory::desc src, weights, dst;
        const dnnl::matmul& product = product_plan(g, exact, src, weights, dst);
        void* acc = call->workspace;
        void* x1 = g.x1->data;
        void* x2 = g.x2->data;
        if (!exact) {
            auto* x1_f32 = reinterpret_cast<float*>(static_cast<char*>(call->workspace) + static_cast<std::size_t>(g.batch * g.m * g.n) * 4);
            auto* x2_f32 = x1_f32 + hb_numel(g.x1);
            FlatTensor t1, t2;
            (void)flat_view(hb_input(call, "x1"), "x1", t1);
            (void)flat_view(hb_input(call, "x2"), "x2", t2);
            widen_to_f32(t1, x1_f32);
            widen_to_f32(t2, x2_f32);
            x1 = x1_f32;
            x2 = x2_f32;
        }
        dnnl::stream& stream = cpu_stream();
        product.execute(stream, {{DNNL_ARG_SRC, memory(src, cpu_engine(), x1)},
                                 {DNNL_ARG_WEIGHTS, memory(weights, cpu_engine(), x2)},
                                 {DNNL_ARG_DST, memory(dst, cpu_engine(), acc)}});
        stream.wait();
        const bool half = g.out->dtype == HB_FLOAT16;
        if (exact) {
            if (half) run_epilogue<Half>(g, static_cast<const std::int32_t*>(acc));
            else run_epilogue<BFloat16>(g, static_cast<const std::int32_t*>(acc));
        } else {
            if (half) run_epilogue<Half>(g, static_cast<const float*>(acc));
            else run_epilogue<BFloat16>(g, static_cast<const float*>(acc));
        }
        return 0;
    });
}
