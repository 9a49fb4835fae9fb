// Every status and operator state of docs/results.md is produced by a real run. This file
// produces the ones no other test data earns (tests/data/status_submission, an unimplemented
// operator, a hardware model no kernel can reach, --two-trial, --no-sandbox); the rest come
// from tests/data/bad_submission (test_failure_paths.cpp), tests/hacks (test_hacks.cpp) and
// the wrong kernels (test_wrong_*.cpp). The last tests check that every status and state the
// document lists is asserted by some integration test, so a new one cannot go untested.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;

const std::string reference = std::string(HB_SOURCE_DIR) + "/examples/cpu/reference";

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

const nlohmann::json* find_case(const nlohmann::json& run, const std::string& op, int case_id) {
    for (const auto& c : run.at("cases"))
        if (c.at("operator") == op && c.at("case_id") == case_id) return &c;
    return nullptr;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The one case of a run of one case.
const nlohmann::json& single_case(const nlohmann::json& run) {
    static const nlohmann::json none = {{"status", "(no single case)"}, {"message", ""}};
    EXPECT_EQ(run.at("cases").size(), 1u);
    return run.at("cases").size() == 1 ? run.at("cases").at(0) : none;
}

// ---- tests/data/status_submission: public case 13 of each operator, correctness only.

class StatusSubmission : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        const std::string work = (fs::temp_directory_path() / ("hb_test_statuses_" + std::to_string(getpid()))).string();
        const auto r = run_hapbench(std::string("eval --submission ") + HB_TEST_DATA_DIR +
                                    "/status_submission --op exp --op gelu --op mish --op sigmoid --op gcd --op rms_norm"
                                    " --op masked_scale --case 13 --no-perf --format json --work-dir " + work);
        exit_code_ = r.exit_code;
        err_ = new std::string(r.err);
        run_ = new nlohmann::json(r.exit_code == 1 ? r.json() : nlohmann::json::object());
        log_bytes_ = fs::exists(work + "/sigmoid.candidate.log") ? fs::file_size(work + "/sigmoid.candidate.log") : 0;
        fs::remove_all(work);
    }
    static void TearDownTestSuite() {
        delete run_;
        delete err_;
    }
    // The one case of `op`, and its operator.
    static const nlohmann::json& only_case(const std::string& op) {
        static const nlohmann::json none = nlohmann::json::object();
        const nlohmann::json* c = run_->contains("cases") ? find_case(*run_, op, 13) : nullptr;
        EXPECT_NE(c, nullptr) << op << " case 13 is not in the results; stderr: " << *err_;
        return c ? *c : none;
    }
    static const nlohmann::json& operator_of(const std::string& op) {
        static const nlohmann::json none = nlohmann::json::object();
        const nlohmann::json* o = run_->contains("operators") ? find_operator(*run_, op) : nullptr;
        EXPECT_NE(o, nullptr) << op;
        return o ? *o : none;
    }
    static std::string message_of(const std::string& op) { return only_case(op).value("message", ""); }

    static int exit_code_;
    static std::string* err_;
    static nlohmann::json* run_;
    static std::uintmax_t log_bytes_;
};
int StatusSubmission::exit_code_ = -1;
std::string* StatusSubmission::err_ = nullptr;
nlohmann::json* StatusSubmission::run_ = nullptr;
std::uintmax_t StatusSubmission::log_bytes_ = 0;

TEST_F(StatusSubmission, RunsToTheEndWithFailures) {
    EXPECT_EQ(exit_code_, 1) << *err_;
    ASSERT_TRUE(run_->contains("cases"));
    EXPECT_EQ(run_->at("cases").size(), 7u);
    // Only gcd earns anything: NONDETERMINISTIC is not structural, so its compile credit stays.
    EXPECT_DOUBLE_EQ(run_->at("total_score").get<double>(), 20.0);
}

