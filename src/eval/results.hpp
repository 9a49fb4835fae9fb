// What an evaluation produces: one record per case, per operator and per run. The JSON
// schema written from these (report/json_report) is documented in docs/results.md.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "measure/statistics.hpp"
#include "score/score.hpp"
#include "suite/attr.hpp"

namespace hb {

struct TimingResult {
    std::vector<double> samples_us;
    SampleStats stats;
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
    nlohmann::json gate;          // precision gate verdict (per output statistics)
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
    std::string state;  // "evaluated", "missing", "compile_error", "not_implemented"
    std::string message;
    BuildInfo build;
    std::string baseline;  // what the baseline is
    std::vector<CaseResult> cases;
    OperatorScore score;
    double geomean_speedup = 0;
};

struct PhaseTimes {
    double build_s = 0;
    double inputs_s = 0;
    double golden_s = 0;
    double candidate_s = 0;
    double baseline_s = 0;
    double verify_s = 0;
    double total_s = 0;
    // Inside build and candidate: the object check, and the worker's sandbox work (filter
    // set-up, output fingerprints and their pauses), reported so its cost is visible.
    double sandbox_s = 0;
};

struct RunResult {
    std::string hapbench_version;
    std::string started_at;  // ISO 8601 UTC
    std::string target;
    std::string submission;
    std::string tasks_dir;
    std::string profile;
    std::string split;
    std::uint64_t hidden_seed = 0;
    std::uint64_t eval_seed = 0;
    std::string suite_hash;
    int threads = 0;
    std::vector<int> cpus;
    bool sandbox = true;
    nlohmann::json timing_plan;
    nlohmann::json compiler;   // version, command
    nlohmann::json hardware;   // model name, kind, provenance
    std::string t_hw_convention;  // the convention every case's T_HW was computed under
    nlohmann::json libraries;  // versions of oneDNN etc.
    std::vector<OperatorResult> operators;
    std::map<int, double> level_scores;
    double total_score = 0;
    PhaseTimes phases;
};

}  // namespace hb
