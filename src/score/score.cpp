#include "score/score.hpp"

#include <algorithm>
#include <cmath>

namespace hb {

double capped_baseline_us(double measured_us, double t_hw_us, double floor_us) {
    const double cap = std::max(10.0 * t_hw_us, floor_us);
    if (!(measured_us > 0) || !std::isfinite(measured_us)) return cap;
    return std::min(measured_us, cap);
}

double case_performance_score(double t_cand_us, double t_base_us, double t_hw_us) {
    const double values[] = {t_cand_us, t_base_us, t_hw_us};
    for (double v : values)
        if (!(v > 0) || !std::isfinite(v)) return 0;
    const double denominator = (t_cand_us - t_hw_us) + (t_base_us - t_hw_us);
    if (!(denominator > 0)) return 0;
    return (t_base_us - t_hw_us) / denominator;
}

OperatorScore operator_score(const std::vector<CaseScoreInput>& cases, bool compile_failed) {
    OperatorScore s;
    s.cases = static_cast<int>(cases.size());
    double perf_sum = 0;
    for (const auto& c : cases) {
        if (is_structural_failure(c.status)) ++s.structural_failures;
        if (is_correct(c.status)) {
            ++s.passed;
            perf_sum += c.score_i;
        }
    }
    if (compile_failed || s.cases == 0) return s;
    const double n = s.cases;
    s.compile_term = 100 * weight_compile * (n - s.structural_failures) / n;
    s.correctness_term = 100 * weight_correct * s.passed / n;
    s.performance_term = 100 * weight_perf * perf_sum / n;
    s.op_score = s.compile_term + s.correctness_term + s.performance_term;
    return s;
}

}  // namespace hb