TEST_F(StatusSubmission, AbortIsACrash) {
    EXPECT_EQ(only_case("exp").value("status", ""), "CRASH");
    EXPECT_TRUE(contains(message_of("exp"), "SIGABRT")) << message_of("exp");
    EXPECT_EQ(operator_of("exp").value("state", ""), "evaluated");
}

TEST_F(StatusSubmission, ExitIsACrash) {
    EXPECT_EQ(only_case("gelu").value("status", ""), "CRASH");
    EXPECT_TRUE(contains(message_of("gelu"), "exited with status 3")) << message_of("gelu");
}

TEST_F(StatusSubmission, ObjectWithoutTheEntryPointIsACompileError) {
    EXPECT_EQ(only_case("mish").value("status", ""), "COMPILE_ERROR");
    const auto& op = operator_of("mish");
    EXPECT_EQ(op.value("state", ""), "compile_error");
    EXPECT_EQ(op.value("op_score", -1.0), 0.0);
    EXPECT_TRUE(contains(op.value("message", ""), "defines no hapbench_kernel")) << op.value("message", "");
    EXPECT_FALSE(op.at("build").at("ok").get<bool>());
}

TEST_F(StatusSubmission, FloodingTheLogHitsTheFileSizeLimit) {
    EXPECT_EQ(only_case("sigmoid").value("status", ""), "RESOURCE_LIMIT");
    EXPECT_TRUE(contains(message_of("sigmoid"), "file size")) << message_of("sigmoid");
    EXPECT_EQ(log_bytes_, 64u << 20) << "the log stops at the limit";
}

TEST_F(StatusSubmission, IntegerOutputsThatDifferBetweenCallsAreNondeterministic) {
    EXPECT_EQ(only_case("gcd").value("status", ""), "NONDETERMINISTIC");
    EXPECT_TRUE(contains(message_of("gcd"), "two calls on identical inputs gave different y")) << message_of("gcd");
    EXPECT_EQ(only_case("gcd").value("nondeterministic_elements", 0), 1);
    EXPECT_FALSE(only_case("gcd").value("passed", true));
    // Not structural: the case keeps its compile credit.
    EXPECT_EQ(operator_of("gcd").value("structural_failures", -1), 0);
    EXPECT_DOUBLE_EQ(operator_of("gcd").value("op_score", -1.0), 20.0);
}

TEST_F(StatusSubmission, CallingBlasIsDelegation) {
    EXPECT_EQ(only_case("rms_norm").value("status", ""), "DELEGATION");
    EXPECT_TRUE(contains(message_of("rms_norm"), "cblas_sdot")) << message_of("rms_norm");
    EXPECT_EQ(operator_of("rms_norm").value("state", ""), "delegation");
    EXPECT_EQ(operator_of("rms_norm").value("op_score", -1.0), 0.0);
}

TEST_F(StatusSubmission, AbsentFileIsMissing) {
    EXPECT_EQ(only_case("masked_scale").value("status", ""), "MISSING");
    EXPECT_EQ(operator_of("masked_scale").value("state", ""), "missing");
}

// ---- An operator hapbench does not implement: a tasks directory holding sigmoid and a copy
// of it under another name.

