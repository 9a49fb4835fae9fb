// `--convention` as a user runs it (docs/hap.md, "The two conventions"): hap under
// cann-bench solves every shipped case and labels its rows, eval records the convention in its
// JSON and uses it for T_HW, an unknown convention is refused with exit 2, and published values
// above hapbench's bound are flagged in the table and the JSON.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "run_hapbench.hpp"
#include "shared_reference.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;

const std::string reference_submission = std::string(HB_SOURCE_DIR) + "/examples/cpu/reference";

TEST(Convention, HapUnderCannBenchSolvesEveryShippedCaseAndLabelsIt) {
    const auto r = run_hapbench("hap --hardware ascend910b2 --convention cann-bench --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = r.json();
    ASSERT_EQ(rows.size(), 20 * suite_operator_count());  // 20 public cases per operator, every level
    for (const auto& row : rows) {
        SCOPED_TRACE(row.dump());
        EXPECT_EQ(row["status"], "ok");
        EXPECT_EQ(row["t_hw_convention"], "cann-bench");
        EXPECT_GE(row["t_hw_us"].get<double>(), 1.0);
        // Contractions (level 3 matmuls and convolutions, the recurrences) can be Cube-bound.
        EXPECT_TRUE(row["bottleneck"] == "MTE" || row["bottleneck"] == "Vector" || row["bottleneck"] == "Cube") << row["bottleneck"];
        EXPECT_TRUE(row["unit_us"].contains(row["bottleneck_unit"].get<std::string>()));
    }
    const auto table = run_hapbench("hap --hardware ascend910b2 --convention cann-bench --op softmax");
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("T_HW convention cann-bench"), std::string::npos) << table.out;
}

TEST(Convention, UnknownConventionIsRefusedWithExit2) {
    const auto hap = run_hapbench("hap --hardware ascend910b2 --convention cann");
    EXPECT_EQ(hap.exit_code, 2);
    EXPECT_NE(hap.err.find("unknown T_HW convention 'cann' (known: hapbench, cann-bench"), std::string::npos) << hap.err;
    EXPECT_EQ(hap.out, "");
    const auto eval = run_hapbench("eval --no-perf --submission " + reference_submission + " --op sigmoid --convention CANN-bench");
    EXPECT_EQ(eval.exit_code, 2);
    EXPECT_NE(eval.err.find("unknown T_HW convention 'CANN-bench'"), std::string::npos) << eval.err;
}

// The convention is in the results file and decides the T_HW of every timed case: eval's
// values equal hap's for the same model and convention.
TEST(Convention, EvalRecordsTheConventionAndScoresAgainstIt) {
    const auto plain = run_hapbench("eval --no-perf --submission " + reference_submission + " --op sigmoid --case 1 --format json");
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(plain.json()["t_hw_convention"], "hapbench");

    const auto timed = run_hapbench("eval --submission " + reference_submission +
                                    " --op sigmoid --case 1 --case 2 --hardware cpu-example --convention cann-bench"
                                    " --warmup 1 --min-calls 1 --max-calls 2 --format json");
    ASSERT_EQ(timed.exit_code, 0) << timed.err;
    const auto run = timed.json();
    EXPECT_EQ(run["t_hw_convention"], "cann-bench");
    const auto hap = run_hapbench("hap --hardware cpu-example --convention cann-bench --op sigmoid --format json").json();
    const auto own = run_hapbench("hap --hardware cpu-example --op sigmoid --format json").json();
    int compared = 0;
    for (const auto& c : run["cases"]) {
        for (std::size_t k = 0; k < hap.size(); ++k) {
            if (hap[k]["case_id"] != c["case_id"]) continue;
            EXPECT_DOUBLE_EQ(c["t_hw_us"].get<double>(), hap[k]["t_hw_us"].get<double>()) << c["case_id"];
            EXPECT_NE(c["t_hw_us"].get<double>(), own[k]["t_hw_us"].get<double>()) << c["case_id"];
            ++compared;
        }
    }
    EXPECT_EQ(compared, 2);
}

