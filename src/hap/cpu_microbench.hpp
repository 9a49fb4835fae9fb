// Microbenchmarks that measure a CPU's peaks for calibration: FMA throughput per dtype and
// streaming bandwidth of each memory level, run on a chosen set of CPUs at once.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "hap/cpu_info.hpp"

namespace hb {

struct MicrobenchResult {
    double best_per_s = 0;          // the best run: peaks are upper bounds, noise only slows
    std::vector<double> run_per_s;  // every timed run, for the spread
    std::string isa;                // the instruction set the kernel used
    std::string describe_spread() const;  // "best X of N runs (worst Y)"
};

// Floating-point operations per second of `cpus` together (one thread pinned per CPU), an
// FMA counting as two. `dtype` is float32 or float64.
MicrobenchResult measure_fma_flops(DType dtype, const CpuInfo& cpu, const std::vector<int>& cpus,
                                   double seconds_per_run, int runs);

enum class MemoryPattern {
    read,      // sum every element
    write_nt,  // non-temporal stores: no read-for-ownership, as a good kernel writes outputs
    copy_nt,   // read one half, non-temporal store to the other; counts both directions
};
std::string_view memory_pattern_name(MemoryPattern p);

// Bytes per second of `cpus` together streaming over `bytes` of `buffer` (64-byte aligned),
// each CPU over its own contiguous slice, `passes` times per run. A buffer smaller than a
// cache level measures that level once the warm-up pass has filled it.
MicrobenchResult measure_bandwidth(MemoryPattern pattern, float* buffer, std::size_t bytes,
                                   const CpuInfo& cpu, const std::vector<int>& cpus, int passes,
                                   int runs);

// Shared by the microbenchmark files (cpu_matrix_microbench.cpp too): runs `work(thread)`
// on one thread pinned per CPU of `cpus`, `runs` timed times after one warm-up (which also
// lifts the clock out of idle), and returns the seconds of each timed run.
std::vector<double> time_parallel(const CpuInfo& cpu, const std::vector<int>& cpus, int runs,
                                  const std::function<void(int)>& work);
// Rates `amount / seconds` of each run, the best kept.
MicrobenchResult microbench_rates(const std::vector<double>& seconds, double amount, const std::string& isa);

}  // namespace hb
