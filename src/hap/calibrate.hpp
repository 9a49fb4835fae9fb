// `hapbench calibrate`: measure this CPU's peaks with microbenchmarks and write them as a
// hardware model marked calibrated, each figure saying how it was measured.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "hap/hardware_model.hpp"

namespace hb {

struct CalibrateOptions {
    bool quick = false;                    // small buffers and short runs: tests, not scoring
    int threads = 0;                       // 0: one per CPU in this process's affinity mask
    std::size_t dram_buffer_bytes = 0;     // 0: 512 MiB (64 MiB quick), less if memory is short
    int runs = 0;                          // timed runs per benchmark, best kept; 0: 7 (2 quick)
    double seconds_per_run = 0;            // length of one compute/cache run; 0: 0.08 (0.005 quick)
    std::string name;                      // model name; default cpu-<model>-<cores>
    std::string op_costs_path;             // default hardware/op-costs/cpu.yaml
    std::function<void(const std::string&)> progress;  // one line per step, if set
};

// Written into every calibrated model's provenance.method. A cached model without it
// predates the per-dtype matrix peaks (its fp16, bf16 and int8 rates are fp32-derived and
// too low for AMX or dot-product kernels), so load_or_calibrate measures the machine again.
inline constexpr std::string_view calibration_format = "calibration format 2 (matrix peaks per dtype)";

HardwareModel calibrate_cpu(const CalibrateOptions& options = {});

// $XDG_CACHE_HOME/hapbench/cpu-<model>-<cores>.yaml (or ~/.cache/hapbench/...).
std::string default_calibration_cache_path();

// Reuses the model cached at `cache_path` (default: default_calibration_cache_path()) when
// it was calibrated on the same CPU model with the same core count by this calibration
// format; otherwise calibrates (saying why through options.progress) and writes it there.
// Quick calibrations are never cached or reused.
HardwareModel load_or_calibrate(const CalibrateOptions& options = {}, const std::string& cache_path = "");

}  // namespace hb
