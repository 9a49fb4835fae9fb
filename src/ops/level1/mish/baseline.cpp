// Baseline for mish: oneDNN 2.6 eltwise_mish.
// Per dtype on an AVX2 CPU (measured on the AMD EPYC of the reference machine):
//   float32: the jit:avx2 primitive, x -> y directly.
//   float16, bfloat16: unimplemented without AVX-512, so x is widened into the fp32
//     workspace, the fp32 primitive runs in place, and the result is narrowed into y.
// Accuracy (measured against fp64): relative errors above 1.2e-3 (up to 0.9) for x in about
// [-26, -10], so fp32 cases whose range covers that tail can fail the precision gate;
// mish(-inf) is NaN, as in the golden.
#include <cstdint>

#include "ops/dnnl_eltwise_baseline.hpp"

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    return hb::baseline::eltwise_baseline_workspace_bytes(call, dnnl::algorithm::eltwise_mish);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    return hb::baseline::eltwise_baseline_kernel(call, dnnl::algorithm::eltwise_mish);
}
