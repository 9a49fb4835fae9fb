#include <cmath>

#include "core/error.hpp"
#include "report/reporter.hpp"

namespace hb {

namespace {

// JSON has no NaN or infinity: non-finite numbers become null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json timing_json(const TimingResult& t) {
    return {{"samples_us", t.samples_us}, {"count", t.stats.count}, {"median_us", number(t.stats.median)},
            {"min_us", number(t.stats.min)}, {"max_us", number(t.stats.max)}, {"mean_us", number(t.stats.mean)},
            {"stddev_us", number(t.stats.stddev)}, {"relative_iqr", number(t.stats.relative_iqr)}};
}

nlohmann::json case_json(const CaseResult& c) {
    auto attrs = nlohmann::json::object();
    for (const auto& [name, v] : c.attrs) attrs[name] = v.to_string();
    return {{"operator", c.op},
            {"level", c.level},
            {"case_id", c.case_id},
            {"status", status_name(c.status)},
            {"passed", c.passed()},
            {"message", c.message},
            {"signature", c.signature},
            {"input_elements", c.input_elements},
            {"attrs", attrs},
            {"value_range", c.value_range},
            {"t_cand_us", c.candidate.measured() ? number(c.t_cand_us) : nlohmann::json(nullptr)},
            {"t_base_us", number(c.t_base_us)},
            {"t_base_measured_us", c.baseline.measured() ? number(c.t_base_measured_us) : nlohmann::json(nullptr)},
            {"t_hw_us", number(c.t_hw_us)},
            {"t_hw_bound_us", number(c.t_hw_bound_us)},
            {"bottleneck", c.bottleneck},
            {"bottleneck_unit", c.bottleneck_unit},
            {"unit_us", c.unit_us},
            {"score", number(c.score_i)},
            {"speedup", c.speedup > 0 ? number(c.speedup) : nlohmann::json(nullptr)},
            {"precision", c.gate.is_null() ? nlohmann::json(nullptr) : c.gate},
            {"verified_timed_calls", c.verified_timed_calls},
            {"nondeterministic_elements", c.nondeterministic_elements},
            {"candidate_timing", timing_json(c.candidate)},
            {"baseline_timing", timing_json(c.baseline)},
            {"baseline_status", c.baseline_status},
            {"audit", c.audit}};
}

class JsonReporter final : public Reporter {
  public:
    void write(const RunResult& run, std::ostream& out) const override { out << run_to_json(run).dump(2) << "\n"; }
};

}  // namespace

nlohmann::json run_to_json(const RunResult& run) {
    auto cases = nlohmann::json::array();
    auto operators = nlohmann::json::array();
    for (const auto& op : run.operators) {
        for (const auto& c : op.cases) cases.push_back(case_json(c));
        operators.push_back({{"operator", op.op},
                             {"level", op.level},
                             {"state", op.state},
                             {"message", op.message},
                             {"op_score", number(op.score.op_score)},
                             {"cases", op.score.cases},
                             {"passed", op.score.passed},
                             {"structural_failures", op.score.structural_failures},
                             {"compile_term", number(op.score.compile_term)},
                             {"correctness_term", number(op.score.correctness_term)},
                             {"performance_term", number(op.score.performance_term)},
                             {"geomean_speedup", op.geomean_speedup > 0 ? number(op.geomean_speedup) : nlohmann::json(nullptr)},
                             {"baseline", op.baseline},
                             {"build", {{"ok", op.build.ok}, {"command", op.build.command}, {"seconds", op.build.seconds},
                                        {"log", op.build.log}}}});
    }
    auto levels = nlohmann::json::object();
    for (const auto& [level, score] : run.level_scores) levels[std::to_string(level)] = number(score);
    return {{"schema_version", 1},
            {"hapbench_version", run.hapbench_version},
            {"started_at", run.started_at},
            {"target", run.target},
            {"submission", run.submission},
            {"suite", {{"tasks_dir", run.tasks_dir}, {"profile", run.profile}, {"split", run.split},
                       {"hidden_seed", run.split == "hidden" ? nlohmann::json(run.hidden_seed) : nlohmann::json(nullptr)},
                       {"eval_seed", run.eval_seed}, {"hash", run.suite_hash}}},
            {"environment", {{"threads", run.threads}, {"cpus", run.cpus}, {"sandbox", run.sandbox}, {"compiler", run.compiler},
                             {"hardware", run.hardware}, {"libraries", run.libraries}}},
            {"t_hw_convention", run.t_hw_convention},
            {"timing_plan", run.timing_plan},
            {"phases_s", {{"build", run.phases.build_s}, {"inputs", run.phases.inputs_s}, {"golden", run.phases.golden_s},
                          {"candidate", run.phases.candidate_s}, {"baseline", run.phases.baseline_s},
                          {"verify", run.phases.verify_s}, {"sandbox", run.phases.sandbox_s},
                          {"total", run.phases.total_s}}},
            {"total_score", number(run.total_score)},
            {"level_scores", levels},
            {"operators", operators},
            {"cases", cases}};
}

std::unique_ptr<Reporter> make_json_reporter() { return std::make_unique<JsonReporter>(); }

}  // namespace hb
