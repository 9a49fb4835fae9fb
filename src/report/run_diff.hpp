// The difference between two runs of the same suite (`hapbench diff A.json B.json`): per
// case and per operator the change in status, T_cand, s_i and op score, sorted by the largest
// change, and the cases only one run has. Runs that cannot be compared (another target,
// profile, split, T_HW convention or hardware model) are refused; differences that leave
// the comparison meaningful (another suite hash, eval seed, version, thread count,
// recalibrated peaks, a --no-perf side) become warnings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/results.hpp"

namespace hb {

// One case as one run saw it.
struct CaseSide {
    CaseStatus status = CaseStatus::not_run;
    double t_cand_us = 0;  // 0 when not timed
    double score_i = 0;    // meaningful when scored
    bool scored = false;   // passed in a timed run: s_i counts
    std::string message;
};

struct CaseChange {
    std::string op;
    int level = 0;
    std::int64_t case_id = 0;
    std::string signature;
    CaseSide a, b;
    bool status_changed() const { return a.status != b.status; }
    bool correctness_changed() const { return is_correct(a.status) != is_correct(b.status); }
    // B's s_i minus A's, when both scored it.
    std::optional<double> score_change() const;
    // T_cand of B over A, when both timed the case.
    std::optional<double> t_cand_ratio() const;
};

struct OperatorChange {
    std::string op;
    int level = 0;
    OperatorScore a, b;
    double mean_score_a = 0, mean_score_b = 0;  // mean s_i over passing cases
    // Geometric mean of T_cand(B) / T_cand(A) over the cases both timed; nullopt if none.
    std::optional<double> t_cand_ratio;
    int cases_compared = 0;
    int status_changes = 0;
    double op_score_change() const { return b.op_score - a.op_score; }
};

// A case only one run has (or one whose definition changed between the runs).
struct LoneCase {
    std::string op;
    std::int64_t case_id = 0;
    std::string signature;
    CaseStatus status = CaseStatus::not_run;
};

struct RunDiff {
    std::string name_a, name_b;  // the files, for headings
    std::string submission_a, submission_b, started_a, started_b;
    std::vector<std::string> warnings;
    double total_a = 0, total_b = 0;
    std::vector<std::pair<int, std::pair<double, double>>> levels;  // level -> (A, B); absent side 0
    std::vector<OperatorChange> operators;  // in both runs, largest |op score change| first
    std::vector<std::string> operators_only_a, operators_only_b;
    std::vector<CaseChange> cases;          // in both runs, largest change first
    std::vector<LoneCase> only_a, only_b;
    std::vector<LoneCase> redefined;        // same operator and id, another definition: not compared
    bool timed_both = false;                // both runs timed their cases (T_cand, s_i comparable)
};

// Throws hb::Error (exit 2) naming the difference when the runs cannot be compared.
RunDiff diff_runs(const RunResult& a, const RunResult& b, const std::string& name_a, const std::string& name_b);

}  // namespace hb
