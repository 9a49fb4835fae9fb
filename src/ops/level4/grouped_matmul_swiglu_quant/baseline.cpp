// Baseline for grouped_matmul_swiglu_quant: the int8 products by oneDNN, one matmul per
// non-empty group (x's rows of the group [m_g, K] times the expert's [K, N] as stored, into an
// int32 workspace [M, N]; one primitive per distinct group size, made outside the timed calls),
// then one threaded C++ pass per row for the epilogue (dequantize, SiLU gating, the row's max,
// the int8 quantization), the split a framework's MoE layer makes on a CPU: oneDNN 2.6 has no
// grouped matmul, its output scales are per column only (x_scale is per row) and it has no
// dynamic quantization.
// On CPUs without VNNI (oneDNN's effective ISA below avx2_vnni / avx512_core_vnni) its s8 x s8
// kernels sum u8 x s8 pairs in saturating 16-bit lanes (vpmaddubsw), wrong for full-range int8;
// there x and the weights of every non-empty group are widened to fp32 and an f32 matmul
// computes the same integers (exact: |mm| < 2^24 for every K the suite draws, and rounded at
// 2^-24 beyond).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;
using dnnl::memory;

struct Call {
    const std::int8_t *x = nullptr, *w = nullptr;
    const float *ws = nullptr, *xs = nullptr;
    std::int8_t* y = nullptr;
    float* y_scale = nullptr;
    std::int64_t m = 0, k = 0, n = 0, experts = 0;
    std::vector<std::int64_t> ends;
    std::int64_t begin(std::int64_t g) const { return g == 0 ? 0 : ends[static_cast<std::size_t>(g - 1)]; }
};

// Empty on success, else a message for hb_fail.
std::string read_call(const hb_call* call, Call& c) {
    const hb_arg* x = hb_input(call, "x");
    const hb_arg* w = hb_input(call, "weight");
    const hb_arg* ws = hb_input(call, "weight_scale");
    const hb_arg* xs = hb_input(call, "x_scale");
    const hb_arg* y = hb_output(call, "y");
    const hb_arg* ys = hb_output(call, "y_scale");
    const hb_attr* list = hb_attr_find(call, "group_list");
    if (!x || !w || !ws || !xs || !y || !ys || !list || list->type != HB_ATTR_INT_LIST)
        return "grouped_matmul_swiglu_quant: expected x, weight, weight_scale, x_scale, y, y_scale and group_list";
    const hb_tensor &xt = x->tensors[0], &wt = w->tensors[0], &wst = ws->tensors[0], &xst = xs->tensors[0];
    const hb_tensor &yt = y->tensors[0], &yst = ys->tensors[0];
    for (const hb_tensor* t : {&xt, &wt, &wst, &xst, &yt, &yst})
        if (!hb_is_contiguous(t)) return "grouped_matmul_swiglu_quant: only contiguous tensors are supported";
    if (xt.dtype != HB_INT8 || wt.dtype != HB_INT8 || wst.dtype != HB_FLOAT32 || xst.dtype != HB_FLOAT32 || xt.rank != 2 ||
        wt.rank != 3 || wt.shape[1] != xt.shape[1] || wt.shape[2] % 2 != 0)
        return "grouped_matmul_swiglu_quant: x int8 [M, K], weight int8 [E, K, N] (N even), float32 scales expected";
    c.m = xt.shape[0];
    c.k = xt.shape[1];
    c.experts = wt.shape[0];
    c.n = wt.shape[2];
    if (list->count != c.experts) return "grouped_matmul_swiglu_quant: group_list needs one entry per expert";
    std::int64_t previous = 0;
    for (std::int32_t i = 0; i < list->count; ++i) {
        if (list->ints[i] < previous) return "grouped_matmul_swiglu_quant: group_list must be non-decreasing";
        previous = list->ints[i];
        c.ends.push_back(previous);
    }
    if (previous != c.m) return "grouped_matmul_swiglu_quant: group_list must end at M";
    c.x = static_cast<const std::int8_t*>(xt.data);
    c.w = static_cast<const std::int8_t*>(wt.data);
    c.ws = static_cast<const float*>(wst.data);
    c.xs = static_cast<const float*>(xst.data);
    c.y = static_cast<std::int8_t*>(yt.data);
    c.y_scale = static_cast<float*>(yst.data);
    return {};
}

// Whether oneDNN's int8 kernels use VNNI here (exact s8 x s8 products).
bool int8_exact() {
    const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    auto has = [isa](dnnl_cpu_isa_t level) { return (isa & static_cast<unsigned>(level)) == static_cast<unsigned>(level); };
    return has(dnnl_cpu_isa_avx512_core_vnni) || has(dnnl_cpu_isa_avx2_vnni);
}

// [rows, K] x [K, N] -> [rows, N]: s8 x s8 -> s32, or f32 -> f32 where int8 is not exact. The
// weights as stored (row-major [K, N]); the leading dimension of dst is N.
const dnnl::matmul& product(std::int64_t rows, std::int64_t k, std::int64_t n, bool exact) {
    static PlanCache<std::tuple<std::int64_t, std::int64_t, std::int64_t, bool>, dnnl::matmul> cache;
    return cache.get({rows, k, n, exact}, [&] {
        const auto operand = exact ? memory::data_type::s8 : memory::data_type::f32;
        const memory::desc src({rows, k}, operand, memory::format_tag::ab);
        const memory::desc weights({k, n}, operand, memory::format_tag::ab);
        const memory::desc dst({rows, n}, exact ? memory::data_type::s32 : memory::data_type::f32, memory::format_tag::ab);
        return dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), cpu_engine()));
    });
}

