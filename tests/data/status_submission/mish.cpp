// Compiles, but the entry point is misspelt, so the object defines no hapbench_kernel
// (COMPILE_ERROR: the operator's state is compile_error and it scores 0).
#include "hapbench/kernel.h"

extern "C" HB_EXPORT int hapbench_kernal(const hb_call* call) { return 0; }
