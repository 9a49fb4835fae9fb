// Baseline for sigmoid: oneDNN 2.6 eltwise_logistic.
// Per dtype on an AVX2 CPU (measured on the AMD EPYC of the reference machine):
//   float32: the jit:avx2 primitive, x -> y directly.
//   float16, bfloat16: unimplemented without AVX-512, so x is widened into the fp32
//     workspace, the fp32 primitive runs in place, and the result is narrowed into y.
#include <cstdint>

#include "ops/dnnl_eltwise_baseline.hpp"

extern "C" HB_EXPORT std::uint64_t hapbench_workspace_bytes(const hb_call* call) {
    return hb::baseline::eltwise_baseline_workspace_bytes(call, dnnl::algorithm::eltwise_logistic);
}

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    return hb::baseline::eltwise_baseline_kernel(call, dnnl::algorithm::eltwise_logistic);
}