// A task directory with published values for the model: sigmoid's first three cases, the first
// published at twice hapbench's bound (beatable: flagged), the second 5% above (not flagged),
// the third not published.
TEST(Convention, PublishedValuesAboveHapbenchsBoundAreFlagged) {
    const fs::path dir = fs::temp_directory_path() / ("hb_test_published_" + std::to_string(getpid()));
    fs::create_directories(dir / "level1" / "sigmoid");
    for (const char* f : {"proto.yaml", "cases.cpu.yaml"})
        fs::copy_file(fs::path(HB_SOURCE_DIR) / "suite/level1/sigmoid" / f, dir / "level1/sigmoid" / f,
                      fs::copy_options::overwrite_existing);
    const std::string args = "hap --hardware ascend910b2 --tasks " + dir.string();
    const auto bound = run_hapbench(args + " --format json").json();
    ASSERT_GE(bound.size(), 3u);
    const double t1 = bound[0]["t_hw_us"].get<double>(), t2 = bound[1]["t_hw_us"].get<double>();
    std::ofstream(dir / "metadata-910b2-test.json")
        << nlohmann::json{{"_metadata", {{"hardware", "910b2"}}},
                          {"level1", {{"sigmoid", {{"1", {{"t_hw_us", 2 * t1}}}, {"2", {{"t_hw_us", 1.05 * t2}}}}}}}}
               .dump();
    // A file for another machine is not read.
    std::ofstream(dir / "metadata-h200-test.json")
        << nlohmann::json{{"_metadata", {{"hardware", "h200"}}}, {"level1", {{"sigmoid", {{"3", {{"t_hw_us", 1e6}}}}}}}}.dump();

    const auto rows = run_hapbench(args + " --format json").json();
    EXPECT_EQ(rows[0]["published_t_hw_us"].get<double>(), 2 * t1);
    EXPECT_EQ(rows[0]["published_above_bound"], true);
    EXPECT_EQ(rows[1]["published_above_bound"], false);
    EXPECT_FALSE(rows[2].contains("published_t_hw_us"));
    EXPECT_FALSE(rows[2].contains("published_above_bound"));

    const auto table = run_hapbench(args);
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("ABOVE +100%"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("published above hapbench's bound by more than 10% (beatable there): 1 cases (sigmoid 1)"),
              std::string::npos)
        << table.out;

    // Under cann-bench the published value is reported but "above the bound" is not claimed:
    // only hapbench's bound is one no kernel beats.
    const auto cann = run_hapbench(args + " --convention cann-bench --format json").json();
    EXPECT_TRUE(cann[0].contains("published_t_hw_us"));
    EXPECT_FALSE(cann[0].contains("published_above_bound"));

    // A metadata file for this machine that is malformed is named.
    std::ofstream(dir / "metadata-910b2-bad.json") << R"({"_metadata": {"hardware": "910b2"}, "level1": {"sigmoid": {"x": {"t_hw_us": 1}}}})";
    const auto bad = run_hapbench(args);
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("metadata-910b2-bad.json: level1.sigmoid.x: the case id is not an integer"), std::string::npos) << bad.err;
    fs::remove_all(dir);
}

// On the reference benchmark's own task data (when ../shared is there; always in CI): the operators whose
// published limit a kernel can beat, by hapbench's bound, are flagged (docs/hap.md).
TEST(Convention, ReferenceValuesAboveTheBoundAreFlagged) {
    const std::string reference = shared_reference_tasks_dir();
    HB_REQUIRE_SHARED_DIRECTORY(reference);
    const auto rows = run_hapbench("hap --hardware ascend910b2 --tasks " + reference + " --format json").json();
    std::map<std::string, int> flagged;
    for (const auto& row : rows)
        if (row.value("published_above_bound", false)) ++flagged[row["operator"].get<std::string>()];
    for (const char* op : {"gather", "group_norm", "dynamic_quant"}) EXPECT_GT(flagged[op], 0) << op;
    EXPECT_EQ(flagged["sigmoid"], 0);
}

}  // namespace
}  // namespace hb::test
