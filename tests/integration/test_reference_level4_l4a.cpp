// The reference kernels of the level-4 attention operators (group l4a: gqa, mha, mla,
// mla_prolog, sparse_flash_attention) pass every public case and a hidden split drawn from
// another seed (correctness only: CI's time), and the tuned mha and gqa kernels pass the
// hidden split too.
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

const char* const l4a_ops = " --op gqa --op mha --op mla --op mla_prolog --op sparse_flash_attention";

void expect_every_case_passes(const std::string& submission, const std::string& ops, const std::string& extra,
                              std::size_t expected_cases, std::size_t expected_operators) {
    const std::string args = "eval --no-perf --format json --submission " + std::string(HB_SOURCE_DIR) + "/examples/cpu/" +
                             submission + ops + extra;
    const CommandResult r = run_hapbench(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json run = r.json();
    std::size_t cases = 0;
    for (const auto& c : run.at("cases")) {
        ++cases;
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("operator") << " case " << c.at("case_id") << ": "
                                                << c.at("status") << " " << c.at("message");
        EXPECT_EQ(c.at("level").get<int>(), 4);
    }
    EXPECT_EQ(cases, expected_cases);
    EXPECT_EQ(run.at("operators").size(), expected_operators);
}

TEST(ReferenceLevel4L4a, EveryPublicCasePasses) { expect_every_case_passes("reference", l4a_ops, "", 5 * 20, 5); }

TEST(ReferenceLevel4L4a, AHiddenSplitPasses) {
    expect_every_case_passes("reference", l4a_ops, " --split hidden --hidden-seed 4242 --hidden-count 8", 5 * 8, 5);
}

TEST(ReferenceLevel4L4a, TunedAttentionPassesAHiddenSplit) {
    expect_every_case_passes("tuned", " --op mha --op gqa", " --split hidden --hidden-seed 777 --hidden-count 12", 2 * 12, 2);
}

}  // namespace
}  // namespace hb::test
