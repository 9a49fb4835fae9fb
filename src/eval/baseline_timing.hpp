// Stage 5 of a case: the baseline's time. The baseline (the vendor's kernel, hapbench's own
// code) does not change between candidates, so, the way the reference benchmark publishes
// fixed baseline times, it is measured once per machine and cached
// (~/.cache/hapbench/baselines), keyed by everything its time depends on: the hardware
// model's fingerprint (its calibration), the thread count, the case (canonical text and
// input seed), the baseline object's hash and the timing plan. `hapbench baseline
// --refresh` measures again; `eval --live-baseline` measures in the run and touches no
// cache. A measurement runs only while no candidate code can run: the caller closes the
// candidate's worker first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "eval/prepare_case.hpp"
#include "eval/results.hpp"
#include "measure/fresh_inputs.hpp"
#include "targets/target.hpp"

namespace hb {

struct BaselineMeasurement {
    TimingResult timing;
    std::string status;  // "measured", or what failed
    // Where a measurement's time went (load, correctness, timed_calls, prepare_calls; zero
    // when it came from the cache), added to the run's phases.
    PhaseTimes spent;
};

class BaselineTimings {
  public:
    // `cache_dir` empty: no cache (live measurements only). `refresh`: measure even when the
    // cache holds the case, and store the new time.
    BaselineTimings(const Target& target, std::string op, std::string baseline_library, SessionOptions options,
                    TimingPlan plan, std::string hardware_fingerprint, std::string cache_dir, bool refresh);
    ~BaselineTimings();

    bool available() const { return !library_hash_.empty(); }
    const std::string& library() const { return library_; }
    // The cached timing of the case, if the cache holds it (and refresh is off).
    std::optional<BaselineMeasurement> cached(const PreparedCase& prepared) const;
    // Measures the case now (and stores it when a cache is used).
    BaselineMeasurement measure(const PreparedCase& prepared, const TimedInputSeeds& seeds, std::mt19937_64& rng,
                                Clock::time_point deadline);
    void close();

  private:
    std::string key(const PreparedCase& prepared) const;

    const Target& target_;
    std::string op_, library_;
    SessionOptions options_;
    TimingPlan plan_;
    std::string hardware_fingerprint_, cache_dir_;
    bool refresh_;
    std::string library_hash_;
    std::unique_ptr<KernelSession> session_;
};

// A stable hash of the hardware model (its YAML form), for cache keys.
std::string hardware_fingerprint(const HardwareModel& model);

}  // namespace hb
