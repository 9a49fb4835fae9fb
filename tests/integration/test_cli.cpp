// Every hapbench subcommand as a user runs it, and every documented exit code
// (docs/results.md: 0 success, 1 failures or violations, 2 bad input, 3 internal error).
// eval, hap, export and compare have their own files as well; this one covers list, info,
// gen-cases, check-cases, calibrate and baseline, eval's --out and --markdown, export of a
// hidden case, and the exit codes of bad input no other test gives.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;

const std::string reference = std::string(HB_SOURCE_DIR) + "/examples/cpu/reference";
const fs::path sigmoid_dir = fs::path(HB_SOURCE_DIR) / "suite/level1/sigmoid";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A directory of this test process, removed with everything in it at the end of the test.
class Cli : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() / ("hb_test_cli_" + std::to_string(getpid()) + "_" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;

    // A tasks directory with sigmoid's proto and cases, `cases` edited by replacing `find`.
    fs::path sigmoid_tasks(const std::string& name, const std::string& find = "", const std::string& replace = "") {
        const fs::path tasks = dir_ / name;
        fs::create_directories(tasks / "level1/sigmoid");
        fs::copy_file(sigmoid_dir / "proto.yaml", tasks / "level1/sigmoid/proto.yaml");
        std::string cases = read_text(sigmoid_dir / "cases.cpu.yaml");
        if (!find.empty()) {
            const auto at = cases.find(find);
            EXPECT_NE(at, std::string::npos) << find;
            if (at != std::string::npos) cases.replace(at, find.size(), replace);
        }
        std::ofstream(tasks / "level1/sigmoid/cases.cpu.yaml") << cases;
        return tasks;
    }
};

// ---- The command line itself.

TEST_F(Cli, VersionAndHelpExitZero) {
    const auto version = run_hapbench("--version");
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_TRUE(contains(version.out, "hapbench ")) << version.out;
    const auto help = run_hapbench("--help");
    EXPECT_EQ(help.exit_code, 0);
    for (const char* sub : {"list", "info", "eval", "baseline", "hap", "calibrate", "gen-cases", "check-cases", "export", "compare"})
        EXPECT_TRUE(contains(help.out, sub)) << sub;
    EXPECT_TRUE(contains(help.out, "Exit codes")) << help.out;
}

TEST_F(Cli, NoSubcommandOrAnUnknownOneIsBadInput) {
    EXPECT_EQ(run_hapbench("").exit_code, 2);
    const auto r = run_hapbench("evaluate");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "A subcommand is required")) << r.err;
}

TEST_F(Cli, UnknownFlagIsBadInput) {
    const auto r = run_hapbench("eval --submission " + reference + " --op sigmoid --no-perf --fast");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--fast")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

// ---- list and info

TEST_F(Cli, ListNamesEveryOperatorOfTheSuite) {
    const auto r = run_hapbench("list");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream lines(r.out);
    std::string line;
    std::getline(lines, line);
    EXPECT_TRUE(contains(line, "operator") && contains(line, "implemented")) << line;
    std::size_t rows = 0;
    while (std::getline(lines, line)) {
        ++rows;
        EXPECT_TRUE(line.size() > 5 && line.substr(line.size() - 3) == "yes") << line;
        EXPECT_TRUE(contains(line, " 20 ")) << line;
    }
    EXPECT_EQ(rows, suite_operator_count());
    EXPECT_TRUE(contains(r.out, "sigmoid")) << r.out;
}

TEST_F(Cli, ListMarksAnOperatorHapbenchDoesNotImplement) {
    const fs::path tasks = sigmoid_tasks("tasks");
    fs::create_directories(tasks / "level1/hard_sigmoid");
    fs::copy(tasks / "level1/sigmoid", tasks / "level1/hard_sigmoid", fs::copy_options::recursive);
    const auto r = run_hapbench("list --tasks " + tasks.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream lines(r.out);
    int seen = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("hard_sigmoid ", 0) == 0) {
            ++seen;
            EXPECT_EQ(line.substr(line.size() - 2), "no") << line;
        } else if (line.rfind("sigmoid ", 0) == 0) {
            ++seen;
            EXPECT_EQ(line.substr(line.size() - 3), "yes") << line;
        }
    }
    EXPECT_EQ(seen, 2) << r.out;
}

