// The tuned example kernels (examples/cpu/tuned: vectorized, threaded, several schedules per
// operator) pass every public case, correctness only, like the reference submission. The
// operators whose tuned file is a link to the reference kernel are left to that test.
#include <gtest/gtest.h>

#include <filesystem>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

TEST(TunedSubmission, EveryTunedKernelPassesEveryPublicCase) {
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
    const auto r = run_hapbench("eval --no-perf --submission " + dir.string() + ops + " --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = r.json();
    int cases = 0;
    for (const auto& c : run.at("cases")) {
        ++cases;
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("operator") << " case " << c.at("case_id") << ": "
                                                << c.at("status") << " " << c.at("message");
    }
    EXPECT_EQ(cases, 20 * tuned);
}

}  // namespace
}  // namespace hb::test
