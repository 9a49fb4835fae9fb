// The reference submission passes every public case of grouped_matmul, quant_matmul and
// weight_quant_batch_matmul and a hidden split of each (correctness only), and the tuned
// kernels of grouped_matmul and quant_matmul pass the same hidden split.
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

const std::string ops = " --op grouped_matmul --op quant_matmul --op weight_quant_batch_matmul";

void expect_all_pass(const CommandResult& r, int expected_cases) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = r.json();
    int cases = 0;
    for (const auto& c : run.at("cases")) {
        ++cases;
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("operator") << " case " << c.at("case_id") << ": " << c.at("status")
                                                 << " " << c.at("message");
    }
    EXPECT_EQ(cases, expected_cases);
}

TEST(ReferenceLevel3L3a, EveryPublicCasePasses) {
    expect_all_pass(run_hapbench(std::string("eval --no-perf --format json --submission ") + HB_SOURCE_DIR +
                                 "/examples/cpu/reference" + ops),
                    60);
}

TEST(ReferenceLevel3L3a, AHiddenSplitPasses) {
    const std::string hidden = " --split hidden --hidden-seed 31337 --hidden-count 5 --no-perf --format json";
    expect_all_pass(run_hapbench("eval --submission " + std::string(HB_SOURCE_DIR) + "/examples/cpu/reference" + ops + hidden), 15);
    expect_all_pass(run_hapbench("eval --submission " + std::string(HB_SOURCE_DIR) + "/examples/cpu/tuned" + ops + hidden), 15);
}

}  // namespace
}  // namespace hb::test
