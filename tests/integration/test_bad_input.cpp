// Bad input of every kind is a clear error with exit code 2, naming what is wrong.
#include <gtest/gtest.h>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(BadInput, MalformedCasesFileNamesFileCaseAndField) {
    const auto r = run_hapbench(std::string("eval --no-perf --submission ") + HB_SOURCE_DIR + "/examples/cpu/reference --tasks " +
                                HB_TEST_DATA_DIR + "/bad_tasks");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "bad_tasks/level1/exp/cases.yaml:13")) << r.err;
    EXPECT_TRUE(contains(r.err, "case 2")) << r.err;
    EXPECT_TRUE(contains(r.err, "input_shape")) << r.err;
    EXPECT_TRUE(r.out.empty()) << "stdout carries only results";
}

TEST(BadInput, UnknownOperatorListsTheKnownOnes) {
    const auto r = run_hapbench(std::string("eval --no-perf --submission ") + HB_SOURCE_DIR + "/examples/cpu/reference --op sigmod");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "unknown operator 'sigmod'")) << r.err;
    EXPECT_TRUE(contains(r.err, "sigmoid")) << r.err;
}

TEST(BadInput, HiddenSplitNeedsASeed) {
    const auto r = run_hapbench(std::string("eval --no-perf --submission ") + HB_SOURCE_DIR + "/examples/cpu/reference --split hidden");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--hidden-seed")) << r.err;
}

TEST(BadInput, UnknownHardwareModelListsTheKnownOnes) {
    const auto r = run_hapbench("hap --hardware cpu-exampel");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "cpu-example")) << r.err;
}

TEST(BadInput, AcceleratorModelForTheCpuTargetIsRefused) {
    // An H200's T_HW (floored at 1 us) against a CPU kernel would score every case near 0.
    const auto r = run_hapbench(std::string("eval --submission ") + HB_SOURCE_DIR +
                                "/examples/cpu/reference --op exp --case 1 --hardware h200");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "'h200' describes a nvidia device")) << r.err;
    EXPECT_TRUE(contains(r.err, "kind cpu")) << r.err;
}

TEST(BadInput, ProfileWithoutCasesIsNotAnEmptyPass) {
    // The shipped suite has cpu-profile cases only.
    const auto r = run_hapbench(std::string("eval --no-perf --submission ") + HB_SOURCE_DIR +
                                "/examples/cpu/reference --op exp --profile accel");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "no public cases for profile 'accel'")) << r.err;
    const auto hap = run_hapbench("hap --hardware ascend910b2 --profile accel");
    EXPECT_EQ(hap.exit_code, 2);
    EXPECT_TRUE(contains(hap.err, "no cases for profile 'accel'")) << hap.err;
}

TEST(BadInput, MissingSubmissionDirectory) {
    const auto r = run_hapbench("eval --no-perf --submission /nonexistent/kernels");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "/nonexistent/kernels")) << r.err;
}

TEST(BadInput, UnknownFormat) {
    const auto r = run_hapbench(std::string("eval --no-perf --submission ") + HB_SOURCE_DIR + "/examples/cpu/reference --format xml");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "table, json, markdown")) << r.err;
}

TEST(HiddenSplit, EvaluatesGeneratedCasesOfTheSameOperator) {
    const auto r = run_hapbench(std::string("eval --no-perf --submission ") + HB_SOURCE_DIR +
                                "/examples/cpu/reference --op sigmoid --split hidden --hidden-seed 77 --hidden-count 6 --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = r.json();
    EXPECT_EQ(run.at("suite").at("split"), "hidden");
    // The seed itself never reaches a results file (the scored agent may read it): a keyed
    // hash identifies the split, the same for the same seed, different for another.
    EXPECT_EQ(r.out.find("hidden_seed"), std::string::npos);
    const std::string id = run.at("suite").at("split_id");
    EXPECT_EQ(id.size(), 32u);
    EXPECT_EQ(run.at("cases").size(), 6u);
    const auto again = run_hapbench(std::string("eval --no-perf --submission ") + HB_SOURCE_DIR +
                                    "/examples/cpu/reference --op sigmoid --split hidden --hidden-seed 78 --hidden-count 6 "
                                    "--case 1 --format json");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.json().at("suite").at("split_id"), id);
}

}  // namespace
}  // namespace hb::test
