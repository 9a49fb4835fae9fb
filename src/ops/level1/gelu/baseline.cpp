// Baseline for gelu: oneDNN 2.6 eltwise_gelu_erf (approximate="none") or eltwise_gelu_tanh
// (approximate="tanh").
// Per dtype on an AVX2 CPU (measured on the AMD EPYC of the reference machine):
//   float32: the jit:avx2 primitive, x -> y directly.
//   float16, bfloat16: unimplemented without AVX-512, so x is widened into the fp32
//     workspace, the fp32 primitive runs in place, and the result is narrowed into y.
// Accuracy (measured against fp64): both algorithms lose their relative accuracy where
// |y| < ~1e-6, x in about [-6.6, -4.3] (0 or a few ulp of 1e-7 where y is 1e-8..1e-7), so
// fp32 cases whose range covers that tail can fail the precision gate; gelu(-inf) is NaN,
// as in the golden.
#include <cstdint>
#include <string>

#include "ops/dnnl_eltwise_baseline.hpp"

namespace {

using namespace hb::baseline;

// The algorithm for the call's approximate attribute, or false for an unknown one.
bool gelu_algorithm(const hb_call* call, dnnl::algorithm& out) {
    const std::string mode = hb_attr_string(call, "approximate", "none");
    if (mode == "none") out = dnnl::algorithm::eltwise_gelu_erf;
    else if (mode == "tanh") out = dnnl::algorithm::eltwise_gelu_tanh;
    else return false;
    return true;
}

}  // namespace

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    dnnl::algorithm algorithm;
    if (!gelu_algorithm(call, algorithm)) return 0;  // the kernel reports it
    return eltwise_baseline_workspace_bytes(call, algorithm);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    FlatTensor x, y;
    if (const std::string error = unary_views(call, x, y); !error.empty()) return hb_fail(call, 2, error.c_str());
    dnnl::algorithm algorithm;
    if (!gelu_algorithm(call, algorithm)) return hb_fail(call, 2, "approximate must be \"none\" or \"tanh\"");
    return guarded(call, [&] { return run_eltwise(call, x, y, algorithm, 0.f, 0.f); });
}
