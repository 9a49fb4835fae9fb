// The table and Markdown reports: a timed run shows its scores; a --no-perf run shows that
// nothing was timed instead of printing zeros that read as measured.
#include <gtest/gtest.h>

#include <sstream>

#include "report/reporter.hpp"

namespace hb {
namespace {

RunResult one_case_run(bool no_perf) {
    RunResult run;
    run.hapbench_version = "test";
    run.target = "cpu";
    run.split = "public";
    run.profile = "cpu";
    run.threads = 1;
    run.no_perf = no_perf;
    run.compiler_command = "g++";
    OperatorResult op;
    op.op = "gcd";
    op.level = 2;
    op.state = "evaluated";
    CaseResult c;
    c.op = "gcd";
    c.case_id = 1;
    c.status = CaseStatus::pass;
    c.score_i = no_perf ? 0 : 0.25;
    op.cases.push_back(c);
    op.score = operator_score({{c.status, c.score_i}}, false);
    run.operators.push_back(op);
    return run;
}

std::string render(const std::string& format, const RunResult& run) {
    std::ostringstream out;
    make_reporter(format)->write(run, out);
    return out.str();
}

std::string line_of(const std::string& text, const std::string& start) {
    const auto at = text.find(start);
    if (at == std::string::npos) return "";
    return text.substr(at, text.find('\n', at) - at);
}

TEST(TextReport, TimedRunShowsMeanScore) {
    const std::string table = render("table", one_case_run(false));
    EXPECT_NE(line_of(table, "gcd").find("0.250"), std::string::npos) << table;
    EXPECT_EQ(table.find("--no-perf"), std::string::npos) << table;
}

TEST(TextReport, NoPerfRunSaysNothingWasTimed) {
    const RunResult run = one_case_run(true);
    const std::string table = render("table", run);
    const std::string row = line_of(table, "gcd");
    EXPECT_EQ(row.find("0.000"), std::string::npos) << row;
    EXPECT_NE(row.find("1/1"), std::string::npos) << row;
    EXPECT_NE(table.find("correctness only (--no-perf)"), std::string::npos) << table;

    const std::string md = render("markdown", run);
    EXPECT_NE(md.find("correctness only (--no-perf)"), std::string::npos) << md;
    EXPECT_NE(line_of(md, "| gcd |").find("| 1/1 | - |"), std::string::npos) << md;
    EXPECT_NE(md.find("|  | - |"), std::string::npos) << md;  // the case row: no bottleneck, no score_i
}

}  // namespace
}  // namespace hb
