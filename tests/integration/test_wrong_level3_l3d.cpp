// Deliberately wrong level-3 kernels of group l3d fail with the status their bug earns on the
// cases it touches and pass the others. Each is the reference kernel with the one-bug edits of
// tests/data/wrong_kernels/level3_l3d.yaml (see wrong_kernels.hpp). Beside them, unique's
// reference kernel is edited five more ways to exercise every verdict on outputs of
// data-dependent length: a length one too long (WRONG_LENGTH), beyond the capacity or never
// set (LENGTH_OVER_CAPACITY), an entry of the prefix left unwritten (OUTPUT_UNWRITTEN), a
// wrong value inside the prefix (PRECISION_FAIL), and a wrong length of counts alone.
#include "wrong_kernels.hpp"

namespace hb::test {
namespace {

// The laid-out expert order reversed across ranks: every public case with more than one rank
// (N = expert_token_num_per_rank.shape[0], read from the cases file) fails, the others pass.
TEST(WrongLevel3L3d, MoeReRoutingWithRanksReversedFailsPrecision) {
    const auto s = wrong_kernel_statuses("moe_re_routing");
    ASSERT_EQ(s.size(), 20u);
    const YAML::Node cases = YAML::LoadFile(std::string(HB_SOURCE_DIR) + "/suite/level3/moe_re_routing/cases.cpu.yaml")["cases"];
    int several_ranks = 0;
    for (const auto& c : cases) {
        const int id = c["case_id"].as<int>();
        const bool several = c["input_shape"][1][0].as<int>() > 1;
        several_ranks += several;
        EXPECT_EQ(s.at(id), several ? "PRECISION_FAIL" : "PASS") << "case " << id;
    }
    EXPECT_GE(several_ranks, 8);
}

// IoU == threshold suppressed: the all-zero cases 3 and 4 (IoU 0 at threshold 0) keep one box
// instead of all, a length the judge refuses; random boxes practically never sit on the tie.
TEST(WrongLevel3L3d, NmsBreakingTheIoUTieTheOtherWayHasTheWrongLength) {
    const auto s = wrong_kernel_statuses("nms");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_EQ(s.at(3), "WRONG_LENGTH");
    EXPECT_EQ(s.at(4), "WRONG_LENGTH");
    EXPECT_EQ(count_status(s, "PASS"), 18) << describe(s);
}

// A shrunk axis read at index 0: the shrink cases fail bit-exactly, the others pass.
TEST(WrongLevel3L3d, StridedSliceIgnoringTheShrunkIndexFailsPrecision) {
    const auto s = wrong_kernel_statuses("strided_slice");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 2) << describe(s);
    EXPECT_GE(count_status(s, "PASS"), 14) << describe(s);
}

// Tied values in the top k sharing an index: y and the gather check are right, the distinct
// rule catches it wherever a slice's top k holds a tie.
TEST(WrongLevel3L3d, TopKRepeatingAnIndexOnTiesFailsPrecision) {
    const auto s = wrong_kernel_statuses("top_k");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 10) << describe(s);
    EXPECT_GE(count_status(s, "PASS"), 1) << describe(s);  // k = 1: nothing to repeat
}

// y's last dim read as contiguous: permutations that move the last dim fail, the ones that
// keep it (outer swaps, the identity) pass.
TEST(WrongLevel3L3d, TransposeAssumingAContiguousLastDimFailsPrecision) {
    const auto s = wrong_kernel_statuses("transpose");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 10) << describe(s);
    EXPECT_GE(count_status(s, "PASS"), 4) << describe(s);
}

// The last occurrence as representative: float cases (a -0.0/+0.0 pair planted in each)
// and unsorted cases fail; sorted integer cases pass.
TEST(WrongLevel3L3d, UniqueKeepingTheLastOccurrenceFailsPrecision) {
    const auto s = wrong_kernel_statuses("unique");
    ASSERT_EQ(s.size(), 20u);
    EXPECT_GE(count_status(s, "PRECISION_FAIL"), 10) << describe(s);
    EXPECT_GE(count_status(s, "PASS"), 1) << describe(s);
}

// ---- every verdict on outputs of data-dependent length, from unique's reference ------------