TEST(NotImplementedOperator, CasesAreListedNotRunAndDoNotFailTheRun) {
    const fs::path tasks = fs::temp_directory_path() / ("hb_test_not_implemented_" + std::to_string(getpid()));
    for (const char* op : {"sigmoid", "hard_sigmoid"}) {
        fs::create_directories(tasks / "level1" / op);
        for (const char* f : {"proto.yaml", "cases.cpu.yaml"})
            fs::copy_file(fs::path(HB_SOURCE_DIR) / "suite/level1/sigmoid" / f, tasks / "level1" / op / f);
    }
    const auto r = run_hapbench("eval --no-perf --submission " + reference + " --tasks " + tasks.string() +
                                " --case 3 --case 13 --format json");
    ASSERT_EQ(r.exit_code, 0) << "NOT_RUN cases were not evaluated and must not fail the run: " << r.err;
    const auto run = r.json();
    const auto* op = find_operator(run, "hard_sigmoid");
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->at("state"), "not_implemented");
    EXPECT_EQ(op->at("op_score").get<double>(), 0.0);
    int not_run = 0, passed = 0;
    for (const auto& c : run.at("cases")) {
        if (c.at("operator") == "hard_sigmoid") {
            ++not_run;
            EXPECT_EQ(c.at("status"), "NOT_RUN");
            EXPECT_FALSE(c.at("passed").get<bool>());
            EXPECT_TRUE(contains(c.at("message"), "does not implement hard_sigmoid")) << c.at("message");
            EXPECT_TRUE(contains(c.at("signature"), "x:float32")) << c.at("signature");
        } else {
            passed += c.at("status") == "PASS";
        }
    }
    EXPECT_EQ(not_run, 2) << "only the --case ids are listed";
    EXPECT_EQ(passed, 2);
    EXPECT_NEAR(run.at("total_score").get<double>(), find_operator(run, "sigmoid")->at("op_score").get<double>(), 1e-9);

    // A hidden split cannot draw cases for an operator without its rules: none are listed.
    const auto hidden = run_hapbench("eval --no-perf --submission " + reference + " --tasks " + tasks.string() +
                                     " --split hidden --hidden-seed 11 --hidden-count 1 --format json");
    ASSERT_EQ(hidden.exit_code, 0) << hidden.err;
    const auto hidden_run = hidden.json();
    EXPECT_EQ(find_operator(hidden_run, "hard_sigmoid")->at("state"), "not_implemented");
    for (const auto& c : hidden_run.at("cases")) EXPECT_EQ(c.at("operator"), "sigmoid");
    fs::remove_all(tasks);
}

// ---- A hardware model whose peaks are a million times too low: every correct time is below
// its T_HW.

TEST(ImpossibleTime, CorrectKernelBelowTheLimitKeepsCorrectnessCreditOnly) {
    const auto r = run_hapbench("eval --submission " + reference + " --op sigmoid --case 13 --hardware " + HB_TEST_DATA_DIR +
                                "/hardware/absurdly-slow-calibrated.yaml --warmup 1 --min-calls 3 --max-calls 3 --no-cache"
                                " --format json");
    ASSERT_EQ(r.exit_code, 0) << "IMPOSSIBLE_TIME counts as correct: " << r.err;
    const auto run = r.json();
    const auto* c = find_case(run, "sigmoid", 13);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->at("status"), "IMPOSSIBLE_TIME");
    EXPECT_TRUE(c->at("passed").get<bool>());
    EXPECT_EQ(c->at("score").get<double>(), 0.0);
    EXPECT_GT(c->at("t_hw_us").get<double>(), 1e6) << "seconds: the model is a million times too slow";
    EXPECT_LT(c->at("t_cand_us").get<double>(), c->at("t_hw_us").get<double>() * 0.9);
    ASSERT_EQ(c->at("audit").size(), 1u);
    const std::string audit = c->at("audit").at(0);
    EXPECT_TRUE(contains(audit, "IMPOSSIBLE_TIME: measured")) << audit;
    EXPECT_TRUE(contains(audit, "calibration margin")) << audit;
    const auto* op = find_operator(run, "sigmoid");
    ASSERT_NE(op, nullptr);
    EXPECT_DOUBLE_EQ(op->at("compile_term").get<double>(), 20.0);
    EXPECT_DOUBLE_EQ(op->at("correctness_term").get<double>(), 30.0);
    EXPECT_DOUBLE_EQ(op->at("performance_term").get<double>(), 0.0);
}

// ---- --two-trial: trial 2 (seed + 1, inputs + 0.01) catches what two calls on one input
// cannot: an output cached by input address passes both correctness calls.

