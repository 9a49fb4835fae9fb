// The tuned example kernels (examples/cpu/tuned: vectorized, threaded, several schedules per
// operator) pass public cases 1 to 7 of their operators, correctness only: every dtype twice
// and each operator's main shapes (softmax: rows, shared-row and per-thread column blocks),
// within CI's time (all 20 take 100 s; `hapbench eval --no-perf` runs them all). The
// operators whose tuned file is a link to the reference kernel are left to that test.
#include <gtest/gtest.h>

#include <filesystem>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

TEST(TunedSubmission, EveryTunedKernelPassesItsFirstPublicCases) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(HB_SOURCE_DIR) / "examples/cpu/tuned";
    std::string ops;
    int tuned = 0;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".cpp" && !fs::is_symlink(entry.symlink_status())) {
            ops += " --op " + entry.path().stem().string();
            ++tuned;
        }
    ASSERT_GE(tuned, 9);  // exp, gelu, mish, sigmoid, swi_glu, apply_adam_w, maximum, rms_norm, softmax
    const std::string cases = " --case 1 --case 2 --case 3 --case 4 --case 5 --case 6 --case 7";
    const auto r = run_hapbench("eval --no-perf --submission " + dir.string() + ops + cases + " --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = r.json();
    int checked = 0;
    for (const auto& c : run.at("cases")) {
        ++checked;
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("operator") << " case " << c.at("case_id") << ": "
                                                << c.at("status") << " " << c.at("message");
    }
    EXPECT_EQ(checked, 7 * tuned);
}

}  // namespace
}  // namespace hb::test