// Statuses of unique's reference kernel with `edits` ({find, replace} pairs) on `cases`.
std::map<int, std::string> unique_variant_statuses(const std::vector<std::pair<std::string, std::string>>& edits,
                                                   const std::string& bug, const std::vector<int>& cases) {
    YAML::Node entry;
    entry["bug"] = bug;
    for (const auto& [find, replace] : edits) {
        YAML::Node e;
        e["find"] = find;
        e["replace"] = replace;
        entry["edits"].push_back(e);
    }
    const TemporaryDirectory dir;
    std::ofstream(dir.path + "/unique.cpp") << wrong_kernel_source("unique", entry, "test_wrong_level3_l3d.cpp");
    std::string args = "eval --submission " + dir.path + " --op unique --no-perf --format json";
    for (int c : cases) args += " --case " + std::to_string(c);
    const CommandResult r = run_hapbench(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    std::map<int, std::string> out;
    if (r.exit_code != 1) return out;
    const nlohmann::json run = r.json();
    for (const auto& c : run.at("cases")) {
        out[c.at("case_id").get<int>()] = c.at("status").get<std::string>();
        if (c.at("status") != "PASS") {
            EXPECT_FALSE(c.at("message").get<std::string>().empty()) << c.at("status");
        }
    }
    return out;
}

// Case 5 (int8 in [-50, 50], 101 values) and case 7 (float16 over its whole range).
const std::vector<int> two_cases = {5, 7};
const std::string y_length = "*y_arg->written_length = distinct;";

TEST(WrongLevel3L3d, UniqueReportingOneEntryTooManyHasTheWrongLength) {
    const auto s = unique_variant_statuses({{y_length, "*y_arg->written_length = distinct + 1;"}}, "y's length one too long", two_cases);
    EXPECT_EQ(count_status(s, "WRONG_LENGTH"), 2) << describe(s);
}

TEST(WrongLevel3L3d, UniqueReportingBeyondTheCapacityIsOverCapacity) {
    const auto s = unique_variant_statuses({{y_length, "*y_arg->written_length = y.shape[0] + 1;"}}, "y's length past the capacity",
                                           two_cases);
    EXPECT_EQ(count_status(s, "LENGTH_OVER_CAPACITY"), 2) << describe(s);
}

TEST(WrongLevel3L3d, UniqueNeverReportingALengthIsOverCapacity) {
    const auto s = unique_variant_statuses({{y_length, "(void)distinct;"}}, "y's length never set", two_cases);
    EXPECT_EQ(count_status(s, "LENGTH_OVER_CAPACITY"), 2) << describe(s);
}

TEST(WrongLevel3L3d, UniqueLeavingAnEntryOfThePrefixUnwrittenIsUnwritten) {
    const auto s = unique_variant_statuses(
        {{"for (int64_t r = 0; r < distinct; ++r) std::memcpy(dst + slot[r] * bytes, src + first[r] * bytes, bytes);",
          "for (int64_t r = 0; r < distinct; ++r) if (slot[r] != distinct - 1) std::memcpy(dst + slot[r] * bytes, src + first[r] * bytes, bytes);"}},
        "the last entry of y's prefix is never written", two_cases);
    EXPECT_EQ(count_status(s, "OUTPUT_UNWRITTEN"), 2) << describe(s);
}

TEST(WrongLevel3L3d, UniqueWithAWrongValueInsideThePrefixFailsPrecision) {
    const auto s = unique_variant_statuses(
        {{y_length, "*y_arg->written_length = distinct;\n    std::memcpy(dst, src + first[distinct - 1] * bytes, bytes);"}},
        "y's first entry overwritten with another value", two_cases);
    EXPECT_EQ(count_status(s, "PRECISION_FAIL"), 2) << describe(s);
}

// Counts (return_counts) is judged on its own: a case asking for counts with a wrong counts
// length fails even though y's is right; a case without counts passes.
TEST(WrongLevel3L3d, UniqueWithAWrongCountsLengthHasTheWrongLength) {
    const auto s = unique_variant_statuses({{"*counts_arg->written_length = distinct;", "*counts_arg->written_length = distinct - 1;"}},
                                           "counts' length one too short", {});
    EXPECT_GE(count_status(s, "WRONG_LENGTH"), 8) << describe(s);
    EXPECT_GE(count_status(s, "PASS"), 8) << describe(s);
}

}  // namespace
}  // namespace hb::test
