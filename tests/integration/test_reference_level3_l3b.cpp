// The bundled reference kernels of the l3b level-3 operators (conv_2d, depthwise_conv_2d,
// conv_3d_backprop_filter, dilation_2d, adaptive_avg_pool_3d, roi_align) pass a hidden split
// drawn from a seed no shipped file uses (correctness only; the public cases are covered by
// ReferenceSubmission.EveryPublicCasePassesCorrectness).
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

const char* const l3b_ops = " --op conv_2d --op depthwise_conv_2d --op conv_3d_backprop_filter --op dilation_2d"
                            " --op adaptive_avg_pool_3d --op roi_align";

TEST(ReferenceLevel3L3b, PassesAHiddenSplit) {
    const auto r = run_hapbench(std::string("eval --no-perf --submission ") + HB_SOURCE_DIR + "/examples/cpu/reference" +
                                l3b_ops + " --split hidden --hidden-seed 731 --hidden-count 5 --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = r.json();
    int cases = 0;
    for (const auto& c : run.at("cases")) {
        ++cases;
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("operator") << " hidden case " << c.at("case_id") << ": "
                                                << c.at("status") << " " << c.at("message");
    }
    EXPECT_EQ(cases, 6 * 5);
}

}  // namespace
}  // namespace hb::test
