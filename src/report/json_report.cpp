#include <cmath>

#include "core/error.hpp"
#include "hap/hardware_source.hpp"
#include "report/reporter.hpp"

namespace hb {

namespace {

// JSON has no NaN or infinity: non-finite numbers become null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json timing_json(const TimingResult& t) {
    return {{"source", t.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.source)},
            {"samples_us", t.samples_us}, {"count", t.stats.count}, {"median_us", number(t.stats.median)},
            {"min_us", number(t.stats.min)}, {"max_us", number(t.stats.max)}, {"mean_us", number(t.stats.mean)},
            {"stddev_us", number(t.stats.stddev)}, {"relative_iqr", number(t.stats.relative_iqr)},
            {"overhead_us", number(t.overhead_us)}, {"overhead_high_us", number(t.overhead_high_us)},
            {"clamped_calls", t.clamped_calls}, {"unsettled_calls", t.unsettled_calls}, {"warmup_calls", t.warmup_calls},
            {"stop_reason", t.stop_reason}, {"median_relative_error", number(t.relative_error)},
            {"timing_unstable", t.unstable}};
}

nlohmann::json plan_json(const TimingPlan& p) {
    return {{"warmup", p.warmup},
            {"stopping_rule", {{"name", "relative_spread"}, {"min_calls", p.stopping.min_calls},
                               {"max_calls", p.stopping.max_calls}, {"min_time_s", p.stopping.min_time_s},
                               {"max_time_s", p.stopping.max_time_s}, {"relative_precision", p.stopping.relative_precision}}},
            {"verified_timed_calls", p.verified_calls},
            {"input_slots", TimingPlan::input_slots},
            {"null_calls", p.null_calls},
            {"cache_eviction", "clflushopt of the call's inputs, outputs and workspace before every call"},
            {"timed_inputs", "fresh values for every timed call, from a secret of the evaluation"},
            {"clock", "the worker's measure of the call, bounded by the harness's own window around the call's release and "
                      "completion: at most the window, at least the window less the 95th percentile of 32 null calls"},
            {"description", p.describe()}};
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
            {"precision", c.gate ? to_json(*c.gate) : nlohmann::json(nullptr)},
            {"golden_source", c.golden_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.golden_source)},
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
    const auto& ph = run.phases;
    const auto& caches = run.caches;
    nlohmann::json out = {{"schema_version", 2},
            {"hapbench_version", run.hapbench_version},
            {"started_at", run.started_at},
            {"target", run.target},
            {"submission", run.submission},
            {"suite", {{"tasks_dir", run.tasks_dir}, {"profile", run.profile}, {"split", run.split},
                       {"split_id", run.split_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.split_id)},
                       {"eval_seed", run.eval_seed}, {"hash", run.suite_hash}}},
            {"environment", {{"threads", run.threads}, {"cpus", run.cpus},
                             {"sandbox", {{"enabled", run.sandbox.enabled}, {"landlock_abi", run.sandbox.landlock_abi},
                                          {"landlock_note", run.sandbox.landlock_note}}},
                             {"compiler", {{"version", run.compiler_version}, {"command", run.compiler_command}}},
                             {"hardware", run.hardware ? hardware_model_summary(*run.hardware)
                                                       : nlohmann::json{{"name", "none"}, {"origin", "not used: --no-perf"}}},
                             {"libraries", run.libraries}}},
            {"options", {{"no_perf", run.no_perf}, {"two_trial", run.two_trial}, {"live_baseline", run.live_baseline},
                         {"op_timeout_s", run.op_timeout_s}, {"build_timeout_s", run.build_timeout_s}}},
            {"t_hw_convention", run.t_hw_convention},
            {"timing_plan", plan_json(run.timing_plan)},
            {"caches", {{"dir", caches.dir}, {"goldens", caches.goldens}, {"baselines", caches.baselines},
                        {"note", caches.note}, {"goldens_from_cache", caches.goldens_from_cache},
                        {"goldens_computed", caches.goldens_computed}, {"baselines_from_cache", caches.baselines_from_cache},
                        {"baselines_measured", caches.baselines_measured}}},
            {"phases_s", {{"build", ph.build_s}, {"inputs", ph.inputs_s}, {"golden", ph.golden_s},
                          {"candidate", ph.candidate_s}, {"baseline", ph.baseline_s}, {"verify", ph.verify_s},
                          {"sandbox", ph.sandbox_s}, {"prepare_calls", ph.prepare_calls_s}, {"total", ph.total_s}}},
            {"total_score", number(run.total_score)},
            {"level_scores", levels},
            {"operators", operators},
            {"cases", cases}};
    // Only when some were: files from before the field read back unchanged (absent means none).
    if (caches.goldens_not_stored > 0) out["caches"]["goldens_not_stored"] = caches.goldens_not_stored;
    if (ph.has_split()) {
        out["phases_s"]["load"] = ph.load_s;
        out["phases_s"]["correctness"] = ph.correctness_s;
        out["phases_s"]["timed_calls"] = ph.timed_calls_s;
    }
    if (run.harness_threads_passive)
        out["environment"]["harness_threads"] = *run.harness_threads_passive ? "passive" : "spinning";
    return out;
}

std::unique_ptr<Reporter> make_json_reporter() { return std::make_unique<JsonReporter>(); }

}  // namespace hb
