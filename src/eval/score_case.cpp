#include "eval/score_case.hpp"

#include <cmath>

#include <fmt/format.h>

#include "hap/solver.hpp"

namespace hb {

void bound_case(CaseResult& c, const Operator& op, const Problem& problem, const HardwareModel& model,
                Convention convention) {
    const WorkModel work = op.work(problem);
    const HapResult hap = t_hw_under(convention, problem, work, model);
    c.t_hw_us = hap.t_hw_us;
    c.t_hw_bound_us = convention == Convention::hapbench ? hap.t_hw_us : solve(work, model).t_hw_us;
    c.bottleneck = hap.bottleneck_group;
    c.bottleneck_unit = hap.bottleneck_unit;
    c.unit_us = hap.unit_us;
}

void score_case(CaseResult& c, const HardwareModel& model, double calibrated_margin, Convention convention) {
    // The reference's baseline floor (10 us) is ten times its T_HW floor (1 us) on
    // accelerators; the cpu models have neither.
    c.t_base_us = capped_baseline_us(c.t_base_measured_us, c.t_hw_us, model.floor_us * 10);
    if (c.status != CaseStatus::pass || !c.candidate.measured()) return;
    const bool calibrated = model.provenance.origin == PeakOrigin::calibrated;
    const double limit = calibrated ? c.t_hw_bound_us * (1 - calibrated_margin) : c.t_hw_bound_us;
    if (c.t_cand_us < limit) {
        c.status = CaseStatus::impossible_time;
        c.audit.push_back(fmt::format(
            "IMPOSSIBLE_TIME: measured {:.2f} us < T_HW {:.2f} us{}", c.t_cand_us, c.t_hw_bound_us,
            calibrated ? fmt::format(" minus the {:.0f}% calibration margin (if the model was calibrated on a busy machine "
                                     "its peaks are too low: run `hapbench eval --recalibrate` on an idle one)",
                                     calibrated_margin * 100)
                       : std::string()));
        c.message = c.audit.back();
    } else {
        c.score_i = case_performance_score(c.t_cand_us, c.t_base_us, c.t_hw_us);
        if (convention != Convention::hapbench && c.t_cand_us < c.t_hw_us)
            c.audit.push_back(fmt::format("faster than the {} T_HW ({:.2f} us < {:.2f} us), not than hapbench's bound "
                                          "({:.2f} us): the published limit is beatable here",
                                          convention_name(convention), c.t_cand_us, c.t_hw_us, c.t_hw_bound_us));
    }
    if (c.t_cand_us > 0) c.speedup = c.t_base_us / c.t_cand_us;
}

void score_operator(OperatorResult& o) {
    std::vector<CaseScoreInput> inputs;
    double log_speedup = 0;
    int speedups = 0;
    for (const auto& c : o.cases) {
        inputs.push_back({c.status, c.score_i});
        if (c.speedup > 0) {
            log_speedup += std::log(c.speedup);
            ++speedups;
        }
    }
    o.score = operator_score(inputs, o.state == "compile_error" || o.state == "delegation");
    o.geomean_speedup = speedups ? std::exp(log_speedup / speedups) : 0;
}

}  // namespace hb