TEST(TwoTrial, SecondTrialCatchesAnAddressKeyedCache) {
    const std::string args = "eval --no-perf --submission " + std::string(HB_SOURCE_DIR) +
                             "/tests/hacks/pointer_cache --op sigmoid --case 13 --format json";
    const auto one = run_hapbench(args);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(single_case(one.json()).at("status"), "PASS");
    EXPECT_EQ(one.json().at("options").value("two_trial", true), false);

    const auto two = run_hapbench(args + " --two-trial");
    ASSERT_EQ(two.exit_code, 1) << two.err;
    const auto run = two.json();
    EXPECT_EQ(run.at("options").value("two_trial", false), true);
    const auto& c = single_case(run);
    EXPECT_EQ(c.at("status"), "PRECISION_FAIL");
    EXPECT_TRUE(contains(c.at("message"), "trial 2 (seed + 1, inputs + 0.01)")) << c.at("message");
}

// ---- --no-sandbox: the filter is off (only to measure its cost), and the results say so.

TEST(NoSandbox, TurnsTheFilterOffAndIsRecorded) {
    const std::string args = "eval --no-perf --submission " + std::string(HB_SOURCE_DIR) +
                             "/tests/hacks/opens_socket --op sigmoid --case 13 --format json";
    const auto sandboxed = run_hapbench(args);
    ASSERT_EQ(sandboxed.exit_code, 1) << sandboxed.err;
    EXPECT_EQ(single_case(sandboxed.json()).at("status"), "SANDBOX_VIOLATION");
    EXPECT_EQ(sandboxed.json().at("environment").at("sandbox").at("enabled"), true);

    const auto open = run_hapbench(args + " --no-sandbox");
    ASSERT_EQ(open.exit_code, 0) << open.err;
    const auto run = open.json();
    EXPECT_EQ(single_case(run).at("status"), "PASS");
    EXPECT_EQ(run.at("environment").at("sandbox").at("enabled"), false);
    EXPECT_TRUE(contains(run.at("caches").at("note"), "--no-sandbox")) << run.at("caches");
}

// ---- Coverage: every status and operator state the document lists is asserted somewhere.

// The text of every integration test file.
std::string integration_sources() {
    std::string all;
    for (const auto& f : fs::directory_iterator(fs::path(HB_SOURCE_DIR) / "tests/integration"))
        if (f.path().extension() == ".cpp") all += read_text(f.path());
    return all;
}

TEST(DocumentedStatuses, EveryStatusIsAssertedByAnIntegrationTest) {
    const std::string doc = read_text(fs::path(HB_SOURCE_DIR) / "docs/results.md");
    const std::string table = doc.substr(doc.find("## Statuses"));
    const std::string sources = integration_sources();
    std::set<std::string> statuses;
    const std::regex row(R"(\n\| `([A-Z_]+)` \|)");
    for (std::sregex_iterator it(table.begin(), table.end(), row), end; it != end; ++it) statuses.insert((*it)[1]);
    EXPECT_GE(statuses.size(), 18u);
    for (const auto& s : statuses) EXPECT_TRUE(contains(sources, "\"" + s + "\"")) << s << " is asserted by no integration test";
}

TEST(DocumentedStatuses, EveryOperatorStateIsAssertedByAnIntegrationTest) {
    const std::string doc = read_text(fs::path(HB_SOURCE_DIR) / "docs/results.md");
    const auto start = doc.find("`state` (");
    ASSERT_NE(start, std::string::npos) << "docs/results.md lists no operator states";
    const std::string list = doc.substr(start, doc.find("`message`", start) - start);
    const std::string sources = integration_sources();
    std::set<std::string> states;
    const std::regex state(R"(`([a-z_]+)`)");
    for (std::sregex_iterator it(list.begin(), list.end(), state), end; it != end; ++it)
        if ((*it)[1] != "state" && (*it)[1] != "hapbench_kernel") states.insert((*it)[1]);
    EXPECT_EQ(states, (std::set<std::string>{"evaluated", "missing", "compile_error", "delegation", "not_implemented"}));
    for (const auto& s : states) EXPECT_TRUE(contains(sources, "\"" + s + "\"")) << s << " is asserted by no integration test";
}

}  // namespace
}  // namespace hb::test
