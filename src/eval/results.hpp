// What an evaluation produces: one record per case, per operator and per run, as typed
// values. The JSON schema written from these (report/json_report) is documented in
// docs/results.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/attr.hpp"
#include "core/status.hpp"
#include "hap/hardware_model.hpp"
#include "measure/statistics.hpp"
#include "measure/timing_plan.hpp"
#include "score/score.hpp"
#include "verify/precision_gate.hpp"

namespace hb {

struct TimingResult {
    std::vector<double> samples_us;  // timed calls (the worker's measure within the harness's bounds)
    SampleStats stats;
    double overhead_us = 0;          // the doorbell's round trip (median null call)
    double overhead_high_us = 0;     // its 95th percentile: how far below the window a time may be
    int clamped_calls = 0;           // calls whose worker measure fell outside the harness's bounds
    int unsettled_calls = 0;         // calls after which the worker was busy: not timed (docs/results.md)
    int warmup_calls = 0;
    std::string stop_reason;         // "precision", "max_calls", "max_time", "time_budget"
    double relative_error = 0;       // of the median, when timing stopped
    bool unstable = false;           // a bound stopped timing before the precision target
    std::string source;              // "measured", "cache" (baselines only); empty: not timed
    bool measured() const { return stats.count > 0; }
};

struct CaseResult {
    std::string op;
    int level = 0;
    std::int64_t case_id = 0;
    CaseStatus status = CaseStatus::not_run;
    std::string message;          // why it did not pass, in one line
    std::string signature;        // "float16 [1021, 4097]" etc.
    std::int64_t input_elements = 0;
    AttrMap attrs;
    std::string value_range;
    std::string golden_source;    // "computed" or "cache"; empty when no golden was needed
    std::optional<GateResult> gate;  // precision gate verdict of the first correctness call
    int verified_timed_calls = 0;
    std::int64_t nondeterministic_elements = 0;
    TimingResult candidate;
    TimingResult baseline;
    std::string baseline_status;  // "measured", "not measured: ..." or a failure of the baseline
    double t_cand_us = 0;         // median of candidate samples (0 when not measured)
    double t_base_measured_us = 0;
    double t_base_us = 0;         // after the cap rule
    double t_hw_us = 0;           // under the run's T_HW convention: the score's anchor
    double t_hw_bound_us = 0;     // hapbench's bound, which no kernel beats: the IMPOSSIBLE_TIME limit
    std::string bottleneck;       // group label
    std::string bottleneck_unit;
    std::map<std::string, double> unit_us;
    double score_i = 0;
    double speedup = 0;           // T_base / T_cand
    std::vector<std::string> audit;  // findings that need a person's look
    bool passed() const { return is_correct(status); }
};

struct BuildInfo {
    std::string command;
    std::string log;
    double seconds = 0;
    bool ok = false;
};

struct OperatorResult {
    std::string op;
    int level = 0;
    std::string state;  // "evaluated", "missing", "compile_error", "delegation", "not_implemented"
    std::string message;
    BuildInfo build;
    std::string baseline;  // what the baseline is
    std::vector<CaseResult> cases;
    OperatorScore score;
    double geomean_speedup = 0;
};

struct PhaseTimes {
    double build_s = 0;
    double inputs_s = 0;      // base inputs
    double golden_s = 0;      // goldens of the base inputs (computed or read from the cache)
    double candidate_s = 0;   // correctness and timed calls of the candidate, fresh inputs included
    double baseline_s = 0;    // baseline measurements (0 when every timing came from the cache)
    double verify_s = 0;      // precision gate, and goldens of the verified timed calls
    double total_s = 0;
    // Inside build and candidate: the object check and the worker's sandbox set-up.
    double sandbox_s = 0;
    // Inside candidate and baseline: writing fresh timed-call inputs, poisoning, flushing.
    double prepare_calls_s = 0;
    // Inside candidate and baseline, where their time goes: starting workers and mapping each
    // case (`load`), the correctness calls and their judgement (`correctness`), and the cold
    // timing loop (`timed_calls`: doorbell calls, warmups, timed calls and their preparation).
    double load_s = 0;
    double correctness_s = 0;
    double timed_calls_s = 0;

    // Whether the split above was recorded (files from before it have none).
    bool has_split() const { return load_s + correctness_s + timed_calls_s > 0; }
    // Adds another's split and timed-call preparation (a baseline measurement's, say).
    void add_split(const PhaseTimes& other) {
        load_s += other.load_s;
        correctness_s += other.correctness_s;
        timed_calls_s += other.timed_calls_s;
        prepare_calls_s += other.prepare_calls_s;
    }
};

struct CacheUse {
    bool goldens = false;    // golden cache read and written in this run
    bool baselines = false;  // baseline timing cache read (and written)
    std::string dir;
    std::string note;        // why a cache was off, or why goldens were not stored
    int goldens_from_cache = 0;
    int goldens_computed = 0;
    int goldens_not_stored = 0;  // computed but not kept (too large, disk nearly full, a failed write: the note says which)
    int baselines_from_cache = 0;
    int baselines_measured = 0;
};

struct SandboxFacts {
    bool enabled = true;
    int landlock_abi = 0;  // of the candidate workers; 0: files not confined
    std::string landlock_note;
};

struct RunResult {
    std::string hapbench_version;
    std::string started_at;  // ISO 8601 UTC
    std::string target;
    std::string submission;
    std::string tasks_dir;
    std::string profile;
    std::string split;
    // Identifies a hidden split without revealing its seed: HMAC-SHA256 under this machine's
    // split key of the split's seed, count and profile (empty for the public split).
    std::string split_id;
    std::uint64_t eval_seed = 0;
    std::string suite_hash;
    int threads = 0;
    std::vector<int> cpus;
    SandboxFacts sandbox;
    // Whether the harness's OpenMP helpers slept between regions (absent in older results).
    std::optional<bool> harness_threads_passive;
    bool no_perf = false;
    bool two_trial = false;
    bool live_baseline = false;
    double op_timeout_s = 0;
    double build_timeout_s = 0;
    TimingPlan timing_plan;
    std::string compiler_version;
    std::string compiler_command;
    std::optional<HardwareModel> hardware;  // none in a --no-perf run without --hardware
    std::string t_hw_convention;  // the convention every case's T_HW was computed under
    std::map<std::string, std::string> libraries;  // versions of oneDNN etc.
    CacheUse caches;
    std::vector<OperatorResult> operators;
    std::map<int, double> level_scores;
    double total_score = 0;
    PhaseTimes phases;
};

}  // namespace hb
