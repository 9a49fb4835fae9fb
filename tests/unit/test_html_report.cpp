// The HTML report's structure, checked in the page's text (tests/integration/test_html_render
// renders it in Chromium): every operator and every failing or flagged case is present, each
// plot has one point per case, text from the results is escaped, and nothing is loaded from
// outside the file.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "report/diff_report.hpp"
#include "report/reporter.hpp"
#include "report/results_reader.hpp"

namespace hb {
namespace {

RunResult load(const std::string& name) {
    return read_results_file(std::string(HB_TEST_DATA_DIR) + "/results/" + name);
}

std::string html_of(const RunResult& run) {
    std::ostringstream out;
    make_reporter("html")->write(run, out);
    return out.str();
}

std::size_t count(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
    return n;
}

// The text of the element that starts at `open` (e.g. "<svg class=\"caseplot\" id=\"plot-0\"") up
// to its closing tag `close`.
std::string element(const std::string& html, const std::string& open, const std::string& close) {
    const auto at = html.find(open);
    if (at == std::string::npos) return "";
    return html.substr(at, html.find(close, at) - at);
}

TEST(HtmlReport, EveryOperatorAndFailingCaseIsThere) {
    const RunResult run = load("run_a.json");
    const std::string html = html_of(run);
    for (const auto& op : run.operators) {
        EXPECT_EQ(count(html, "<tr data-op=\"" + op.op + "\">"), 1u) << op.op;
        const std::string svg = element(html, "data-op=\"" + op.op + "\" width=", "</svg>");
        ASSERT_FALSE(svg.empty()) << op.op;
        EXPECT_EQ(count(svg, "<g class=\"case "), op.cases.size()) << op.op;
        for (const auto& c : op.cases) {
            EXPECT_EQ(count(svg, "data-case=\"" + std::to_string(c.case_id) + "\""), 1u) << op.op << " " << c.case_id;
            const bool attention = html.find("<tr class=\"attention\" data-op=\"" + op.op + "\" data-case=\"" +
                                             std::to_string(c.case_id) + "\">") != std::string::npos;
            EXPECT_EQ(attention, !c.passed() || !c.audit.empty()) << op.op << " " << c.case_id;
        }
    }
    EXPECT_NE(html.find("Failing and flagged cases (7)"), std::string::npos);
    EXPECT_NE(html.find(">116.82<"), std::string::npos);  // the total score
    EXPECT_NE(html.find("cpu-intel-r-xeon-r-processor-2"), std::string::npos);
    EXPECT_NE(html.find("calibrated peaks"), std::string::npos);
    EXPECT_NE(html.find("2026-11-30T09:15:02Z"), std::string::npos);
}

TEST(HtmlReport, TimedCasesArePlacedAndUntimedOnesSitInTheBand) {
    const RunResult run = load("run_a.json");
    const std::string html = html_of(run);
    const std::string gelu = element(html, "data-op=\"gelu\" width=", "</svg>");
    // gelu: four timed cases (dots joined to their baseline squares), one precision failure untimed.
    EXPECT_EQ(count(gelu, "<circle class=\"mark\""), 4u);
    EXPECT_EQ(count(gelu, "<rect class=\"base\""), 4u);
    EXPECT_EQ(count(gelu, "<path class=\"mark\""), 1u);
    EXPECT_NE(gelu.find("class=\"case audit\" data-case=\"4\""), std::string::npos);
    EXPECT_NE(gelu.find("class=\"case wrong\" data-case=\"7\""), std::string::npos);
    const std::string gcd = element(html, "data-op=\"gcd\" width=", "</svg>");
    EXPECT_NE(gcd.find("class=\"case broken\" data-case=\"2\""), std::string::npos);
    EXPECT_NE(gcd.find("class=\"case pass flagged\" data-case=\"3\""), std::string::npos);
    // Every coordinate lies inside the drawing.
    const std::regex coordinate("c([xy])=\"(-?[0-9.]+)\"");
    for (std::sregex_iterator it(gelu.begin(), gelu.end(), coordinate), end; it != end; ++it) {
        const double v = std::stod((*it)[2]);
        EXPECT_GE(v, 0);
        EXPECT_LE(v, (*it)[1] == "x" ? 390 : 240);
    }
}

TEST(HtmlReport, SelfContainedAndEscaped) {
    RunResult run = load("run_a.json");
    run.submission = "<script>alert(1)</script>";
    run.operators[0].cases[3].message = "got <b>\"x\"</b> & more";
    const std::string html = html_of(run);
    EXPECT_EQ(html.find("<script>alert"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
    EXPECT_NE(html.find("got &lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp; more"), std::string::npos);
    EXPECT_EQ(count(html, "<script"), 1u);  // the one inline sorting script
    for (const char* outside : {"src=", "<link", "@import", "http://", "https://", "@font-face"})
        EXPECT_EQ(html.find(outside), std::string::npos) << outside;
    EXPECT_EQ(count(html, "url("), count(html, "url(#clip-"));
}

TEST(HtmlReport, NoPerfRunSaysSo) {
    RunResult run = load("run_a.json");
    run.no_perf = true;
    run.hardware.reset();
    for (auto& op : run.operators)
        for (auto& c : op.cases) {
            c.candidate = TimingResult{};
            c.t_cand_us = c.t_hw_us = 0;
            c.bottleneck.clear();
        }
    const std::string html = html_of(run);
    EXPECT_NE(html.find("Correctness only (--no-perf)"), std::string::npos);
    EXPECT_NE(html.find("No case has a T_HW bottleneck in this run"), std::string::npos);
    EXPECT_EQ(count(html, "<path class=\"mark\""), 12u);  // every case in the band
}

TEST(HtmlReport, BottleneckSharesAddUp) {
    RunResult run = load("run_a.json");
    run.operators[0].cases[0].bottleneck = "Vector";
    const std::string html = html_of(run);
    const std::string table = element(html, "<table id=\"bottleneck-table\">", "</table>");
    EXPECT_NE(table.find("<b>all cases</b></td><td class=\"num\">9</td>"), std::string::npos) << table;
    EXPECT_NE(table.find("Memory 89%, Vector 11%"), std::string::npos) << table;
    EXPECT_NE(table.find("Memory 80%, Vector 20%"), std::string::npos) << table;  // gelu
}

TEST(HtmlReport, DiffPageHasEveryComparedAndLoneCase) {
    const RunDiff d = diff_runs(load("run_a.json"), load("run_b.json"), "a.json", "b.json");
    std::ostringstream out;
    write_diff_html(d, out);
    const std::string html = out.str();
    EXPECT_EQ(count(html, "<tr class=\"case-diff"), d.cases.size());
    EXPECT_EQ(count(html, "<tr class=\"case-diff status-changed\""), 6u);
    EXPECT_NE(element(html, "<table class=\"sortable\" id=\"only-a\">", "</table>").find("data-case=\"13\""),
              std::string::npos);
    EXPECT_NE(element(html, "<table class=\"sortable\" id=\"only-b\">", "</table>").find("data-case=\"14\""),
              std::string::npos);
    for (const char* outside : {"src=", "<link", "http://", "https://"}) EXPECT_EQ(html.find(outside), std::string::npos);
}

}  // namespace
}  // namespace hb
