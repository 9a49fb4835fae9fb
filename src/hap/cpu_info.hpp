// What calibration needs to know about the CPU it runs on: its model string, the CPUs this
// process may use, cache sizes, and which SIMD instruction sets exist.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hb {

struct CpuInfo {
    std::string model_name;         // /proc/cpuinfo "model name"
    std::string host;               // gethostname
    std::vector<int> allowed_cpus;  // sched_getaffinity of this process
    std::size_t l2_bytes_per_core = 0;
    std::size_t llc_bytes = 0;      // last-level cache, shared
    int llc_level = 0;
    std::string cache_sizes_from;   // "sysfs" or "sysconf"
    bool avx2_fma = false;
    bool avx512f = false;
    bool avx512_bf16 = false;
    bool avx512_fp16 = false;
    bool amx_tile = false;
    // Dot-product and tile instructions a contraction kernel can use (matrix peaks).
    bool avx512_vnni = false;
    bool avx_vnni = false;   // the VEX (256-bit) form, on CPUs without AVX-512
    bool amx_int8 = false;
    bool amx_bf16 = false;
    bool amx_fp16 = false;   // CPUID.(7,1):EAX[21]; GCC 12's __builtin_cpu_supports does not know it
    std::size_t available_memory_bytes = 0;
    double load_average_1min = 0;   // /proc/loadavg: a busy machine measures low peaks
};

CpuInfo probe_cpu();

// Fraction of all CPU time spent idle over the next `seconds` (from /proc/stat); -1 when
// unknown. Other work on the machine lowers every measured peak.
double measure_idle_fraction(double seconds);

}  // namespace hb
