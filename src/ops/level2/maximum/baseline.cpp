// Baseline for maximum: oneDNN 2.6 binary_max where oneDNN runs it in a jit kernel, else
// a threaded C++ loop over the broadcast output.
// oneDNN's binary takes the full-size operand as src0 and broadcasts src1 only, so:
//   x1 has y's shape: src0 = x1, src1 = x2;  else x2 has y's shape: the operands swap (max
//   is symmetric); else (each input broadcasts along a dim of the other) the C++ loop.
// Whether oneDNN has a jit kernel for the dtype and broadcast is asked, not listed: the
// primitive descriptor's implementation name must start with "jit" (oneDNN's ref:any
// kernel runs about 100x slower than memory speed, which no framework would ship). On the
// AVX2 machine (measured): f32 and s8 run in jit:uni with equal shapes and with src1
// broadcast along rows, columns, leading dims or to a scalar, but in ref:any when src1 is
// broadcast along both outer and inner dims ([2,3,5,1024,256] with [1,1,1,1024,1]); f16 and
// bf16 are unimplemented without AVX-512, s32 runs only in ref:any, s64 is no oneDNN type.
// NaN: which jit kernel oneDNN picks depends on the CPU (AVX2: f32 and s8 only; AVX-512
// BF16/FP16: f16 and bf16 too), and the ones seen so far return src1 when either operand
// is NaN (vmaxps), so a NaN in src0 against a number in src1 is lost, unlike the operator
// (torch.maximum propagates NaN). A baseline that computes another function on some CPUs
// would make the suite's anchor depend on the machine, so every primitive oneDNN returns is
// probed once, on the case's own descriptors, with NaN on each side (`keeps_nan_rule`);
// one that loses a NaN is not used and the C++ loop (which a framework like PyTorch ships
// for this operation) runs instead. The probe runs when the plan is made, before any timed
// call.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "ops/baseline_support.hpp"
#include "ops/broadcast.hpp"

