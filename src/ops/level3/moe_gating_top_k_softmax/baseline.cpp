// Baseline for moe_gating_top_k_softmax, x viewed as [R, E]: oneDNN softmax_forward over E
// (softmax_accurate, jit) into an fp32 workspace of R x E probabilities, then a threaded C++
// top-k per row: a partial sort of the experts by their logits (softmax keeps their order;
// NaN first, ties by the lower index, the operator's ranking) gathering y from the
// workspace. float32 x is the primitive's source directly; float16 and bfloat16 x are widened
// into the workspace first and normalized in place (oneDNN 2.6 has no f16 softmax on the CPU
// and bf16 only with AVX-512, and its dst must have its src's type), the conversion a
// framework performs. oneDNN has no top-k. oneDNN's jit softmax drops a NaN from its max,
// so rows holding a NaN are set to NaN afterwards, as torch's softmax gives them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

struct View {
    const hb_tensor* x = nullptr;
    const std::uint8_t* finished = nullptr;
    std::int64_t rows = 0, experts = 0, k = 1;
};

// Empty on success, else a message for hb_fail.
std::string view_of(const hb_call* call, View& v) {
    const hb_arg* x = hb_input(call, "x");
    if (!x || !x->present || !hb_output(call, "y") || !hb_output(call, "expert_idx") || !hb_output(call, "row_idx"))
        return "moe_gating_top_k_softmax: expected input x and outputs y, expert_idx, row_idx";
    v.x = &x->tensors[0];
    if (v.x->rank < 1 || !hb_is_contiguous(v.x)) return "moe_gating_top_k_softmax: x must be contiguous";
    v.experts = v.x->shape[v.x->rank - 1];
    v.rows = v.experts ? hb_numel(v.x) / v.experts : 0;
    v.k = hb_attr_int(call, "k", 1);
    if (v.k < 1 || v.k > v.experts) return "moe_gating_top_k_softmax: k must be in [1, E]";
    const hb_arg* finished = hb_input(call, "finished");
    if (finished && finished->present) v.finished = static_cast<const std::uint8_t*>(finished->tensors[0].data);
    return {};
}

const dnnl::softmax_forward& softmax_primitive(std::int64_t rows, std::int64_t experts) {
    static PlanCache<std::pair<std::int64_t, std::int64_t>, dnnl::softmax_forward> cache;
    return cache.get({rows, experts}, [&] {
        const dnnl::memory::desc md({rows, experts}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
        return dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
            dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), cpu_engine()));
    });
}

template <typename Element>
void top_k(const View& v, const float* p, const hb_call* call) {
    const auto* x = static_cast<const Element*>(v.x->data);
    auto* y = static_cast<Element*>(hb_output(call, "y")->tensors[0].data);
    auto* expert_idx = static_cast<std::int32_t*>(hb_output(call, "expert_idx")->tensors[0].data);
    auto* row_idx = static_cast<std::int32_t*>(hb_output(call, "row_idx")->tensors[0].data);
#pragma omp parallel
    {
        std::vector<std::int32_t> order(static_cast<std::size_t>(v.experts));
        std::vector<float> key(static_cast<std::size_t>(v.experts));
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < v.rows; ++r) {
            const Element* xr = x + r * v.experts;
            for (std::int64_t e = 0; e < v.experts; ++e) key[static_cast<std::size_t>(e)] = compare_key(xr[e]);
            std::iota(order.begin(), order.end(), 0);
            std::partial_sort(order.begin(), order.begin() + v.k, order.end(), [&](std::int32_t a, std::int32_t b) {
                const float ka = key[static_cast<std::size_t>(a)], kb = key[static_cast<std::size_t>(b)];
                if ((ka != ka) != (kb != kb)) return ka != ka;
                if (ka == ka && ka != kb) return ka > kb;
                return a < b;
            });
            const bool done = v.finished && v.finished[r] != 0;
            // NaN ranks first: a row holding one is all NaN (torch's softmax), which oneDNN's
            // jit max (vmaxps, dropping NaN) does not give.
            const float first = key[static_cast<std::size_t>(order[0])];
            const bool nan_row = first != first;
            for (std::int64_t j = 0; j < v.k; ++j) {
                const std::int32_t e = order[static_cast<std::size_t>(j)];
                y[r * v.k + j] = from_f32<Element>(nan_row ? NAN : p[r * v.experts + e]);
                expert_idx[r * v.k + j] = done ? static_cast<std::int32_t>(v.experts) : e;
                row_idx[r * v.k + j] = static_cast<std::int32_t>(j * v.rows + r);
            }
        }
    }
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    View v;
    if (!view_of(call, v).empty()) return 0;  // the kernel reports the error
    try {
        if (v.rows > 0) softmax_primitive(v.rows, v.experts);  // created once per case, outside the timed calls
    } catch (const std::exception&) {
        return 0;
    }
    return static_cast<std::uint64_t>(v.rows * v.experts) * sizeof(float);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    View v;
    if (const std::string error = view_of(call, v); !error.empty()) return hb_fail(call, 2, error.c_str());
    if (v.rows == 0) return 0;
    if (call->workspace_bytes < static_cast<std::uint64_t>(v.rows * v.experts) * sizeof(float))
        return hb_fail(call, 2, "moe_gating_top_k_softmax: the workspace is too small");
    auto* p = static_cast<float*>(call->workspace);
    return guarded(call, [&] {
        FlatTensor x;
        x.data = v.x->data;
        x.dtype = v.x->dtype;
        x.n = v.rows * v.experts;
        void* src = x.data;
        if (x.dtype != HB_FLOAT32) {
            widen_to_f32(x, p);
            src = p;
        }
        const dnnl::memory::desc md({v.rows, v.experts}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
        dnnl::memory src_memory(md, cpu_engine(), src), dst_memory(md, cpu_engine(), p);
        dnnl::stream& stream = cpu_stream();
        softmax_primitive(v.rows, v.experts).execute(stream, {{DNNL_ARG_SRC, src_memory}, {DNNL_ARG_DST, dst_memory}});
        stream.wait();
        const bool known = with_float_element(x.dtype, [&](auto element) { top_k<decltype(element)>(v, p, call); });
        return known ? 0 : hb_fail(call, 2, "moe_gating_top_k_softmax: x must be float32, float16 or bfloat16");
    });
}
