// Baseline for masked_scale: oneDNN 2.6 binary_mul of x and the mask with the scale as the
// src0 scale attribute (dst = scale*x * mask), one jit pass.
// Per dtype pair on an AVX2 CPU (measured on the AMD EPYC of the reference machine), the
// jit:uni binary takes an fp32 src0 and dst with an int8, uint8, bf16 or fp32 mask; it
// implements nothing with an fp16 or bf16 src0/dst, nor an fp16 mask. So:
//   x float32: runs directly, except an fp16 mask, which is widened to fp32 first.
//   x float16, bfloat16: x is widened into the fp32 workspace, the primitive runs in place
//     there (fp16 masks widened too), and the result is narrowed into y.
// The choice is made by asking oneDNN (x's own dtypes first), not by this list.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include <oneapi/dnnl/dnnl.hpp>

#include "hapbench/half.h"
#include "hapbench/kernel.h"

// ---- oneDNN baseline support: identical in every level-1 oneDNN baseline -----------------
namespace {

using dnnl_type = dnnl::memory::data_type;

dnnl::engine& cpu_engine() {
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

dnnl::stream& cpu_stream() {
    static dnnl::stream stream(cpu_engine());
    return stream;
}

bool to_dnnl_type(hb_dtype t, dnnl_type& out) {
    switch (t) {
        case HB_FLOAT16: out = dnnl_type::f16; return true;
        case HB_BFLOAT16: out = dnnl_type::bf16; return true;
        case HB_FLOAT32: out = dnnl_type::f32; return true;
        case HB_INT8: out = dnnl_type::s8; return true;
        case HB_UINT8: out = dnnl_type::u8; return true;
        default: return false;
    }
}

// Every tensor here is contiguous and the operation elementwise, so one flat 1-D
// descriptor of n elements describes it whatever its rank.
dnnl::memory::desc flat_desc(std::int64_t n, dnnl_type t) {
    return dnnl::memory::desc({n}, t, dnnl::memory::format_tag::a);
}

// A contiguous tensor as data pointer, dtype and element count.
struct FlatTensor {
    void* data = nullptr;
    hb_dtype dtype = HB_FLOAT32;
    dnnl_type type = dnnl_type::f32;
    std::int64_t n = 0;
};

// Empty on success, else a message for hb_fail.
std::string flat_view(const hb_arg* arg, const char* what, FlatTensor& out) {
    if (!arg || !arg->present || arg->count != 1) return std::string(what) + ": expected one tensor";
    const hb_tensor& t = arg->tensors[0];
    if (!hb_is_contiguous(&t)) return std::string(what) + ": only contiguous tensors are supported";
    if (!to_dnnl_type(t.dtype, out.type)) return std::string(what) + ": unsupported dtype";
    out.data = t.data;
    out.dtype = t.dtype;
    out.n = hb_numel(&t);
    return {};
}

// Creates a primitive descriptor, or nothing when oneDNN has no implementation for these
// data types on this CPU (fp16/bf16 without AVX-512); any other error propagates.
template <typename Make, typename... Args>
auto try_create(Make make, Args... args) -> std::optional<decltype(make(args...))> {
    try {
        return make(args...);
    } catch (const dnnl::error& e) {
        if (e.status == dnnl_unimplemented) return std::nullopt;
        throw;
    }
}

// Conversions to and from fp32 for dtypes oneDNN cannot compute in. oneDNN 2.6's own
// f16/bf16 reorder is the scalar "simple:any" kernel here (about 35 ns per element, measured),
// so these are the vectorized casts (F16C, bit shifts) a framework uses, on the same OpenMP
// threads, rounding to nearest even like the harness.
void widen_to_f32(const FlatTensor& src, float* dst) {
    const std::int64_t n = src.n;
    if (src.dtype == HB_FLOAT16) {
        const auto* s = static_cast<const std::uint16_t*>(src.data);
        std::int64_t scalar_from = 0;
#ifdef __F16C__
        scalar_from = n / 8 * 8;
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < scalar_from; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
#endif
        for (std::int64_t i = scalar_from; i < n; ++i) dst[i] = hb_f16_to_f32(s[i]);
    } else if (src.dtype == HB_BFLOAT16) {
        const auto* s = static_cast<const std::uint16_t*>(src.data);
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < n; ++i) dst[i] = hb_bf16_to_f32(s[i]);
    } else if (src.dtype == HB_INT8) {
        const auto* s = static_cast<const std::int8_t*>(src.data);
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
    } else if (src.dtype == HB_UINT8) {
        const auto* s = static_cast<const std::uint8_t*>(src.data);
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
    } else {
        std::memcpy(dst, src.data, static_cast<std::size_t>(n) * sizeof(float));
    }
}

// dst is fp16 or bf16.
void narrow_from_f32(const float* src, const FlatTensor& dst) {
    const std::int64_t n = dst.n;
    auto* d = static_cast<std::uint16_t*>(dst.data);
    if (dst.dtype == HB_FLOAT16) {
        std::int64_t scalar_from = 0;
#ifdef __F16C__
        scalar_from = n / 8 * 8;
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < scalar_from; i += 8)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                             _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
        for (std::int64_t i = scalar_from; i < n; ++i) d[i] = hb_f32_to_f16(src[i]);
    } else {
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < n; ++i) d[i] = hb_f32_to_bf16(src[i]);
    }
}

