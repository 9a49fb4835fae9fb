// `hapbench hap` as a user runs it on the shipped suite: one JSON object per case with the
// fields issue 3 names, and a table that ends with a per-level summary of the bottlenecks.
#include <gtest/gtest.h>

#include <filesystem>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

TEST(HapCommand, JsonHasEveryCaseWithItsUnitsAndBottleneck) {
    const auto r = run_hapbench("hap --hardware ascend910b2 --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = r.json();
    ASSERT_EQ(rows.size(), 20 * suite_operator_count());  // 20 public cases per operator
    for (const auto& row : rows) {
        SCOPED_TRACE(row.dump());
        EXPECT_EQ(row["status"], "ok");
        EXPECT_GE(row["t_hw_us"].get<double>(), 1.0);  // the accelerator floor
        EXPECT_TRUE(row["bottleneck"] == "MTE" || row["bottleneck"] == "Vector" || row["bottleneck"] == "Cube");
        EXPECT_TRUE(row["unit_us"].contains(row["bottleneck_unit"].get<std::string>()));
        EXPECT_TRUE(row.contains("operator") && row.contains("case_id") && row.contains("floored"));
    }
}

TEST(HapCommand, TableEndsWithALevelSummary) {
    const auto r = run_hapbench("hap --hardware h200");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto summary = r.out.find("summary (bottleneck groups of the computed cases):");
    ASSERT_NE(summary, std::string::npos) << r.out;
    const std::string tail = r.out.substr(summary);
    EXPECT_NE(tail.find("level 1: 160 computed; "), std::string::npos) << tail;
    EXPECT_NE(tail.find("level 2: 320 computed; "), std::string::npos) << tail;
    EXPECT_EQ(tail.find("errors"), std::string::npos) << tail;
    EXPECT_NE(tail.find("floored at 1 us"), std::string::npos) << tail;
}

}  // namespace
}  // namespace hb::test