TEST_F(Cli, InfoShowsInterfaceBaselineAndCases) {
    const auto r = run_hapbench("info sigmoid");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* part : {"sigmoid (level 1, Elementwise)", "sigmoid(Tensor x) -> Tensor y", "inputs:\n  x: float16, bfloat16, float32",
                             "outputs:\n  y: float16, bfloat16, float32", "baseline: oneDNN", "cases (20, from ",
                             "cases.cpu.yaml", "[241, 128]"})
        EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.out;
    const auto unknown = run_hapbench("info sigmod");
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_TRUE(contains(unknown.err, "sigmoid")) << "lists the known operators: " << unknown.err;
}

// ---- gen-cases and check-cases

// The shipped cases are the generator's draw from the seed in their header: gen-cases
// reproduces the file byte for byte, on stdout and with --out.
TEST_F(Cli, GenCasesReproducesTheShippedCases) {
    const std::string shipped = read_text(sigmoid_dir / "cases.cpu.yaml");
    const auto r = run_hapbench("gen-cases --op sigmoid --seed 2026 --count 20");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, shipped);
    const fs::path out = dir_ / "cases.yaml";
    const auto to_file = run_hapbench("gen-cases --op sigmoid --out " + out.string());
    ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
    EXPECT_TRUE(to_file.out.empty());
    EXPECT_EQ(read_text(out), shipped);

    const auto other = run_hapbench("gen-cases --op sigmoid --seed 2027 --count 5");
    ASSERT_EQ(other.exit_code, 0) << other.err;
    EXPECT_NE(other.out.substr(other.out.find("cases:")), shipped.substr(shipped.find("cases:")));
    EXPECT_TRUE(contains(other.out, "case_id: 5")) << other.out;
    EXPECT_FALSE(contains(other.out, "case_id: 6")) << other.out;

    EXPECT_EQ(run_hapbench("gen-cases --op sigmod").exit_code, 2);
}

TEST_F(Cli, CheckCasesPassesTheShippedSuiteAndAHiddenSplit) {
    const auto r = run_hapbench("check-cases");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    std::istringstream lines(r.out);
    std::size_t rows = 0;
    for (std::string line; std::getline(lines, line);) {
        ++rows;
        EXPECT_TRUE(contains(line, " 20 cases  ok")) << line;
    }
    EXPECT_EQ(rows, suite_operator_count());

    const auto hidden = run_hapbench("check-cases --op sigmoid --op gcd --split hidden --hidden-seed 99");
    ASSERT_EQ(hidden.exit_code, 0) << hidden.out << hidden.err;
    EXPECT_TRUE(contains(hidden.out, "sigmoid                     80 cases  ok")) << hidden.out;
}

TEST_F(Cli, CheckCasesExitsOneOnViolations) {
    // Case 2 made the size of case 1: two cases with one element count.
    const fs::path tasks = sigmoid_tasks("tasks", "  - [18452, 256]\n", "  - [63, 38, 256]\n");
    const auto r = run_hapbench("check-cases --tasks " + tasks.string());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.out, "case 2 has the same total element count (612864) as case 1")) << r.out;
    EXPECT_TRUE(contains(r.out, "VIOLATIONS")) << r.out;
}

// ---- calibrate: a quick model loads as a hardware model and solves the suite.

TEST_F(Cli, CalibrateWritesAModelHapCanUse) {
    const fs::path model = dir_ / "this-cpu.yaml";
    const auto r = run_hapbench("calibrate --quick --threads 1 --out " + model.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "wrote " + model.string())) << r.err;
    const std::string text = read_text(model);
    EXPECT_TRUE(contains(text, "kind: cpu")) << text.substr(0, 400);
    EXPECT_TRUE(contains(text, "origin: calibrated")) << text.substr(0, 400);
    const auto hap = run_hapbench("hap --hardware " + model.string() + " --op sigmoid --format json");
    ASSERT_EQ(hap.exit_code, 0) << hap.err;
    const auto rows = hap.json();
    ASSERT_EQ(rows.size(), 20u);
    for (const auto& row : rows) {
        EXPECT_EQ(row.at("status"), "ok") << row;
        EXPECT_GT(row.at("t_hw_us").get<double>(), 0) << row;
    }
    EXPECT_EQ(run_hapbench("calibrate --quick").exit_code, 2) << "--out is required";
}

// ---- baseline: measured once, then read from the cache (a cache of this test's own).

