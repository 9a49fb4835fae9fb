// Baseline for foreach_addcdiv_scalar: y_i = x1_i + scalar * x2_i / x3_i per list member.
// Where oneDNN implements the dtype (float32 on this AVX2 CPU: jit:uni) one binary_div
// primitive per member computes x2 / x3 and applies two post-ops, eltwise_linear (times
// scalar) and binary_add (x1). oneDNN 2.6 has no f16/bf16 binary primitive without
// AVX-512, so those dtypes run a fused OpenMP loop that converts to fp32 and back.
#include <cmath>
#include <cstring>
#include <string>

#include "ops/baseline_support.hpp"

namespace {

using namespace hb::baseline;

bool run_onednn(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& x3, hb_tensor& y, float scalar) {
    const auto type = dnnl_type(x1.dtype);
    if (!type) return false;
    const std::int64_t n = hb_numel(&x1);
    const dnnl::memory::desc md = flat_desc(n, *type);
    std::uint32_t scalar_bits;
    std::memcpy(&scalar_bits, &scalar, sizeof scalar_bits);
    const std::string key = dtype_label(x1.dtype) + ":" + std::to_string(n) + ":" + std::to_string(scalar_bits);
    const auto& primitive = cached_primitive(key, [&]() -> std::optional<dnnl::primitive> {
        dnnl::post_ops ops;
        ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, scalar, 0.f);
        ops.append_binary(dnnl::algorithm::binary_add, md);
        dnnl::primitive_attr attr;
        attr.set_post_ops(ops);
        const dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_div, md, md, md), attr,
                                              cpu_engine());
        return dnnl::binary(pd);
    });
    if (!primitive) return false;
    auto& engine = cpu_engine();
    dnnl::memory m1(md, engine, x1.data), m2(md, engine, x2.data), m3(md, engine, x3.data), my(md, engine, y.data);
    primitive->execute(cpu_stream(), {{DNNL_ARG_SRC_0, m2},
                                      {DNNL_ARG_SRC_1, m3},
                                      {DNNL_ARG_DST, my},
                                      {DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, m1}});
    cpu_stream().wait();
    return true;
}

template <typename Element>
void run_loop(const hb_tensor& x1, const hb_tensor& x2, const hb_tensor& x3, hb_tensor& y, float scalar) {
    const std::int64_t n = hb_numel(&x1);
    const auto* a = static_cast<const Element*>(x1.data);
    const auto* b = static_cast<const Element*>(x2.data);
    const auto* c = static_cast<const Element*>(x3.data);
    auto* out = static_cast<Element*>(y.data);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
        out[i] = from_f32<Element>(to_f32(a[i]) + scalar * to_f32(b[i]) / to_f32(c[i]));
}

}  // namespace

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_arg* x1 = hb_input(call, "x1");
    const hb_arg* x2 = hb_input(call, "x2");
    const hb_arg* x3 = hb_input(call, "x3");
    hb_arg* y = hb_output(call, "y");
    if (!x1 || !x2 || !x3 || !y) return hb_fail(call, 1, "foreach_addcdiv_scalar: expected inputs x1, x2, x3 and output y");
    if (!hb_attr_find(call, "scalar")) return hb_fail(call, 1, "foreach_addcdiv_scalar: attribute scalar is missing");
    const float scalar = static_cast<float>(hb_attr_float(call, "scalar", 1.0));
    if (x2->count != x1->count || x3->count != x1->count || y->count != x1->count)
        return hb_fail(call, 1, "foreach_addcdiv_scalar: the lists x1, x2, x3 and y differ in length");
    try {
        for (std::int32_t m = 0; m < x1->count; ++m) {
            const hb_tensor& a = x1->tensors[m];
            const hb_tensor& b = x2->tensors[m];
            const hb_tensor& c = x3->tensors[m];
            hb_tensor& out = y->tensors[m];
            const std::int64_t n = hb_numel(&a);
            if (hb_numel(&b) != n || hb_numel(&c) != n || hb_numel(&out) != n)
                return hb_fail(call, 1, "foreach_addcdiv_scalar: list members differ in size");
            if (b.dtype != a.dtype || c.dtype != a.dtype || out.dtype != a.dtype)
                return hb_fail(call, 1, "foreach_addcdiv_scalar: list members differ in dtype");
            if (!hb_is_contiguous(&a) || !hb_is_contiguous(&b) || !hb_is_contiguous(&c) || !hb_is_contiguous(&out))
                return hb_fail(call, 1, "foreach_addcdiv_scalar: the baseline needs contiguous tensors");
            if (n == 0 || run_onednn(a, b, c, out, scalar)) continue;
            const bool known = with_float_element(a.dtype, [&](auto element) {
                run_loop<decltype(element)>(a, b, c, out, scalar);
            });
            if (!known) return hb_fail(call, 2, "foreach_addcdiv_scalar: unsupported dtype (float32, float16, bfloat16 only)");
        }
    } catch (const dnnl::error& e) {
        return hb_fail(call, 3, (std::string("foreach_addcdiv_scalar: oneDNN failed: ") + e.what()).c_str());
    }
    return 0;
}
