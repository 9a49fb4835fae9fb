// The diff of two runs (report/run_diff): the rows a user reads on the hand-made files
// tests/data/results/run_a.json and run_b.json (their README lists what changed between
// them), the order of the rows, and which differences between runs are refused or warned of.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "report/diff_report.hpp"
#include "report/results_reader.hpp"
#include "report/run_diff.hpp"

namespace hb {
namespace {

RunResult load(const std::string& name) {
    return read_results_file(std::string(HB_TEST_DATA_DIR) + "/results/" + name);
}

const CaseChange& change_of(const RunDiff& d, const std::string& op, std::int64_t id) {
    const auto it = std::find_if(d.cases.begin(), d.cases.end(),
                                 [&](const CaseChange& c) { return c.op == op && c.case_id == id; });
    if (it == d.cases.end()) throw std::runtime_error(op + " case " + std::to_string(id) + " not compared");
    return *it;
}

TEST(RunDiff, HandMadeRunsGiveTheExpectedRows) {
    const RunDiff d = diff_runs(load("run_a.json"), load("run_b.json"), "a", "b");
    EXPECT_TRUE(d.warnings.empty());
    EXPECT_TRUE(d.timed_both);
    EXPECT_NEAR(d.total_a, 116.82, 0.005);
    EXPECT_NEAR(d.total_b, 198.63, 0.005);

    // Operators by the size of the op score change: mish (fixed its build), gcd, gelu.
    ASSERT_EQ(d.operators.size(), 3u);
    EXPECT_EQ(d.operators[0].op, "mish");
    EXPECT_EQ(d.operators[1].op, "gcd");
    EXPECT_EQ(d.operators[2].op, "gelu");
    EXPECT_NEAR(d.operators[0].op_score_change(), 66.07, 0.005);
    EXPECT_EQ(d.operators[0].status_changes, 3);
    EXPECT_FALSE(d.operators[0].t_cand_ratio.has_value());  // A never timed mish
    EXPECT_EQ(d.operators[2].cases_compared, 4);              // gelu 13 and 14 are in one run only

    // Cases: the four that started or stopped passing lead, then mish's builds, then by s_i.
    ASSERT_EQ(d.cases.size(), 11u);
    for (std::size_t k = 0; k < 6; ++k) EXPECT_TRUE(d.cases[k].correctness_changed()) << k;
    for (std::size_t k = 6; k < d.cases.size(); ++k) EXPECT_FALSE(d.cases[k].status_changed()) << k;
    EXPECT_EQ(d.cases[6].op + " " + std::to_string(d.cases[6].case_id), "gelu 1");  // largest s_i change
    EXPECT_EQ(d.cases[7].op + " " + std::to_string(d.cases[7].case_id), "gcd 4");

    const CaseChange& broke = change_of(d, "gelu", 3);
    EXPECT_EQ(broke.a.status, CaseStatus::pass);
    EXPECT_EQ(broke.b.status, CaseStatus::precision_fail);
    EXPECT_FALSE(broke.score_change().has_value());
    EXPECT_NE(broke.b.message.find("fallback: normal region 1877 errors"), std::string::npos);
    const CaseChange& fixed = change_of(d, "gcd", 2);
    EXPECT_EQ(fixed.a.status, CaseStatus::crash);
    EXPECT_EQ(fixed.b.status, CaseStatus::pass);
    const CaseChange& faster = change_of(d, "gelu", 1);  // T_cand 0.6 T_base -> 0.3 T_base
    ASSERT_TRUE(faster.t_cand_ratio().has_value());
    EXPECT_NEAR(*faster.t_cand_ratio(), 0.5, 0.002);
    EXPECT_GT(*faster.score_change(), 0.1);
    const CaseChange& slower = change_of(d, "gcd", 4);  // T_cand x1.5
    EXPECT_NEAR(*slower.t_cand_ratio(), 1.5, 0.002);
    EXPECT_LT(*slower.score_change(), 0);
    const CaseChange& same = change_of(d, "gelu", 4);  // IMPOSSIBLE_TIME in both
    EXPECT_FALSE(same.status_changed());
    EXPECT_FALSE(same.score_change().has_value() && *same.score_change() != 0);

    ASSERT_EQ(d.only_a.size(), 1u);
    EXPECT_EQ(d.only_a[0].op, "gelu");
    EXPECT_EQ(d.only_a[0].case_id, 13);
    ASSERT_EQ(d.only_b.size(), 1u);
    EXPECT_EQ(d.only_b[0].case_id, 14);
    EXPECT_TRUE(d.redefined.empty());
}

TEST(RunDiff, TextListsChangedCasesAndLoneOnes) {
    const RunDiff d = diff_runs(load("run_a.json"), load("run_b.json"), "a.json", "b.json");
    std::ostringstream out;
    write_diff_text(d, out);
    const std::string text = out.str();
    EXPECT_NE(text.find("total score: 116.82 -> 198.63 (+81.81)"), std::string::npos) << text;
    EXPECT_NE(text.find("PASS -> PRECISION_FAIL"), std::string::npos) << text;
    EXPECT_NE(text.find("CRASH -> PASS"), std::string::npos) << text;
    EXPECT_NE(text.find("cases only in A (1)"), std::string::npos) << text;
    EXPECT_NE(text.find("cases only in B (1)"), std::string::npos) << text;
    EXPECT_NE(text.find("(8 of 11 compared cases changed)"), std::string::npos) << text;
    // The order of the text follows the diff's.
    EXPECT_LT(text.find("  mish    "), text.find("  gcd     "));
}

TEST(RunDiff, ARunAgainstItselfChangesNothing) {
    const RunResult a = load("run_a.json");
    const RunDiff d = diff_runs(a, a, "a", "a");
    EXPECT_EQ(d.cases.size(), 12u);
    for (const auto& c : d.cases) {
        EXPECT_FALSE(c.status_changed());
        if (c.t_cand_ratio()) EXPECT_EQ(*c.t_cand_ratio(), 1.0);
        if (c.score_change()) EXPECT_EQ(*c.score_change(), 0.0);
    }
    for (const auto& o : d.operators) EXPECT_EQ(o.op_score_change(), 0.0);
    EXPECT_TRUE(d.only_a.empty() && d.only_b.empty());
}

std::string refusal(const std::function<void(RunResult&)>& edit) {
    RunResult a = load("run_a.json"), b = load("run_b.json");
    edit(b);
    try {
        diff_runs(a, b, "a.json", "b.json");
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::bad_input);
        return e.what();
    }
    return "";
}

TEST(RunDiff, IncomparableRunsAreRefused) {
    EXPECT_NE(refusal([](RunResult& r) { r.t_hw_convention = "cann-bench"; })
                  .find("cannot compare a.json with b.json: the T_HW convention differs (hapbench in a.json, cann-bench in b.json)"),
              std::string::npos);
    EXPECT_NE(refusal([](RunResult& r) { r.hardware->name = "cpu-example"; }).find("the hardware model differs"),
              std::string::npos);
    EXPECT_NE(refusal([](RunResult& r) { r.hardware->kind = HardwareKind::nvidia; }).find("the hardware model differs"),
              std::string::npos);
    EXPECT_NE(refusal([](RunResult& r) { r.split = "hidden"; r.split_id = "0123456789abcdef0123"; })
                  .find("the split differs (public in a.json, hidden 0123456789abcdef in b.json)"),
              std::string::npos);
    EXPECT_NE(refusal([](RunResult& r) { r.profile = "accel"; }).find("the case profile differs"), std::string::npos);
    EXPECT_NE(refusal([](RunResult& r) { r.target = "cuda"; }).find("the target differs"), std::string::npos);
    EXPECT_EQ(refusal([](RunResult&) {}), "");
}

bool warned(const RunDiff& d, const std::string& part) {
    return std::any_of(d.warnings.begin(), d.warnings.end(), [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

TEST(RunDiff, ComparableDifferencesAreWarnedOf) {
    const RunResult a = load("run_a.json");
    RunResult b = load("run_b.json");
    b.eval_seed = 5;
    b.threads = 1;
    b.hapbench_version = "0.2.0";
    b.suite_hash = "other";
    b.operators[1].cases[0].signature = "x1:int16[7]";  // gcd 1 is now another case
    for (auto& op : b.operators)
        for (auto& c : op.cases) c.t_hw_us *= 1.25;  // recalibrated peaks
    const RunDiff d = diff_runs(a, b, "a", "b");
    EXPECT_TRUE(warned(d, "the eval seeds differ (0 and 5)"));
    EXPECT_TRUE(warned(d, "thread counts differ (2 and 1)"));
    EXPECT_TRUE(warned(d, "hapbench versions differ"));
    EXPECT_TRUE(warned(d, "the suites' hashes differ"));
    EXPECT_TRUE(warned(d, "T_HW differs in 7 compared cases (by up to 25.0%"));  // mish had no T_HW in A
    ASSERT_EQ(d.redefined.size(), 1u);
    EXPECT_EQ(d.redefined[0].op, "gcd");
    EXPECT_EQ(d.redefined[0].case_id, 1);
    EXPECT_THROW(change_of(d, "gcd", 1), std::runtime_error);  // not compared
    EXPECT_EQ(d.cases.size(), 10u);
}

TEST(RunDiff, AnUntimedSideComparesStatusesOnly) {
    const RunResult a = load("run_a.json");
    RunResult b = load("run_b.json");
    b.no_perf = true;
    const RunDiff d = diff_runs(a, b, "a.json", "b.json");
    EXPECT_TRUE(warned(d, "b.json was not timed (--no-perf)"));
    EXPECT_FALSE(d.timed_both);
    for (const auto& c : d.cases) EXPECT_FALSE(c.score_change().has_value()) << c.op << " " << c.case_id;
}

TEST(RunDiff, OperatorsInOneRunOnlyAreListedWithTheirCases) {
    const RunResult a = load("run_a.json");
    RunResult b = load("run_b.json");
    b.operators.erase(b.operators.begin() + 2);  // mish
    const RunDiff d = diff_runs(a, b, "a", "b");
    EXPECT_EQ(d.operators_only_a, std::vector<std::string>{"mish"});
    EXPECT_EQ(std::count_if(d.only_a.begin(), d.only_a.end(), [](const LoneCase& c) { return c.op == "mish"; }), 3);
    const RunDiff reverse = diff_runs(b, a, "b", "a");
    EXPECT_EQ(reverse.operators_only_b, std::vector<std::string>{"mish"});
}

}  // namespace
}  // namespace hb