TEST_F(Cli, BaselineMeasuresThenReadsTheCache) {
    const std::string env = "XDG_CACHE_HOME=" + (dir_ / "cache").string();
    const std::string args = "baseline --op sigmoid --case 13 --hardware cpu-example --warmup 1 --min-calls 2 --max-calls 2";
    const auto first = run_hapbench(args, env);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_TRUE(contains(first.out, "sigmoid")) << first.out;
    EXPECT_TRUE(contains(first.out, "case  13")) << first.out;
    EXPECT_FALSE(contains(first.out, "(cached)")) << first.out;
    const auto second = run_hapbench(args, env);
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_TRUE(contains(second.out, "(cached)")) << first.out << first.err << second.out << second.err;
    const auto refreshed = run_hapbench(args + " --refresh", env);
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.err;
    EXPECT_FALSE(contains(refreshed.out, "(cached)")) << refreshed.out;
}

// ---- eval's files

TEST_F(Cli, EvalWritesJsonAndMarkdownFiles) {
    const fs::path json = dir_ / "results.json", md = dir_ / "summary.md";
    const auto r = run_hapbench("eval --no-perf --submission " + reference + " --op sigmoid --op exp --case 13 --out " +
                                json.string() + " --markdown " + md.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "sigmoid")) << "the table still goes to stdout: " << r.out;
    const auto results = nlohmann::json::parse(read_text(json));
    ASSERT_EQ(results.at("cases").size(), 2u);
    for (const auto& c : results.at("cases")) {
        EXPECT_EQ(c.at("status"), "PASS") << c;
        EXPECT_EQ(c.at("case_id"), 13);
    }
    EXPECT_EQ(results.at("operators").size(), 2u);
    const std::string summary = read_text(md);
    EXPECT_TRUE(contains(summary, "| case | status |")) << summary;
    EXPECT_TRUE(contains(summary, "sigmoid")) << summary;
    EXPECT_TRUE(contains(summary, "PASS")) << summary;

    // A results file that cannot be written is refused before the evaluation starts (no
    // progress line), not after it (which would lose the run).
    for (const char* option : {" --out ", " --markdown "}) {
        const auto unwritable = run_hapbench("eval --no-perf --submission " + reference + " --op sigmoid --case 13" + option +
                                             (dir_ / "no/such/dir/results").string());
        EXPECT_EQ(unwritable.exit_code, 2) << option;
        EXPECT_TRUE(contains(unwritable.err, "cannot write " + (dir_ / "no/such/dir/results").string())) << unwritable.err;
        EXPECT_FALSE(contains(unwritable.err, "sigmoid case")) << "the evaluation ran first: " << unwritable.err;
        EXPECT_TRUE(unwritable.out.empty());
    }
}

// ---- export of a hidden case: the same case for the same seed, another than the public one,
// and no seed in the files.

TEST_F(Cli, ExportOfAHiddenCaseIsReproducibleAndKeepsTheSeedOut) {
    const std::string args = "export --op sigmoid --case 3 --split hidden --hidden-seed 2026 --dir ";
    const auto a = run_hapbench(args + (dir_ / "a").string());
    ASSERT_EQ(a.exit_code, 0) << a.err;
    const auto b = run_hapbench(args + (dir_ / "b").string());
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const auto pub = run_hapbench("export --op sigmoid --case 3 --dir " + (dir_ / "public").string());
    ASSERT_EQ(pub.exit_code, 0) << pub.err;

    const std::string meta_text = read_text(dir_ / "a/case.json");
    const auto meta = nlohmann::json::parse(meta_text);
    EXPECT_EQ(meta.at("split"), "hidden");
    EXPECT_EQ(meta.at("split_id").get<std::string>().size(), 32u);
    EXPECT_FALSE(meta.contains("hidden_seed"));
    EXPECT_FALSE(contains(meta_text, "2026")) << "the seed stays out of the files: " << meta_text;
    for (const char* f : {"in_x.npy", "golden_y.npy", "same_precision_y.npy", "case.json"})
        EXPECT_EQ(read_text(dir_ / "a" / f), read_text(dir_ / "b" / f)) << f;
    // Seed 2026 drew the public files; the hidden split from the same number is another draw.
    EXPECT_NE(read_text(dir_ / "a/in_x.npy"), read_text(dir_ / "public/in_x.npy"));
}

// ---- exit 2: bad input of every kind names what is wrong, and writes nothing on stdout.

