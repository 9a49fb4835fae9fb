#include "hapbench/kernel.h"

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    volatile int* nowhere = nullptr;
    *nowhere = 42;
    return 0;
}
