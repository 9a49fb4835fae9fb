#include "report/diff_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "report/html_page.hpp"
#include "report/run_summary.hpp"

namespace hb {

namespace {

using html::escape;

std::string signed_change(double v, int digits) {
    if (!std::isfinite(v)) return "-";
    if (std::fabs(v) < 0.5 * std::pow(10.0, -digits)) return fmt::format("{:.{}f}", 0.0, digits);
    return fmt::format("{:+.{}f}", v, digits);
}

std::string score_cell(const CaseSide& s) { return s.scored ? fmt::format("{:.3f}", s.score_i) : "-"; }

std::string ratio_text(std::optional<double> r) { return r ? fmt::format("{:.2f}x", *r) : "-"; }

std::string status_change_text(const CaseChange& c) {
    if (!c.status_changed()) return status_name(c.a.status);
    return status_name(c.a.status) + " -> " + status_name(c.b.status);
}

// A case with nothing to report: same status and, where timed, the same s_i to 3 places.
bool unchanged(const CaseChange& c) {
    return !c.status_changed() && std::fabs(c.score_change().value_or(0)) < 5e-4 &&
           (!c.t_cand_ratio() || *c.t_cand_ratio() == 1.0);
}

}  // namespace

void write_diff_text(const RunDiff& d, std::ostream& out) {
    out << "hapbench diff\n";
    out << fmt::format("  A: {}  ({}, {})\n", d.name_a, d.submission_a, d.started_a);
    out << fmt::format("  B: {}  ({}, {})\n", d.name_b, d.submission_b, d.started_b);
    for (const auto& w : d.warnings) out << "warning: " << w << "\n";
    out << fmt::format("\ntotal score: {:.2f} -> {:.2f} ({})\n", d.total_a, d.total_b,
                       signed_change(d.total_b - d.total_a, 2));
    for (const auto& [level, ab] : d.levels)
        out << fmt::format("level {} score: {:.2f} -> {:.2f} ({})\n", level, ab.first, ab.second,
                           signed_change(ab.second - ab.first, 2));

    out << "\noperators, largest change in op score first:\n";
    out << fmt::format("  {:<26} {:>3} {:>13} {:>17} {:>10} {:>17} {:>8}\n", "operator", "lvl", "pass A -> B",
                       "mean s_i A -> B", "T_cand B/A", "op score A -> B", "change");
    for (const auto& o : d.operators) {
        const std::string mean = d.timed_both ? fmt::format("{:.3f} -> {:.3f}", o.mean_score_a, o.mean_score_b) : "-";
        out << fmt::format("  {:<26} {:>3} {:>13} {:>17} {:>10} {:>17} {:>8}\n", o.op, o.level,
                           fmt::format("{}/{} -> {}/{}", o.a.passed, o.a.cases, o.b.passed, o.b.cases), mean,
                           ratio_text(o.t_cand_ratio), fmt::format("{:.2f} -> {:.2f}", o.a.op_score, o.b.op_score),
                           signed_change(o.op_score_change(), 2));
    }
    for (const auto& op : d.operators_only_a) out << fmt::format("  {:<26} only in A\n", op);
    for (const auto& op : d.operators_only_b) out << fmt::format("  {:<26} only in B\n", op);

    int changed = 0;
    for (const auto& c : d.cases) changed += !unchanged(c);
    out << fmt::format("\ncases, largest change first ({} of {} compared cases changed):\n", changed, d.cases.size());
    if (changed) {
        out << fmt::format("  {:<26} {:>5} {:<36} {:>22} {:>8} {:>19}\n", "operator", "case", "status A -> B",
                           "T_cand us A -> B", "B/A", "s_i A -> B");
        for (const auto& c : d.cases) {
            if (unchanged(c)) continue;
            const auto ds = c.score_change();
            out << fmt::format("  {:<26} {:>5} {:<36} {:>22} {:>8} {:>19}\n", c.op, c.case_id, status_change_text(c),
                               fmt::format("{} -> {}", format_us(c.a.t_cand_us), format_us(c.b.t_cand_us)),
                               ratio_text(c.t_cand_ratio()),
                               fmt::format("{} -> {}{}", score_cell(c.a), score_cell(c.b),
                                           ds ? " (" + signed_change(*ds, 3) + ")" : ""));
            if (c.status_changed() && !is_correct(c.b.status) && !c.b.message.empty())
                out << "        B: " << c.b.message << "\n";
        }
    }
    auto lone = [&](const char* heading, const std::vector<LoneCase>& list) {
        if (list.empty()) return;
        out << fmt::format("\n{} ({}):\n", heading, list.size());
        for (const auto& c : list)
            out << fmt::format("  {:<26} {:>5} {:<24} {}\n", c.op, c.case_id, status_name(c.status), c.signature);
    };
    lone("cases only in A", d.only_a);
    lone("cases only in B", d.only_b);
    lone("cases whose definition differs (not compared; status in B)", d.redefined);
}

namespace {

std::string change_cell(double v, int digits, double data_v) {
    const char* cls = !std::isfinite(v) || std::fabs(v) < 0.5 * std::pow(10.0, -digits) ? "" : v > 0 ? "up" : "down";
    return fmt::format("<td class=\"num {}\" data-v=\"{}\">{}</td>", cls, data_v, signed_change(v, digits));
}

std::string badge(CaseStatus s) {
    return fmt::format("<span class=\"st {}\">{}</span>", html::status_class(s), status_name(s));
}

// A shorter time is better: a ratio below 1 is shown as a gain.
std::string ratio_cell(std::optional<double> r) {
    if (!r) return "<td class=\"num\" data-v=\"1\">-</td>";
    const char* cls = *r < 0.995 ? "up" : *r > 1.005 ? "down" : "";
    return fmt::format("<td class=\"num {}\" data-v=\"{}\">{:.2f}x</td>", cls, *r, *r);
}

void lone_table(std::ostream& out, const char* id, const std::string& heading, const std::vector<LoneCase>& list) {
    if (list.empty()) return;
    out << fmt::format("<h3>{} ({})</h3>\n<table class=\"sortable\" id=\"{}\"><thead><tr><th>operator</th>"
                       "<th class=\"num\">case</th><th>status</th><th>signature</th></tr></thead><tbody>\n",
                       escape(heading), list.size(), id);
    for (const auto& c : list)
        out << fmt::format("<tr data-op=\"{0}\" data-case=\"{1}\"><td>{0}</td><td class=\"num\">{1}</td><td>{2}</td>"
                           "<td class=\"mono\">{3}</td></tr>\n",
                           escape(c.op), c.case_id, badge(c.status), escape(c.signature));
    out << "</tbody></table>\n";
}

}  // namespace

void write_diff_html(const RunDiff& d, std::ostream& out) {
    html::begin_page(out, "hapbench diff: " + d.name_a + " vs " + d.name_b);
    out << "<header>\n<h1>hapbench diff</h1>\n<dl class=\"facts\">\n";
    out << fmt::format("<dt>A</dt><dd><span class=\"mono\">{}</span>: {}, {}</dd>\n", escape(d.name_a),
                       escape(d.submission_a), escape(d.started_a));
    out << fmt::format("<dt>B</dt><dd><span class=\"mono\">{}</span>: {}, {}</dd>\n</dl>\n", escape(d.name_b),
                       escape(d.submission_b), escape(d.started_b));
    for (const auto& w : d.warnings) out << "<p class=\"note warning\">warning: " << escape(w) << "</p>\n";
    out << "<div class=\"scores\">\n";
    out << fmt::format("<div class=\"score\"><span>total score A → B</span><b>{:.2f} → {:.2f}</b><span>{}</span></div>\n",
                       d.total_a, d.total_b, signed_change(d.total_b - d.total_a, 2));
    for (const auto& [level, ab] : d.levels)
        out << fmt::format("<div class=\"score\"><span>level {}</span><b>{:.2f} → {:.2f}</b><span>{}</span></div>\n",
                           level, ab.first, ab.second, signed_change(ab.second - ab.first, 2));
    out << "</div>\n</header>\n";

    out << "<section id=\"operators\">\n<h2>Operators</h2>\n<p class=\"note\">Largest change in op score first. "
           "T_cand B/A: geometric mean over the cases both runs timed (below 1: B is faster). Click a column to "
           "sort.</p>\n<table class=\"sortable\" id=\"operator-diff\"><thead><tr><th>operator</th><th class=\"num\">level</th>"
           "<th class=\"num\">pass A</th><th class=\"num\">pass B</th><th class=\"num\">status changes</th>"
           "<th class=\"num\">mean s_i A</th><th class=\"num\">mean s_i B</th><th class=\"num\">T_cand B/A</th>"
           "<th class=\"num\">op score A</th><th class=\"num\">op score B</th><th class=\"num\">change</th></tr></thead><tbody>\n";
    for (const auto& o : d.operators) {
        out << fmt::format("<tr data-op=\"{0}\"><td>{0}</td><td class=\"num\">{1}</td><td class=\"num\">{2}/{3}</td>"
                           "<td class=\"num\">{4}/{5}</td><td class=\"num\">{6}</td>",
                           escape(o.op), o.level, o.a.passed, o.a.cases, o.b.passed, o.b.cases, o.status_changes);
        if (d.timed_both)
            out << fmt::format("<td class=\"num\">{:.3f}</td><td class=\"num\">{:.3f}</td>", o.mean_score_a, o.mean_score_b);
        else
            out << "<td class=\"num\">-</td><td class=\"num\">-</td>";
        out << ratio_cell(o.t_cand_ratio)
            << fmt::format("<td class=\"num\">{:.2f}</td><td class=\"num\">{:.2f}</td>", o.a.op_score, o.b.op_score)
            << change_cell(o.op_score_change(), 2, o.op_score_change()) << "</tr>\n";
    }
    out << "</tbody></table>\n";
    for (const auto& op : d.operators_only_a) out << "<p class=\"note\">only in A: " << escape(op) << "</p>\n";
    for (const auto& op : d.operators_only_b) out << "<p class=\"note\">only in B: " << escape(op) << "</p>\n";
    out << "</section>\n";

    out << fmt::format("<section id=\"cases\">\n<h2>Cases ({} compared)</h2>\n<p class=\"note\">Largest change first: "
                       "a case that started or stopped passing, then another change of status, then the change in "
                       "s_i, then the change in T_cand.</p>\n",
                       d.cases.size());
    out << "<table class=\"sortable\" id=\"case-diff\"><thead><tr><th>operator</th><th class=\"num\">case</th>"
           "<th>status A</th><th>status B</th><th class=\"num\">T_cand A µs</th><th class=\"num\">T_cand B µs</th>"
           "<th class=\"num\">B/A</th><th class=\"num\">s_i A</th><th class=\"num\">s_i B</th><th class=\"num\">change</th>"
           "<th>signature</th><th>B's message</th></tr></thead><tbody>\n";
    for (const auto& c : d.cases) {
        const auto ds = c.score_change();
        out << fmt::format("<tr class=\"case-diff{}\" data-op=\"{}\" data-case=\"{}\"><td>{}</td><td class=\"num\">{}</td>"
                           "<td>{}</td><td>{}</td><td class=\"num\" data-v=\"{}\">{}</td><td class=\"num\" data-v=\"{}\">{}</td>",
                           c.status_changed() ? " status-changed" : "", escape(c.op), c.case_id, escape(c.op), c.case_id,
                           badge(c.a.status), badge(c.b.status), c.a.t_cand_us, format_us(c.a.t_cand_us), c.b.t_cand_us,
                           format_us(c.b.t_cand_us));
        out << ratio_cell(c.t_cand_ratio())
            << fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td>", score_cell(c.a), score_cell(c.b));
        if (ds)
            out << change_cell(*ds, 3, *ds);
        else
            out << "<td class=\"num\" data-v=\"0\">-</td>";
        out << fmt::format("<td class=\"mono\">{}</td><td class=\"msg\">{}</td></tr>\n", escape(c.signature),
                           c.status_changed() ? escape(c.b.message) : "");
    }
    out << "</tbody></table>\n";
    lone_table(out, "only-a", "cases only in A", d.only_a);
    lone_table(out, "only-b", "cases only in B", d.only_b);
    lone_table(out, "redefined", "cases whose definition differs (not compared; status in B)", d.redefined);
    out << "</section>\n";
    html::end_page(out);
}

}  // namespace hb
