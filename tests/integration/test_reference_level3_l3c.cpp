// The reference kernels of the level-3 fused, routing and quantizing operators (group l3c:
// add_rms_norm_dynamic_quant, dequant_swiglu_quant, engram_gate_fusion, mhc_sinkhorn,
// moe_finalize_routing, moe_gating_top_k_softmax) pass a hidden split drawn from another seed
// (correctness only: CI's time; their public cases are covered by
// ReferenceSubmission.EveryPublicCasePassesCorrectness). None of these operators has an
// output of data-dependent length; their int8 outputs are judged within the proto's 1 and
// their index outputs (moe_gating_top_k_softmax's expert_idx, row_idx) exactly.
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

const char* const l3c_ops = " --op add_rms_norm_dynamic_quant --op dequant_swiglu_quant --op engram_gate_fusion"
                            " --op mhc_sinkhorn --op moe_finalize_routing --op moe_gating_top_k_softmax";

void expect_every_case_passes(const std::string& extra, std::size_t expected_cases) {
    const std::string args = std::string("eval --no-perf --format json --submission ") + HB_SOURCE_DIR +
                             "/examples/cpu/reference" + l3c_ops + extra;
    const CommandResult r = run_hapbench(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json run = r.json();
    std::size_t cases = 0;
    for (const auto& c : run.at("cases")) {
        ++cases;
        EXPECT_TRUE(c.at("passed").get<bool>()) << c.at("operator") << " case " << c.at("case_id") << ": "
                                                << c.at("status") << " " << c.at("message");
        EXPECT_EQ(c.at("level").get<int>(), 3);
    }
    EXPECT_EQ(cases, expected_cases);
    EXPECT_EQ(run.at("operators").size(), 6u);
}

TEST(ReferenceLevel3L3c, AHiddenSplitPasses) {
    expect_every_case_passes(" --split hidden --hidden-seed 4242 --hidden-count 5", 6 * 5);
}

}  // namespace
}  // namespace hb::test
