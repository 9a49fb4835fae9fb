// Per-case performance score and the operator composite (methodology sections 5 and 6).
#pragma once

#include <vector>

#include "core/status.hpp"

namespace hb {

// T_base = min(measured, max(10 * T_HW, floor)); without a measurement, max(10 * T_HW, floor).
double capped_baseline_us(double measured_us, double t_hw_us, double floor_us);

// score_i = (T_base - T_HW) / ((T_cand - T_HW) + (T_base - T_HW)): 0.5 at the baseline, 1 at
// T_HW. Undefined (returns 0) when a time is non-positive or NaN or the denominator is not
// positive.
double case_performance_score(double t_cand_us, double t_base_us, double t_hw_us);

struct CaseScoreInput {
    CaseStatus status = CaseStatus::not_run;
    double score_i = 0;  // performance score of the case; counted only when it passed
};

struct OperatorScore {
    int cases = 0;
    int structural_failures = 0;
    int passed = 0;
    double compile_term = 0;      // 100 * w_c * (N - n_structural) / N
    double correctness_term = 0;  // 100 * w_f * n_pass / N
    double performance_term = 0;  // 100 * w_p * sum(score_i over passing) / N
    double op_score = 0;
};

inline constexpr double weight_compile = 0.2;
inline constexpr double weight_correct = 0.3;
inline constexpr double weight_perf = 0.5;

// A compile failure zeroes the operator.
OperatorScore operator_score(const std::vector<CaseScoreInput>& cases, bool compile_failed);

}  // namespace hb
