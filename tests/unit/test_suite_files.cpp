// The shipped suite: every proto and cases file reads, every case resolves, every cases file
// meets the case-design rules, and the hidden split is deterministic and meets them too.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/case_rules.hpp"
#include "suite/split.hpp"
#include "suite/task_dir.hpp"

namespace hb {
namespace {

const std::string suite_dir = std::string(HB_SOURCE_DIR) + "/suite";

TEST(SuiteFiles, EveryShippedCasesFileMeetsTheRules) {
    const TaskDir dir = load_task_dir(suite_dir, "cpu");
    ASSERT_GE(dir.tasks.size(), 8u);
    for (const auto& entry : dir.tasks) {
        SCOPED_TRACE(entry.op);
        const Operator* op = find_operator(entry.op);
        ASSERT_NE(op, nullptr) << entry.op << " is in suite/ but not implemented";
        EXPECT_EQ(entry.cases.size(), 20u);
        EXPECT_NE(entry.cases_file.find("cases.cpu.yaml"), std::string::npos);
        for (const auto& c : entry.cases) EXPECT_NO_THROW(resolve_problem(entry.proto, *op, c)) << c.where();
        const auto problems = check_case_rules(entry.cases, entry.proto, *op, profile_by_name("cpu"));
        EXPECT_TRUE(problems.empty()) << problems.front();
    }
}

TEST(SuiteFiles, HiddenSplitIsDeterministicAndMeetsTheRules) {
    const TaskDir dir = load_task_dir(suite_dir, "cpu");
    for (const auto& entry : dir.tasks) {
        SCOPED_TRACE(entry.op);
        const Operator* op = find_operator(entry.op);
        ASSERT_NE(op, nullptr);
        const auto a = generate_cases(*op, entry.proto, profile_by_name("cpu"), 987654321, 80);
        const auto b = generate_cases(*op, entry.proto, profile_by_name("cpu"), 987654321, 80);
        const auto other = generate_cases(*op, entry.proto, profile_by_name("cpu"), 987654322, 80);
        ASSERT_EQ(a.size(), 80u);
        bool differs = false;
        for (std::size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a[i].total_input_elements(), b[i].total_input_elements());
            EXPECT_EQ(attrs_to_string(a[i].attrs), attrs_to_string(b[i].attrs));
            differs = differs || a[i].total_input_elements() != other[i].total_input_elements();
            EXPECT_NO_THROW(resolve_problem(entry.proto, *op, a[i]));
        }
        EXPECT_TRUE(differs) << "another seed must draw other cases";
        const auto problems = check_case_rules(a, entry.proto, *op, profile_by_name("cpu"));
        EXPECT_TRUE(problems.empty()) << problems.front();
    }
}

TEST(SuiteFiles, SuiteHashChangesWithTheFiles) {
    const TaskDir all = load_task_dir(suite_dir, "cpu");
    const TaskDir one = load_task_dir(suite_dir, "cpu", {"exp"});
    EXPECT_EQ(all.suite_hash.size(), 64u);
    EXPECT_NE(all.suite_hash, one.suite_hash);
}

TEST(SuiteFiles, UnknownOperatorListsTheKnownOnes) {
    try {
        load_task_dir(suite_dir, "cpu", {"softmaxx"});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("sigmoid"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace hb