namespace {

using namespace hb::baseline;
using dims = dnnl::memory::dims;

struct Operand {
    const void* data = nullptr;
    std::vector<std::int64_t> shape;
};

struct MaximumPlan {
    std::optional<dnnl::binary> primitive;  // none: the C++ loop
    dnnl::memory::desc src0_desc, src1_desc, dst_desc;
    bool swapped = false;  // src0 is x2
};

std::vector<std::int64_t> shape_of(const hb_tensor& t) { return {t.shape, t.shape + t.rank}; }

// `shape` padded with leading ones to `rank`.
dims padded(const std::vector<std::int64_t>& shape, std::size_t rank) {
    dims d(rank - shape.size(), 1);
    d.insert(d.end(), shape.begin(), shape.end());
    return d;
}

dnnl::memory::desc plain_desc(const dims& d, dnnl::memory::data_type type) {
    dims strides(d.size(), 1);
    for (std::size_t i = d.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<std::int64_t>(d[i], 1);
    return dnnl::memory::desc(d, type, strides);
}

std::optional<dnnl::memory::data_type> max_storage_type(hb_dtype t) {
    if (t == HB_INT32) return dnnl::memory::data_type::s32;
    return dnnl_storage_type(t);  // f32, f16, bf16, s8, u8
}

bool is_float(hb_dtype t) { return t == HB_FLOAT32 || t == HB_FLOAT16 || t == HB_BFLOAT16; }

// One element of `type` holding NaN or 1.0, as stored.
void fill_value(std::vector<unsigned char>& bytes, const dnnl::memory::desc& d, bool nan) {
    const std::size_t elem = d.data_type() == dnnl::memory::data_type::f32 ? 4 : 2;
    bytes.assign(d.get_size(), 0);
    const float f = nan ? NAN : 1.0f;
    unsigned char value[4];
    if (elem == 4) std::memcpy(value, &f, 4);
    else {
        const std::uint16_t bits = d.data_type() == dnnl::memory::data_type::bf16 ? hb_f32_to_bf16(f) : hb_f32_to_f16(f);
        std::memcpy(value, &bits, 2);
    }
    for (std::size_t i = 0; i + elem <= bytes.size(); i += elem) std::memcpy(&bytes[i], value, elem);
}

bool all_nan(const std::vector<unsigned char>& bytes, const dnnl::memory::desc& d) {
    const std::size_t elem = d.data_type() == dnnl::memory::data_type::f32 ? 4 : 2;
    for (std::size_t i = 0; i + elem <= bytes.size(); i += elem) {
        float f;
        if (elem == 4) std::memcpy(&f, &bytes[i], 4);
        else {
            std::uint16_t bits;
            std::memcpy(&bits, &bytes[i], 2);
            f = d.data_type() == dnnl::memory::data_type::bf16 ? hb_bf16_to_f32(bits) : hb_f16_to_f32(bits);
        }
        if (f == f) return false;
    }
    return true;
}

// Runs the primitive once with src0 all NaN against src1 all 1, and once the other way:
// the operator's result is NaN everywhere both times.
bool keeps_nan_rule(const dnnl::binary& primitive, const dnnl::memory::desc& src0, const dnnl::memory::desc& src1,
                    const dnnl::memory::desc& dst) {
    std::vector<unsigned char> a, b, out(dst.get_size());
    for (bool nan_in_src0 : {true, false}) {
        fill_value(a, src0, nan_in_src0);
        fill_value(b, src1, !nan_in_src0);
        dnnl::memory m0(src0, cpu_engine(), a.data()), m1(src1, cpu_engine(), b.data()), md(dst, cpu_engine(), out.data());
        primitive.execute(cpu_stream(), {{DNNL_ARG_SRC_0, m0}, {DNNL_ARG_SRC_1, m1}, {DNNL_ARG_DST, md}});
        cpu_stream().wait();
        if (!all_nan(out, dst)) return false;
    }
    return true;
}

using MaximumKey = std::tuple<std::vector<std::int64_t>, std::vector<std::int64_t>, int>;

const MaximumPlan& maximum_plan(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& y) {
    static PlanCache<MaximumKey, MaximumPlan> cache;
    const MaximumKey key{shape_of(x1), shape_of(x2), static_cast<int>(x1.dtype)};
    return cache.get(key, [&] {
        MaximumPlan plan;
        const auto type = max_storage_type(x1.dtype);
        const std::size_t rank = std::max<std::size_t>(1, static_cast<std::size_t>(y.rank));
        const dims y_dims = padded(shape_of(y), rank);
        const dims a = padded(shape_of(x1), rank), b = padded(shape_of(x2), rank);
        if (!type || hb_numel(&y) == 0 || (a != y_dims && b != y_dims)) return plan;
        plan.swapped = a != y_dims;
        const auto src0 = plain_desc(plan.swapped ? b : a, *type), src1 = plain_desc(plan.swapped ? a : b, *type);
        const auto dst = plain_desc(y_dims, *type);
        auto make = [&] {
            return dnnl::binary::primitive_desc(dnnl::binary::desc(dnnl::algorithm::binary_max, src0, src1, dst),
                                                cpu_engine());
        };
        if (auto pd = try_create(make)) {
            const std::string impl = pd->impl_info_str();
            if (impl.rfind("jit", 0) == 0 && (!is_float(x1.dtype) || keeps_nan_rule(dnnl::binary(*pd), src0, src1, dst))) {
                plan.primitive = dnnl::binary(*pd);
                plan.src0_desc = src0;
                plan.src1_desc = src1;
                plan.dst_desc = dst;
            }
        }
        return plan;
    });
}

// The NaN rule of torch.maximum: a NaN operand is the result (x1's first).
inline float max_with_nan(float u, float w) {
    const float larger = u < w ? w : u;
    return u != u ? u : (w != w ? w : larger);
}

template <typename Element>
void maximum_loop(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& y) {
    const auto* a = static_cast<const Element*>(x1.data);
    const auto* b = static_cast<const Element*>(x2.data);
    auto* out = static_cast<Element*>(y.data);
    const hb::BroadcastPlan plan(shape_of(x1), shape_of(x2));
    const std::int64_t sa = plan.inner_stride_a(), sb = plan.inner_stride_b();
    hb::for_each_broadcast_piece(plan, [&](std::int64_t o, std::int64_t ia, std::int64_t ib, std::int64_t n) {
        if constexpr (std::is_integral_v<Element>) {
            for (std::int64_t i = 0; i < n; ++i) {
                const Element u = a[ia + i * sa], w = b[ib + i * sb];
                out[o + i] = u < w ? w : u;
            }
        } else if constexpr (std::is_same_v<Element, float>) {
            // Unit or zero strides spelled out, so that GCC vectorizes the compare-and-blend.
            const float* pa = a + ia;
            const float* pb = b + ib;
            float* po = out + o;
            if (sa == 1 && sb == 1)
                for (std::int64_t i = 0; i < n; ++i) po[i] = max_with_nan(pa[i], pb[i]);
            else if (sa == 1 && sb == 0)
                for (std::int64_t i = 0; i < n; ++i) po[i] = max_with_nan(pa[i], pb[0]);
            else if (sa == 0 && sb == 1)
                for (std::int64_t i = 0; i < n; ++i) po[i] = max_with_nan(pa[0], pb[i]);
            else
                for (std::int64_t i = 0; i < n; ++i) po[i] = max_with_nan(pa[i * sa], pb[i * sb]);
        } else {
            for (std::int64_t i = 0; i < n; ++i) {
                const float u = to_f32(a[ia + i * sa]), w = to_f32(b[ib + i * sb]);
                // The NaN rule of torch.maximum; a NaN input is returned as it is.
                out[o + i] = u != u ? a[ia + i * sa] : w != w ? b[ib + i * sb] : u < w ? b[ib + i * sb] : a[ia + i * sa];
            }
        }
    });
}

int run_loop(const hb_call* call, const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& y) {
    switch (x1.dtype) {
        case HB_FLOAT32: maximum_loop<float>(x1, x2, y); return 0;
        case HB_FLOAT16: maximum_loop<Half>(x1, x2, y); return 0;
        case HB_BFLOAT16: maximum_loop<BFloat16>(x1, x2, y); return 0;
        case HB_INT8: maximum_loop<std::int8_t>(x1, x2, y); return 0;
        case HB_INT32: maximum_loop<std::int32_t>(x1, x2, y); return 0;
        case HB_INT64: maximum_loop<std::int64_t>(x1, x2, y); return 0;
        default: return hb_fail(call, 2, "maximum: dtype must be float16, bfloat16, float32, int8, int32 or int64");
    }
}

// Empty on success, else a message for hb_fail.
std::string check_views(const hb_call* call, const hb_tensor*& x1, const hb_tensor*& x2, const hb_tensor*& y) {
    const hb_arg* a = hb_input(call, "x1");
    const hb_arg* b = hb_input(call, "x2");
    const hb_arg* out = hb_output(call, "y");
    if (!a || !b || !out || a->count != 1 || b->count != 1 || out->count != 1)
        return "maximum: expected input tensors x1, x2 and output tensor y";
    x1 = &a->tensors[0];
    x2 = &b->tensors[0];
    y = &out->tensors[0];
    if (!hb_is_contiguous(x1) || !hb_is_contiguous(x2) || !hb_is_contiguous(y))
        return "maximum: only contiguous tensors are supported";
    if (x1->dtype != x2->dtype || y->dtype != x1->dtype) return "maximum: x1, x2 and y must have one dtype";
    const std::size_t rank = static_cast<std::size_t>(std::max({x1->rank, x2->rank}));
    if (static_cast<std::size_t>(y->rank) != rank) return "maximum: y must have the broadcast rank";
    const dims da = padded(shape_of(*x1), rank), db = padded(shape_of(*x2), rank);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::int64_t expected = da[i] == 1 ? db[i] : da[i];
        if ((da[i] != db[i] && da[i] != 1 && db[i] != 1) || y->shape[i] != expected)
            return "maximum: y must have the broadcast shape of x1 and x2";
    }
    return {};
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    const hb_tensor *x1, *x2, *y;
    if (!check_views(call, x1, x2, y).empty()) return 0;  // the kernel reports errors
    try {
        maximum_plan(*x1, *x2, *y);  // create the primitive before the timed calls
    } catch (const std::exception&) {
    }
    return 0;
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor *x1, *x2, *y;
    if (const std::string error = check_views(call, x1, x2, y); !error.empty()) return hb_fail(call, 2, error.c_str());
    return guarded(call, [&] {
        const MaximumPlan& plan = maximum_plan(*x1, *x2, *y);
        if (!plan.primitive) return run_loop(call, *x1, *x2, *y);
        const void* src0 = plan.swapped ? x2->data : x1->data;
        const void* src1 = plan.swapped ? x1->data : x2->data;
        dnnl::stream& stream = cpu_stream();
        dnnl::memory m0(plan.src0_desc, cpu_engine(), const_cast<void*>(src0)),
            m1(plan.src1_desc, cpu_engine(), const_cast<void*>(src1)), md(plan.dst_desc, cpu_engine(), y->data);
        plan.primitive->execute(stream, {{DNNL_ARG_SRC_0, m0}, {DNNL_ARG_SRC_1, m1}, {DNNL_ARG_DST, md}});
        stream.wait();
        return 0;
    });
}
