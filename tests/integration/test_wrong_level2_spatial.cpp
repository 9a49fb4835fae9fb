// Deliberately wrong kernels of the spatial level-2 group (tests/data/wrong_level2/<op>.cpp,
// each one plausible bug, described at the top of its file) are caught by the precision
// gate on the public cases that exercise the bug, while cases the bug does not touch pass.
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

// Accumulating bfloat16 in bfloat16: case 12 sums about 20000 rows of +-1e4 per segment,
// far past bf16's 8 bits; the float32 case 20 is computed right.
TEST(WrongLevel2Spatial, SegmentSumWithHalfAccumulatorsFailsPrecision) {
    auto s = statuses("unsorted_segment_sum", {12, 20});
    EXPECT_EQ(s[12], "PRECISION_FAIL");
    EXPECT_EQ(s[20], "PASS");
}


// Ignoring the layout: case 12 is layout 1 ([B, N, S, D] with N = 4, S = 419) and rotates
// by the wrong angles; case 11 is layout 0 and comes out right.
TEST(WrongLevel2Spatial, RopeIgnoringTheLayoutFailsPrecision) {
    auto s = statuses("apply_rotary_pos_emb", {11, 12});
    EXPECT_EQ(s[12], "PRECISION_FAIL");
    EXPECT_EQ(s[11], "PASS");
}


// align_corners ignored in the unnormalization: case 10 (align_corners=true, nearest,
// border) samples shifted voxels; case 9 (align_corners=false) is right.
TEST(WrongLevel2Spatial, GridSamplerIgnoringAlignCornersFailsPrecision) {
    auto s = statuses("grid_sampler_3d", {9, 10});
    EXPECT_EQ(s[10], "PRECISION_FAIL");
    EXPECT_EQ(s[9], "PASS");
}

}  // namespace
}  // namespace hb::test