// Primitives are created on a case's first call (hapbench_workspace_bytes) and reused for
// its timed calls; a framework keeps the same kind of shape-keyed cache.
template <typename Key, typename Plan>
class PlanCache {
  public:
    template <typename Make>
    const Plan& get(const Key& key, Make make) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = plans_.find(key);
        if (it == plans_.end()) {
            if (plans_.size() >= 64) plans_.clear();  // a suite run visits one case at a time
            it = plans_.emplace(key, make()).first;
        }
        return it->second;
    }

  private:
    std::mutex mutex_;
    std::map<Key, Plan> plans_;
};

// Runs `body` and turns any exception into an error return with its message.
template <typename Body>
int guarded(const hb_call* call, Body body) {
    try {
        return body();
    } catch (const dnnl::error& e) {
        return hb_fail(call, 3, (std::string("oneDNN: ") + e.what()).c_str());
    } catch (const std::exception& e) {
        return hb_fail(call, 3, e.what());
    }
}

}  // namespace
// ---- end of oneDNN baseline support --------------------------------------------------------

namespace {

struct MaskedScalePlan {
    dnnl::binary primitive;
    dnnl::memory::desc x_desc, mask_desc;  // x_desc also describes y
    bool x_via_f32 = false;     // x is widened into the workspace, computed there, narrowed into y
    bool mask_via_f32 = false;  // the mask is widened into the workspace after x's part

