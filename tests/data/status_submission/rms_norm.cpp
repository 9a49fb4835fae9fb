// Hands the work to BLAS, declared by hand (no header to refuse): the object imports
// cblas_sdot, which the C/C++ runtime does not provide (DELEGATION: the operator's state is
// delegation and it scores 0).
#include "hapbench/kernel.h"

extern "C" float cblas_sdot(int n, const float* x, int incx, const float* y, int incy);

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    const hb_tensor& x = hb_input(call, "x")->tensors[0];
    const float* v = static_cast<const float*>(x.data);
    return cblas_sdot(static_cast<int>(hb_numel(&x)), v, 1, v, 1) > 0 ? 0 : 1;
}
