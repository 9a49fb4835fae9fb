#include "hapbench/kernel.h"

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    volatile unsigned long spins = 0;
    for (;;) spins = spins + 1;
    return 0;
}