// Workspace: the products [M, N] (int32 or fp32, 4 bytes), and where int8 is not exact the
// widened x [M, K] and weights [E, K, N].
std::uint64_t workspace_of(const Call& c, bool exact) {
    std::uint64_t bytes = static_cast<std::uint64_t>(c.m * c.n) * 4;
    if (!exact) bytes += static_cast<std::uint64_t>(c.m * c.k + c.experts * c.k * c.n) * 4;
    return bytes;
}

// The epilogue of row r from its products (int32 or fp32).
template <typename Product>
void epilogue(const Call& c, const Product* mm) {
    const std::int64_t half = c.n / 2;
    const float min_normal = std::ldexp(1.0f, -126);
#pragma omp parallel
    {
        std::vector<float> act(static_cast<std::size_t>(half));
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < c.m; ++r) {
            const auto g = std::upper_bound(c.ends.begin(), c.ends.end(), r) - c.ends.begin();
            const float* wsg = c.ws + g * c.n;
            const Product* mr = mm + r * c.n;
            const float xs = c.xs[r];
            float max_abs = 0;
            bool nan = false;
            for (std::int64_t j = 0; j < half; ++j) {
                const float left = (static_cast<float>(mr[j]) * xs) * wsg[j];
                const float right = (static_cast<float>(mr[half + j]) * xs) * wsg[half + j];
                const float v = left / (1.0f + std::exp(-left)) * right;
                act[static_cast<std::size_t>(j)] = v;
                const float a = std::fabs(v);
                nan = nan || a != a;
                max_abs = a > max_abs ? a : max_abs;
            }
            // torch.amax propagates NaN; the loop's max above does not.
            const float scale = nan ? NAN : std::max(max_abs, min_normal) / 127.0f;
            c.y_scale[r] = scale;
            std::int8_t* yr = c.y + r * half;
            for (std::int64_t j = 0; j < half; ++j) {
                const float q = act[static_cast<std::size_t>(j)] / scale;
                yr[j] = q != q ? 0 : static_cast<std::int8_t>(std::nearbyint(std::min(std::max(q, -128.0f), 127.0f)));
            }
        }
    }
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    Call c;
    if (!read_call(call, c).empty()) return 0;  // the kernel reports the error
    const bool exact = int8_exact();
    try {
        for (std::int64_t g = 0; g < c.experts; ++g)
            if (const std::int64_t rows = c.ends[static_cast<std::size_t>(g)] - c.begin(g); rows > 0) product(rows, c.k, c.n, exact);
    } catch (const std::exception&) {
        return 0;
    }
    return workspace_of(c, exact);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    Call c;
    if (const std::string error = read_call(call, c); !error.empty()) return hb_fail(call, 2, error.c_str());
    const bool exact = int8_exact();
    if (!call->workspace || call->workspace_bytes < workspace_of(c, exact))
        return hb_fail(call, 2, "grouped_matmul_swiglu_quant: the workspace is too small");
    return guarded(call, [&] {
        char* ws = static_cast<char*>(call->workspace);
        void* products = ws;
        const void* x = c.x;
        const void* w = c.w;
        if (!exact) {
            auto* x32 = reinterpret_cast<float*>(ws + c.m * c.n * 4);
            auto* w32 = x32 + c.m * c.k;
            const std::int64_t nx = c.m * c.k;
#pragma omp parallel for simd schedule(static)
            for (std::int64_t i = 0; i < nx; ++i) x32[i] = static_cast<float>(c.x[i]);
            // Only the experts some row uses.
            for (std::int64_t g = 0; g < c.experts; ++g) {
                if (c.ends[static_cast<std::size_t>(g)] == c.begin(g)) continue;
                const std::int64_t nw = c.k * c.n;
                const std::int8_t* src = c.w + g * nw;
                float* dst = w32 + g * nw;
#pragma omp parallel for simd schedule(static)
                for (std::int64_t i = 0; i < nw; ++i) dst[i] = static_cast<float>(src[i]);
            }
            x = x32;
            w = w32;
        }
        const std::size_t operand = exact ? 1 : 4;
        dnnl::stream& stream = cpu_stream();
        const auto operand_type = exact ? memory::data_type::s8 : memory::data_type::f32;
        for (std::int64_t g = 0; g < c.experts; ++g) {
            const std::int64_t first = c.begin(g), rows = c.ends[static_cast<std::size_t>(g)] - first;
            if (rows == 0) continue;
            const memory::desc src_md({rows, c.k}, operand_type, memory::format_tag::ab);
            const memory::desc w_md({c.k, c.n}, operand_type, memory::format_tag::ab);
            const memory::desc dst_md({rows, c.n}, exact ? memory::data_type::s32 : memory::data_type::f32,
                                      memory::format_tag::ab);
            memory src(src_md, cpu_engine(), const_cast<char*>(static_cast<const char*>(x)) + first * c.k * operand);
            memory weights(w_md, cpu_engine(), const_cast<char*>(static_cast<const char*>(w)) + g * c.k * c.n * operand);
            memory dst(dst_md, cpu_engine(), static_cast<char*>(products) + first * c.n * 4);
            product(rows, c.k, c.n, exact).execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
        }
        stream.wait();
        if (exact) epilogue(c, static_cast<const std::int32_t*>(products));
        else epilogue(c, static_cast<const float*>(products));
        return 0;
    });
}
