// The HTML report of one run (issue 21): header, scores, the operator table with score bars,
// the cases that failed or were flagged, a roofline-style plot per operator and the
// bottleneck shares. One self-contained file (report/html_page.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/case_plot.hpp"
#include "report/html_page.hpp"
#include "report/reporter.hpp"
#include "report/run_summary.hpp"

namespace hb {

namespace {

using html::escape;

std::string fixed(double v, int digits) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "-"; }

void fact(std::ostream& out, const std::string& name, const std::string& value_html) {
    out << "<dt>" << escape(name) << "</dt><dd>" << value_html << "</dd>\n";
}

std::string hardware_html(const RunResult& run) {
    if (!run.hardware) return escape(hardware_line(run));
    const HardwareModel& m = *run.hardware;
    std::string s = fmt::format("<b>{}</b> ({} model, {} peaks", escape(m.name), hardware_kind_name(m.kind),
                                peak_origin_name(m.provenance.origin));
    if (!m.provenance.date.empty()) s += ", " + escape(m.provenance.date);
    if (!m.provenance.host.empty()) s += ", host " + escape(m.provenance.host);
    if (!m.provenance.cpu_model.empty()) s += ", " + escape(m.provenance.cpu_model);
    s += ")";
    if (!m.source_path.empty()) s += " <span class=\"mono muted\">" + escape(m.source_path) + "</span>";
    if (!m.provenance.method.empty()) s += "<br><span class=\"muted\">" + escape(m.provenance.method) + "</span>";
    return s;
}

void write_header(std::ostream& out, const RunResult& run) {
    out << "<header>\n<h1>hapbench results: " << escape(run.submission) << "</h1>\n<dl class=\"facts\">\n";
    fact(out, "submission", "<span class=\"mono\">" + escape(run.submission) + "</span>");
    fact(out, "target", escape(run.target));
    fact(out, "hardware model", hardware_html(run));
    std::string split = escape(run.split) + ", profile " + escape(run.profile);
    if (!run.split_id.empty()) split += ", split id <span class=\"mono\">" + escape(run.split_id.substr(0, 16)) + "</span>";
    if (run.eval_seed != 0) split += fmt::format(", eval seed {}", run.eval_seed);
    fact(out, "split", split);
    fact(out, "T_HW convention", escape(run.t_hw_convention.empty() ? "hapbench" : run.t_hw_convention));
    fact(out, "hapbench version", escape(run.hapbench_version));
    fact(out, "date", escape(run.started_at));
    fact(out, "suite", "<span class=\"mono\">" + escape(run.tasks_dir) + "</span>, hash <span class=\"mono\">" +
                           escape(run.suite_hash.substr(0, 16)) + "</span>");
    fact(out, "threads", fmt::format("{}{}", run.threads, run.sandbox.enabled ? "" : " (sandbox off: --no-sandbox)"));
    fact(out, "compiler", "<span class=\"mono\">" + escape(run.compiler_command) + "</span>");
    fact(out, "timing", run.no_perf ? "none (--no-perf): correctness only"
                                    : escape(run.timing_plan.describe()) + (run.live_baseline ? ", live baseline" : ""));
    fact(out, "wall time", fmt::format("{:.1f} s", run.phases.total_s));
    out << "</dl>\n";

    std::map<int, int> ops_per_level;
    for (const auto& op : run.operators) ++ops_per_level[op.level];
    out << "<div class=\"scores\">\n";
    out << fmt::format("<div class=\"score\" id=\"total-score\"><span>total score</span><b>{}</b><span>of {} ({} "
                       "operators at 100)</span></div>\n",
                       fixed(run.total_score, 2), 100 * run.operators.size(), run.operators.size());
    for (const auto& [level, score] : run.level_scores)
        out << fmt::format("<div class=\"score\"><span>level {}</span><b>{}</b><span>of {}</span></div>\n", level,
                           fixed(score, 2), 100 * ops_per_level[level]);
    out << "</div>\n";
    if (!perf_measured(run))
        out << "<p class=\"note\">Correctness only (--no-perf): nothing was timed, so op scores are the compile and "
               "correctness terms, and no case has a T_cand.</p>\n";
    out << "</header>\n<nav><a href=\"#operators\">operators</a><a href=\"#attention\">failing and flagged cases</a>"
           "<a href=\"#plots\">plots</a><a href=\"#bottlenecks\">bottlenecks</a></nav>\n";
}

// The failures by status, then the operator's own message (a compile error's first line).
std::string failures_cell(const OperatorResult& op) {
    std::string text = failures_summary(op);
    if (!op.message.empty() && op.state != "not_implemented") text += (text.empty() ? "" : "; ") + op.message;
    return text;
}

void write_operator_table(std::ostream& out, const RunResult& run) {
    out << "<section id=\"operators\">\n<h2>Operators</h2>\n"
           "<p class=\"note\">op score = 100 (0.2 (N - structural failures) / N + 0.3 passed / N + 0.5 sum of s_i over "
           "passing cases / N); its tick marks 75, a correct kernel at baseline speed. Mean s_i is over the passing "
           "cases: 0.5 at the baseline, 1 at T_HW (its tick marks 0.5). Speedup: geometric mean of T_base / T_cand. "
           "Click a column to sort.</p>\n"
           "<table class=\"sortable\" id=\"operator-table\"><thead><tr><th>operator</th><th class=\"num\">level</th>"
           "<th>state</th><th class=\"num\">pass</th><th>mean s_i</th><th>op score</th><th class=\"num\">speedup</th>"
           "<th>failures</th></tr></thead><tbody>\n";
    for (const auto& op : run.operators) {
        const auto& s = op.score;
        const double mean = mean_passing_score(op);
        out << fmt::format("<tr data-op=\"{0}\"><td><a href=\"#op-{0}\">{0}</a></td><td class=\"num\">{1}</td>"
                           "<td>{2}</td><td class=\"num\" data-v=\"{3}\">{4}/{5}</td>",
                           escape(op.op), op.level, escape(op.state), s.cases ? double(s.passed) / s.cases : 0, s.passed,
                           s.cases);
        if (perf_measured(run))
            out << fmt::format("<td class=\"nowrap\" data-v=\"{}\">{}</td>", mean, html::score_bar(mean, 1, 0.5, fixed(mean, 3)));
        else
            out << "<td data-v=\"-1\">-</td>";
        out << fmt::format("<td class=\"nowrap\" data-v=\"{}\">{}</td>", s.op_score, html::score_bar(s.op_score, 100, 75, fixed(s.op_score, 2)));
        out << fmt::format("<td class=\"num\" data-v=\"{}\">{}</td><td class=\"msg\">{}</td></tr>\n", op.geomean_speedup,
                           op.geomean_speedup > 0 ? fmt::format("{:.2f}x", op.geomean_speedup) : "-",
                           escape(failures_cell(op)));
    }
    out << "</tbody></table>\n</section>\n";
}

std::string status_badge(CaseStatus s) {
    return fmt::format("<span class=\"st {}\">{}</span>", html::status_class(s), status_name(s));
}

void write_attention(std::ostream& out, const RunResult& run) {
    std::vector<const CaseResult*> cases;
    for (const auto& op : run.operators)
        for (const auto& c : op.cases)
            if (!c.passed() || !c.audit.empty()) cases.push_back(&c);
    out << fmt::format("<section id=\"attention\">\n<h2>Failing and flagged cases ({})</h2>\n", cases.size());
    if (cases.empty()) {
        out << "<p class=\"note\">Every case passed, and none was flagged for audit.</p>\n</section>\n";
        return;
    }
    out << "<p class=\"note\">Every case that did not pass, and every passing case with an audit finding. Statuses: "
           "docs/results.md.</p>\n<table class=\"sortable\" id=\"attention-table\"><thead><tr><th>operator</th>"
           "<th class=\"num\">case</th><th>status</th><th>signature</th><th>why</th></tr></thead><tbody>\n";
    for (const CaseResult* c : cases) {
        std::string why = escape(c->message);
        for (const auto& a : c->audit)
            if (a != c->message) why += (why.empty() ? "" : "<br>") + std::string("audit: ") + escape(a);
        if (c->gate && !c->gate->passed && c->gate->reason != c->message)
            why += (why.empty() ? "" : "<br>") + std::string("precision: ") + escape(c->gate->reason);
        out << fmt::format("<tr class=\"attention\" data-op=\"{0}\" data-case=\"{1}\"><td>{0}</td><td class=\"num\">{1}</td>"
                           "<td>{2}</td><td class=\"mono\">{3}</td><td class=\"msg\">{4}</td></tr>\n",
                           escape(c->op), c->case_id, status_badge(c->status), escape(c->signature), why);
    }
    out << "</tbody></table>\n</section>\n";
}

void write_case_table(std::ostream& out, const RunResult& run, const OperatorResult& op) {
    out << "<details><summary>the " << op.cases.size() << " cases</summary>\n<table class=\"sortable\"><thead><tr>"
           "<th class=\"num\">case</th><th>status</th><th>signature</th><th class=\"num\">T_cand µs</th>"
           "<th class=\"num\">T_base µs</th><th class=\"num\">T_HW µs</th><th>bound by</th><th class=\"num\">s_i</th>"
           "</tr></thead><tbody>\n";
    for (const auto& c : op.cases) {
        const bool scored = perf_measured(run) && c.passed();
        out << fmt::format("<tr><td class=\"num\">{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"num\" data-v=\"{}\">{}</td>"
                           "<td class=\"num\" data-v=\"{}\">{}</td><td class=\"num\" data-v=\"{}\">{}</td><td>{}</td>"
                           "<td class=\"num\" data-v=\"{}\">{}</td></tr>\n",
                           c.case_id, status_badge(c.status), escape(c.signature), c.t_cand_us, format_us(c.t_cand_us),
                           c.t_base_us, format_us(c.t_base_us), c.t_hw_us, format_us(c.t_hw_us), escape(c.bottleneck),
                           scored ? c.score_i : -1, scored ? fixed(c.score_i, 3) : "-");
    }
    out << "</tbody></table></details>\n";
}

void write_plots(std::ostream& out, const RunResult& run) {
    out << "<section id=\"plots\">\n<h2>Where each case sits</h2>\n"
           "<p class=\"note\">Per operator, each case at its T_HW (x) with its candidate time T_cand (dot, coloured by "
           "status) joined to its baseline time T_base (hollow square), both axes log scale. The solid diagonal is "
           "T = T_HW, the hardware limit; the dashed one is 10 T_HW, the cap on T_base. A dot on the diagonal scores "
           "s_i = 1, a dot level with its square 0.5. Cases that were not timed sit in the band under the axis; a "
           "black ring marks an audit finding. Hover over a dot for the case.</p>\n";
    html::status_legend(out);
    out << "<div class=\"plots\">\n";
    int plot_id = 0;
    for (const auto& op : run.operators) {
        out << fmt::format("<figure class=\"plot\" id=\"op-{0}\" data-op=\"{0}\" data-cases=\"{1}\"><figcaption><b>{0}</b> "
                           "(level {2}) · {3}/{1} pass · op score {4}{5}</figcaption>\n",
                           escape(op.op), op.cases.size(), op.level, op.score.passed, fixed(op.score.op_score, 2),
                           op.cases.empty() ? " · " + escape(op.state) : "");
        write_case_plot(out, op, plot_id++);
        if (!op.cases.empty()) write_case_table(out, run, op);
        out << "</figure>\n";
    }
    out << "</div>\n</section>\n";
}

// Colours for bottleneck groups, in the order of write_bottlenecks.
const char* const kGroupColours[] = {"#4878a8", "#e0a030", "#7a5195", "#2a9d8f", "#d1495b", "#6d597a", "#8d99ae"};

void write_bottlenecks(std::ostream& out, const RunResult& run) {
    std::vector<std::string> groups;
    std::map<std::string, std::map<std::string, int>> per_op;  // op -> group -> cases
    std::map<std::string, int> all;
    int bound_cases = 0;
    for (const auto& op : run.operators)
        for (const auto& c : op.cases) {
            if (c.bottleneck.empty()) continue;
            if (std::find(groups.begin(), groups.end(), c.bottleneck) == groups.end()) groups.push_back(c.bottleneck);
            ++per_op[op.op][c.bottleneck];
            ++all[c.bottleneck];
            ++bound_cases;
        }
    // Groups in the order of the model's units (Memory, Vector, Matrix on a CPU), so that a
    // group keeps its colour whatever case comes first; groups the model lacks go last.
    std::vector<std::string> ordered;
    if (run.hardware)
        for (const auto& u : run.hardware->units)
            if (std::find(groups.begin(), groups.end(), u.group) != groups.end() &&
                std::find(ordered.begin(), ordered.end(), u.group) == ordered.end())
                ordered.push_back(u.group);
    std::sort(groups.begin(), groups.end());
    for (const auto& g : groups)
        if (std::find(ordered.begin(), ordered.end(), g) == ordered.end()) ordered.push_back(g);
    groups = ordered;
    out << "<section id=\"bottlenecks\">\n<h2>Bottlenecks</h2>\n";
    if (bound_cases == 0) {
        out << "<p class=\"note\">No case has a T_HW bottleneck in this run (no hardware model: --no-perf without "
               "--hardware).</p>\n</section>\n";
        return;
    }
    const HardwareModel* m = run.hardware ? &*run.hardware : nullptr;
    out << fmt::format("<p class=\"note\">The unit group whose time sets each case's T_HW under the {} model {} "
                       "(convention {}), as shares of the cases. {}</p>\n",
                       m ? std::string(hardware_kind_name(m->kind)) : "run's", m ? escape(m->name) : "",
                       escape(run.t_hw_convention),
                       m && m->kind != HardwareKind::cpu
                           ? "This is an accelerator model: its groups are the accelerator's engines."
                           : "On a CPU model the groups are Memory (DRAM and caches), Vector and Matrix.");
    auto colour = [&](const std::string& g) {
        const auto at = std::find(groups.begin(), groups.end(), g) - groups.begin();
        return kGroupColours[at % std::size(kGroupColours)];
    };
    out << "<div class=\"legend\">";
    for (const auto& g : groups) out << fmt::format("<span style=\"--c: {}\">{}</span>", colour(g), escape(g));
    out << "</div>\n<table id=\"bottleneck-table\"><thead><tr><th>operator</th><th class=\"num\">cases</th><th>shares</th>"
           "<th>counts</th></tr></thead><tbody>\n";
    auto row = [&](const std::string& name, const std::map<std::string, int>& counts, bool total) {
        int n = 0;
        for (const auto& [g, k] : counts) n += k;
        std::string bar, text;
        for (const auto& g : groups) {
            const auto it = counts.find(g);
            if (it == counts.end()) continue;
            const double share = 100.0 * it->second / n;
            bar += fmt::format("<i style=\"width:{:.2f}%;background:{}\" title=\"{}: {} of {} cases ({:.0f}%)\"></i>", share,
                               colour(g), escape(g), it->second, n, share);
            text += fmt::format("{}{} {:.0f}%", text.empty() ? "" : ", ", escape(g), share);
        }
        out << fmt::format("<tr{}><td>{}</td><td class=\"num\">{}</td><td><span class=\"stack\">{}</span></td><td>{}</td></tr>\n",
                           total ? " class=\"total\"" : "", total ? "<b>all cases</b>" : escape(name), n, bar, text);
    };
    row("", all, true);
    for (const auto& op : run.operators)
        if (const auto it = per_op.find(op.op); it != per_op.end()) row(op.op, it->second, false);
    out << "</tbody></table>\n</section>\n";
}

class HtmlReporter final : public Reporter {
  public:
    void write(const RunResult& run, std::ostream& out) const override {
        html::begin_page(out, "hapbench results: " + run.submission);
        write_header(out, run);
        write_operator_table(out, run);
        write_attention(out, run);
        write_plots(out, run);
        write_bottlenecks(out, run);
        out << fmt::format("<footer><p class=\"note\">Written by hapbench {} from a results file of schema 2 "
                           "(docs/results.md). Self-contained: no network, scripts or fonts from outside.</p></footer>\n",
                           escape(run.hapbench_version));
        html::end_page(out);
    }
};

}  // namespace

std::unique_ptr<Reporter> make_html_reporter() { return std::make_unique<HtmlReporter>(); }

}  // namespace hb