TEST_F(Cli, BadSplitNameIsBadInput) {
    const auto r = run_hapbench("eval --no-perf --submission " + reference + " --op sigmoid --split secret");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "--split must be public or hidden, not 'secret'")) << r.err;
    EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, UnknownCaseIdIsBadInput) {
    const auto r = run_hapbench("eval --no-perf --submission " + reference + " --op sigmoid --case 999");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "no case matches the --case ids given")) << r.err;
    EXPECT_TRUE(contains(r.err, "sigmoid: 1,2,3")) << "lists the ids there are: " << r.err;
    EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, SeedTwiceIsBadInput) {
    std::ofstream(dir_ / "seed") << "12\n";
    const auto r = run_hapbench("check-cases --op sigmoid --split hidden --hidden-seed 12 --hidden-seed-file " +
                                (dir_ / "seed").string());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "not both")) << r.err;
    std::ofstream(dir_ / "bad-seed") << "twelve\n";
    const auto bad = run_hapbench("check-cases --op sigmoid --split hidden --hidden-seed-file " + (dir_ / "bad-seed").string());
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "must be an unsigned integer, not 'twelve'")) << bad.err;
}

TEST_F(Cli, MalformedProtoIsBadInputNamingTheFile) {
    const fs::path tasks = sigmoid_tasks("tasks");
    std::string proto = read_text(tasks / "level1/sigmoid/proto.yaml");
    proto.replace(proto.find("    - float16\n"), 14, "    - float17\n");
    std::ofstream(tasks / "level1/sigmoid/proto.yaml") << proto;
    const auto r = run_hapbench("eval --no-perf --submission " + reference + " --tasks " + tasks.string());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, (tasks / "level1/sigmoid/proto.yaml").string())) << r.err;
    EXPECT_TRUE(contains(r.err, "float17")) << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(run_hapbench("list --tasks " + tasks.string()).exit_code, 2);
}

TEST_F(Cli, MalformedHardwareModelIsBadInputNamingFileAndField) {
    std::string model = read_text(fs::path(HB_SOURCE_DIR) / "hardware/cpu-example.yaml");
    model.replace(model.find("floor_us: 0"), 11, "floor_us: fast");
    const fs::path path = dir_ / "broken.yaml";
    std::ofstream(path) << model;
    const auto hap = run_hapbench("hap --hardware " + path.string() + " --op sigmoid");
    EXPECT_EQ(hap.exit_code, 2);
    EXPECT_TRUE(contains(hap.err, path.string())) << hap.err;
    EXPECT_TRUE(contains(hap.err, "floor_us")) << hap.err;
    const auto eval = run_hapbench("eval --submission " + reference + " --op sigmoid --case 13 --hardware " + path.string());
    EXPECT_EQ(eval.exit_code, 2);
    EXPECT_TRUE(contains(eval.err, "floor_us")) << eval.err;
}

TEST_F(Cli, MissingTasksDirectoryIsBadInput) {
    const std::string missing = (dir_ / "no-tasks").string();
    for (const std::string& args : {"eval --no-perf --submission " + reference + " --tasks " + missing, "list --tasks " + missing,
                                    "check-cases --tasks " + missing, "hap --hardware cpu-example --tasks " + missing}) {
        const auto r = run_hapbench(args);
        EXPECT_EQ(r.exit_code, 2) << args;
        EXPECT_TRUE(contains(r.err, missing)) << args << ": " << r.err;
    }
}

// ---- exit 3: hapbench's own environment is broken, not the input or the kernel.

TEST_F(Cli, MissingWorkerIsAnInternalError) {
    const auto r = run_hapbench("eval --no-perf --submission " + reference + " --op sigmoid --case 13",
                                "HAPBENCH_WORKER=" + (dir_ / "no-worker").string());
    EXPECT_EQ(r.exit_code, 3) << "no case may be blamed for hapbench's missing worker: " << r.out.substr(0, 400) << r.err;
    EXPECT_TRUE(contains(r.err, "HAPBENCH_WORKER")) << r.err;
    EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, UnwritableCacheForTheSplitKeyIsAnInternalError) {
    std::ofstream(dir_ / "a-file") << "not a directory\n";
    const auto r = run_hapbench("eval --no-perf --submission " + reference + " --op sigmoid --split hidden --hidden-seed 4",
                                "XDG_CACHE_HOME=" + (dir_ / "a-file/cache").string());
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "split-key")) << r.err;
    EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace hb::test
