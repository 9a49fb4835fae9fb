// Prints 80 MiB per call: the worker's log is limited to 64 MiB (RLIMIT_FSIZE), so the
// write past it ends the worker (RESOURCE_LIMIT, the file-size limit).
#include <cstdio>
#include <cstring>

#include "hapbench/kernel.h"

extern "C" HB_EXPORT int hapbench_kernel(const hb_call* call) {
    static char line[4096];
    std::memset(line, 'x', sizeof line - 1);
    for (int i = 0; i < 20 * 1024; ++i) std::fputs(line, stdout);
    return 0;
}
