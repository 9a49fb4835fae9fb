// Aborts in every call: the worker dies of SIGABRT (CRASH).
#include <cstdlib>

#include "hapbench/kernel.h"

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) { std::abort(); }
