// The deliberately wrong resize_bilinear kernel (tests/data/wrong_level2/resize_bilinear.cpp:
// align_corners ignored, every case mapped as align_corners=false) is caught by the
// precision gate on the public cases with align_corners=true, while the cases with
// align_corners=false, which the bug does not touch, pass.
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

// Status of each requested case of `op` with the wrong kernel, by case id.
std::map<int, std::string> statuses(const std::string& op, const std::vector<int>& cases) {
    std::string args = std::string("eval --submission ") + HB_TEST_DATA_DIR + "/wrong_level2 --op " + op +
                       " --no-perf --format json";
    for (int c : cases) args += " --case " + std::to_string(c);
    const CommandResult r = run_hapbench(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    std::map<int, std::string> out;
    if (r.exit_code != 1) return out;
    const nlohmann::json run = r.json();  // kept alive: a range-for over r.json().at() would dangle
    for (const auto& c : run.at("cases")) out[c.at("case_id").get<int>()] = c.at("status").get<std::string>();
    return out;
}

// Case 10 (align_corners=true, output_size [55, 123] from 91 x 49, float32) samples shifted
// positions; case 9 (align_corners=false, output_size) is computed right.
TEST(WrongLevel2Resize, ResizeIgnoringAlignCornersFailsPrecision) {
    auto s = statuses("resize_bilinear", {9, 10});
    EXPECT_EQ(s[10], "PRECISION_FAIL");
    EXPECT_EQ(s[9], "PASS");
}

}  // namespace
}  // namespace hb::test