    std::uint64_t workspace_bytes(std::int64_t n) const {
        return static_cast<std::uint64_t>(n) * sizeof(float) * ((x_via_f32 ? 1 : 0) + (mask_via_f32 ? 1 : 0));
    }
};

using MaskedScaleKey = std::tuple<std::int64_t, int, int, float>;

const MaskedScalePlan& masked_scale_plan(const FlatTensor& x, const FlatTensor& mask, float scale) {
    static PlanCache<MaskedScaleKey, MaskedScalePlan> cache;
    const MaskedScaleKey key{x.n, static_cast<int>(x.dtype), static_cast<int>(mask.dtype), scale};
    return cache.get(key, [&] {
        dnnl::primitive_attr attr;
        attr.set_scales(DNNL_ARG_SRC_0, 0, {scale});
        auto make = [&](dnnl_type x_type, dnnl_type mask_type) {
            const auto x_md = flat_desc(x.n, x_type);
            const auto desc = dnnl::binary::desc(dnnl::algorithm::binary_mul, x_md, flat_desc(x.n, mask_type), x_md);
            return dnnl::binary::primitive_desc(desc, attr, cpu_engine());
        };
        // x's own dtype, then x in fp32, then both in fp32.
        if (auto pd = try_create(make, x.type, mask.type))
            return MaskedScalePlan{dnnl::binary(*pd), pd->src0_desc(), pd->src1_desc(), false, false};
        const bool x_via_f32 = x.type != dnnl_type::f32;
        if (auto pd = try_create(make, dnnl_type::f32, mask.type))
            return MaskedScalePlan{dnnl::binary(*pd), pd->src0_desc(), pd->src1_desc(), x_via_f32, false};
        const auto pd = make(dnnl_type::f32, dnnl_type::f32);
        return MaskedScalePlan{dnnl::binary(pd), pd.src0_desc(), pd.src1_desc(), x_via_f32, true};
    });
}

// Empty on success, else a message for hb_fail.
std::string masked_scale_views(const hb_call* call, FlatTensor& x, FlatTensor& mask, FlatTensor& y) {
    std::string error = flat_view(hb_input(call, "x"), "input x", x);
    if (error.empty()) error = flat_view(hb_input(call, "mask"), "input mask", mask);
    if (error.empty()) error = flat_view(hb_output(call, "y"), "output y", y);
    if (!error.empty()) return error;
    if (x.dtype != HB_FLOAT16 && x.dtype != HB_BFLOAT16 && x.dtype != HB_FLOAT32)
        return "input x: expected float16, bfloat16 or float32";
    if (mask.n != x.n) return "input mask must have x's size";
    if (y.dtype != x.dtype || y.n != x.n) return "output y must have x's dtype and size";
    return {};
}

int run_masked_scale(const hb_call* call, const FlatTensor& x, const FlatTensor& mask, const FlatTensor& y,
                     float scale) {
    if (x.n == 0) return 0;
    const MaskedScalePlan& plan = masked_scale_plan(x, mask, scale);
    if (call->workspace_bytes < plan.workspace_bytes(x.n) || (plan.workspace_bytes(x.n) > 0 && !call->workspace))
        return hb_fail(call, 4, "the fp32 conversion needs the workspace from hapbench_workspace_bytes");
    auto* workspace = static_cast<float*>(call->workspace);
    void* x_data = x.data;
    void* y_data = y.data;
    void* mask_data = mask.data;
    if (plan.x_via_f32) {
        widen_to_f32(x, workspace);
        x_data = y_data = workspace;
    }
    if (plan.mask_via_f32) {
        float* mask_f32 = workspace + (plan.x_via_f32 ? x.n : 0);
        widen_to_f32(mask, mask_f32);
        mask_data = mask_f32;
    }
    dnnl::stream& stream = cpu_stream();
    dnnl::memory src0(plan.x_desc, cpu_engine(), x_data), src1(plan.mask_desc, cpu_engine(), mask_data),
        dst(plan.x_desc, cpu_engine(), y_data);
    plan.primitive.execute(stream, {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}});
    stream.wait();
    if (plan.x_via_f32) narrow_from_f32(workspace, y);
    return 0;
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    FlatTensor x, mask, y;
    if (!masked_scale_views(call, x, mask, y).empty() || x.n == 0) return 0;  // the kernel reports errors
    try {
        return masked_scale_plan(x, mask, static_cast<float>(hb_attr_float(call, "scale", 1.0))).workspace_bytes(x.n);
    } catch (const std::exception&) {
        return 0;
    }
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    FlatTensor x, mask, y;
    if (const std::string error = masked_scale_views(call, x, mask, y); !error.empty())
        return hb_fail(call, 2, error.c_str());
    const float scale = static_cast<float>(hb_attr_float(call, "scale", 1.0));
    return guarded(call, [&] { return run_masked_scale(call, x, mask, y, scale); });
}
