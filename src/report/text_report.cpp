#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/reporter.hpp"
#include "report/run_summary.hpp"

namespace hb {

std::unique_ptr<Reporter> make_json_reporter();
std::unique_ptr<Reporter> make_html_reporter();

namespace {

std::string cache_line(const RunResult& run) {
    const auto& c = run.caches;
    std::string s = fmt::format("goldens {} from cache, {} computed{}; baselines {} from cache, {} measured",
                                c.goldens_from_cache, c.goldens_computed,
                                c.goldens_not_stored ? fmt::format(" ({} not stored)", c.goldens_not_stored) : "",
                                c.baselines_from_cache, c.baselines_measured);
    if (!c.note.empty()) s += " (" + c.note + ")";
    if (run.live_baseline) s += " (--live-baseline)";
    return s;
}

std::string mean_score_cell(const RunResult& run, const OperatorResult& op) {
    return perf_measured(run) ? fmt::format("{:.3f}", mean_passing_score(op)) : "-";
}

const char* const kNoPerfNote =
    "correctness only (--no-perf): nothing was timed, so op scores are the compile and correctness terms";

// Console table: one line per operator, then the cases that did not pass.
class TableReporter final : public Reporter {
  public:
    void write(const RunResult& run, std::ostream& out) const override {
        out << fmt::format("hapbench {}  target {}  split {}  profile {}  threads {}\n", run.hapbench_version, run.target,
                           run.split, run.profile, run.threads);
        out << fmt::format("hardware model: {}, T_HW convention {}\n\n", hardware_line(run),
                           run.t_hw_convention.empty() ? "hapbench" : run.t_hw_convention);
        out << fmt::format("{:<24} {:>3} {:>7} {:>10} {:>9} {:>9}  {}\n", "operator", "lvl", "pass", "mean s_i",
                           "speedup", "op score", "failures");
        for (const auto& op : run.operators) {
            const auto& s = op.score;
            out << fmt::format("{:<24} {:>3} {:>7} {:>10} {:>9} {:>9.2f}  {}\n", op.op, op.level,
                               fmt::format("{}/{}", s.passed, s.cases), mean_score_cell(run, op),
                               op.geomean_speedup > 0 ? fmt::format("{:.2f}x", op.geomean_speedup) : "-", s.op_score,
                               failures_summary(op));
        }
        out << "\n";
        for (const auto& [level, score] : run.level_scores) out << fmt::format("level {} score: {:.2f}\n", level, score);
        out << fmt::format("total score: {:.2f}\n", run.total_score);
        if (!perf_measured(run)) out << kNoPerfNote << "\n";
        bool header = false;
        for (const auto& op : run.operators)
            for (const auto& c : op.cases) {
                if (c.passed() && c.audit.empty()) continue;
                if (!header) {
                    out << "\ncases that need attention:\n";
                    header = true;
                }
                out << fmt::format("  {} case {}: {} - {}\n", c.op, c.case_id, status_name(c.status),
                                   !c.message.empty() ? c.message : (c.audit.empty() ? "" : c.audit.front()));
            }
        const PhaseTimes& ph = run.phases;
        out << fmt::format("\nwall time {:.1f} s (build {:.1f}, inputs {:.1f}, golden {:.1f}, candidate {:.1f}, baseline {:.1f}, verify {:.1f}; "
                           "sandbox and checks {:.1f}, timed-call preparation {:.1f} of these)\n",
                           ph.total_s, ph.build_s, ph.inputs_s, ph.golden_s, ph.candidate_s, ph.baseline_s, ph.verify_s,
                           ph.sandbox_s, ph.prepare_calls_s);
        if (ph.has_split())
            out << fmt::format("candidate and baseline: loading cases {:.1f}, correctness calls {:.1f}, timing loops {:.1f}\n",
                               ph.load_s, ph.correctness_s, ph.timed_calls_s);
        out << "caches: " << cache_line(run) << "\n";
    }
};

// Markdown summary: the operator table and a per-case table for each operator.
class MarkdownReporter final : public Reporter {
  public:
    void write(const RunResult& run, std::ostream& out) const override {
        out << "# hapbench results\n\n";
        out << fmt::format("- hapbench {}, target `{}`, split `{}`, profile `{}`, {} threads\n", run.hapbench_version,
                           run.target, run.split, run.profile, run.threads);
        out << fmt::format("- hardware model {}\n", hardware_line(run));
        out << fmt::format("- compiler: `{}`\n", run.compiler_command);
        out << fmt::format("- caches: {}\n", cache_line(run));
        out << fmt::format("- suite hash `{}`\n\n", run.suite_hash.substr(0, 16));
        out << "| operator | level | pass | mean score_i | geomean speedup | op score | failures |\n";
        out << "|---|---:|---:|---:|---:|---:|---|\n";
        for (const auto& op : run.operators)
            out << fmt::format("| {} | {} | {}/{} | {} | {} | {:.2f} | {} |\n", op.op, op.level, op.score.passed,
                               op.score.cases, mean_score_cell(run, op),
                               op.geomean_speedup > 0 ? fmt::format("{:.2f}x", op.geomean_speedup) : "-",
                               op.score.op_score, failures_summary(op));
        out << "\n";
        for (const auto& [level, score] : run.level_scores) out << fmt::format("**Level {}: {:.2f}**  \n", level, score);
        out << fmt::format("**Total: {:.2f}**\n", run.total_score);
        if (!perf_measured(run)) out << "\n" << kNoPerfNote << ".\n";
        for (const auto& op : run.operators) {
            if (op.cases.empty()) continue;
            out << fmt::format("\n## {}\n\n", op.op);
            out << "| case | status | signature | T_cand us | T_base us | T_HW us | bottleneck | score_i |\n";
            out << "|---:|---|---|---:|---:|---:|---|---:|\n";
            for (const auto& c : op.cases)
                out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", c.case_id, status_name(c.status),
                                   c.signature, format_us(c.t_cand_us), format_us(c.t_base_us), format_us(c.t_hw_us), c.bottleneck,
                                   perf_measured(run) ? fmt::format("{:.3f}", c.score_i) : "-");
        }
    }
};

}  // namespace

std::unique_ptr<Reporter> make_reporter(const std::string& format) {
    if (format == "table") return std::make_unique<TableReporter>();
    if (format == "json") return make_json_reporter();
    if (format == "markdown") return std::make_unique<MarkdownReporter>();
    if (format == "html") return make_html_reporter();
    throw Error("unknown format '" + format + "' (known: table, json, markdown, html)");
}

}  // namespace hb
