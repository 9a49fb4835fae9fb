#include "hapbench/kernel.h"

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    this is not C++;
}
