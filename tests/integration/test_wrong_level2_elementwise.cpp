// Deliberately wrong kernels of maximum, apply_adam_w, gcd and dynamic_quant
// (tests/data/wrong_level2) fail the precision gate on the cases their bug touches, and
// pass the others: the gate sees the bug, not noise.
#include <gtest/gtest.h>

#include <map>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

// Statuses of every public case of `op` evaluated from the wrong kernel directory.
std::map<int, std::string> wrong_statuses(const std::string& op) {
    const CommandResult r = run_hapbench(std::string("eval --submission ") + HB_TEST_DATA_DIR +
                                         "/wrong_level2 --op " + op + " --no-perf --timeout 20 --format json");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    std::map<int, std::string> out;
    const nlohmann::json run = r.json();  // named: a temporary would die before the loop
    for (const auto& c : run.at("cases"))
        if (c.at("operator").get<std::string>() == op) out[c.at("case_id").get<int>()] = c.at("status").get<std::string>();
    return out;
}

int count_status(const std::map<int, std::string>& statuses, const std::string& status) {
    int n = 0;
    for (const auto& [id, s] : statuses) n += s == status;
    return n;
}

// x2's NaNs are lost: the floating special-value (NaN) cases fail, the rest pass.
TEST(WrongLevel2Elementwise, MaximumDroppingNanFailsPrecision) {
    const auto statuses = wrong_statuses("maximum");
    ASSERT_EQ(statuses.size(), 20u);
    EXPECT_GE(count_status(statuses, "PRECISION_FAIL"), 1);
    EXPECT_GE(count_status(statuses, "PASS"), 10);
}

// Leaving out the bias corrections: the early-step cases with a large learning rate fail.
TEST(WrongLevel2Elementwise, ApplyAdamWWithoutBiasCorrectionFailsPrecision) {
    const auto statuses = wrong_statuses("apply_adam_w");
    ASSERT_EQ(statuses.size(), 20u);
    EXPECT_GE(count_status(statuses, "PRECISION_FAIL"), 1);
}

// Signed Euclid: negative results where the inputs have negative values; exact comparison.
TEST(WrongLevel2Elementwise, GcdWithNegativeResultsFailsPrecision) {
    const auto statuses = wrong_statuses("gcd");
    ASSERT_EQ(statuses.size(), 20u);
    EXPECT_GE(count_status(statuses, "PRECISION_FAIL"), 1);
}

// The row maximum of x instead of |x|: rows whose largest magnitude is negative get a wrong
// scale and saturated y.
TEST(WrongLevel2Elementwise, DynamicQuantWithoutAbsFailsPrecision) {
    const auto statuses = wrong_statuses("dynamic_quant");
    ASSERT_EQ(statuses.size(), 20u);
    EXPECT_GE(count_status(statuses, "PRECISION_FAIL"), 1);
}

}  // namespace
}  // namespace hb::test
