// The evaluation lifecycle, written once for every operator and target, as named stages
// (in the manner of benchdnn's create/fill/execute/compare/report):
//   select cases      suite/case_selection     public or hidden split, case ids
//   build             Target::build            compile, object check
//   prepare a case    eval/prepare_case        base inputs, golden (cached)
//   judge             eval/judge_candidate     correctness calls, unwritten, nondeterminism, gate
//   measure           measure/cold_measure     timed calls on fresh inputs, stopping rule
//   verify            eval/verify_timed_calls  the kept timed calls against their own goldens
//   baseline          eval/baseline_timing     cached per machine, or measured with no candidate alive
//   score             eval/score_case          T_HW, cap, impossible time, score_i, composite
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eval/results.hpp"
#include "measure/timing_plan.hpp"
#include "suite/case_selection.hpp"

namespace hb {

struct EvalOptions {
    std::string submission_dir;
    std::string tasks_dir;              // default: the repo's suite/
    std::string profile = "cpu";
    std::string target = "cpu";
    std::vector<std::string> ops;       // empty: all operators in the tasks directory
    SplitChoice split;
    std::uint64_t eval_seed = 0;
    TimingPlan plan;
    int threads = 0;                    // 0: every core this process may use
    bool no_perf = false;
    bool two_trial = false;
    double op_timeout_s = 300;
    double build_timeout_s = 600;
    std::string hardware;               // model path or name; empty: calibrate once and cache
    std::string convention = "hapbench"; // T_HW convention (hap/convention_name.hpp): hapbench or cann-bench
    bool recalibrate = false;           // measure this machine again and replace the cached model
    std::string work_dir;               // build outputs and worker logs; empty: a temp dir
    std::string baseline_dir;           // default: next to the hapbench binary
    // The candidate's sandbox (docs/security.md); off only to measure what it costs.
    bool sandbox = true;
    // Caches (~/.cache/hapbench): goldens and baseline timings. no_cache reads and writes
    // neither; live_baseline measures the baseline in this run and leaves its cache alone.
    bool no_cache = false;
    bool live_baseline = false;
    // Below T_HW by more than this fraction is IMPOSSIBLE_TIME on a calibrated model
    // (calibrated peaks are measured, so a kernel may beat them slightly).
    double calibrated_margin = 0.10;
};

struct Progress {
    int cases_done = 0;
    int cases_total = 0;
    std::string op;
    std::int64_t case_id = 0;
    double elapsed_s = 0;
    double eta_s = 0;
};

RunResult evaluate(const EvalOptions& options, const std::function<void(const Progress&)>& on_progress);

// `hapbench baseline`: measures the baseline of every selected case and stores it in the
// baseline cache (refresh: also the ones the cache already holds). Returns one line per case.
std::vector<std::string> measure_baselines(const EvalOptions& options, bool refresh,
                                           const std::function<void(const Progress&)>& on_progress);

}  // namespace hb
