// The evaluation lifecycle, written once for every operator and target: build, then per
// case generate inputs, compute goldens, run and time the candidate and the baseline
// interleaved, gate, bound, score.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eval/results.hpp"
#include "measure/timing_plan.hpp"

namespace hb {

struct EvalOptions {
    std::string submission_dir;
    std::string tasks_dir;              // default: the repo's suite/
    std::string profile = "cpu";
    std::string target = "cpu";
    std::vector<std::string> ops;       // empty: all operators in the tasks directory
    std::vector<std::int64_t> case_ids; // empty: all cases
    std::string split = "public";       // or "hidden"
    std::optional<std::uint64_t> hidden_seed;
    int hidden_count = 80;
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
    int verified_timed_calls = 1;       // timed calls per case whose outputs are verified
    // The candidate's sandbox (docs/security.md); off only to measure what it costs.
    bool sandbox = true;
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

}  // namespace hb
