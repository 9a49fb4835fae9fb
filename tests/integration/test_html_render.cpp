// The HTML report and the diff as a user gets them: `hapbench report` and `hapbench diff` on
// the hand-made results files in tests/data/results, the pages rendered in headless Chromium
// (Debian's chromium, installed by scripts/install-deps.sh) to a PNG with no console message,
// and their DOM checked: every operator and failing case, one plot point per case. Bad
// results files exit 2 with the reason. Nothing here is timed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string results_file(const std::string& name) { return std::string(HB_TEST_DATA_DIR) + "/results/" + name; }

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::size_t count(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
    return n;
}

class HtmlRender : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("hapbench-html-test-" + std::to_string(getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

// Chromium's path, or "" when it is not installed.
std::string chromium_path() {
    for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
        if (access(candidate, X_OK) == 0) return candidate;
    return "";
}

// A test that needs Chromium fails without it under CI and skips, saying why, elsewhere.
#define REQUIRE_CHROMIUM()                                                                                             \
    do {                                                                                                               \
        if (chromium_path().empty()) {                                                                                 \
            if (std::getenv("CI")) FAIL() << "chromium is not installed (scripts/install-deps.sh installs it)";        \
            GTEST_SKIP() << "chromium is not installed: run scripts/install-deps.sh to render the HTML report";        \
        }                                                                                                              \
    } while (0)

struct Rendered {
    int exit_code = -1;
    std::string log;  // Chromium's stderr with --enable-logging
    std::string dom;  // --dump-dom
};

// Headless, offline, in a fresh profile (the flags keep it from stalling on network look-ups).
Rendered render(const fs::path& page, const fs::path& work, const std::string& mode) {
    static int profile = 0;
    const fs::path profile_dir = work / ("chromium-profile-" + std::to_string(profile++));
    const fs::path log = work / "chromium.log";
    // TMPDIR=/tmp: Chromium puts its singleton socket under TMPDIR, and a Unix socket's path
    // may not exceed 107 bytes (the per-test TMPDIR under a deep checkout does).
    const std::string cmd = "TMPDIR=/tmp timeout 120 " + chromium_path() +
                            " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                            " --disable-background-networking --disable-component-update --disable-sync"
                            " --hide-scrollbars --enable-logging=stderr --v=0 --user-data-dir=" +
                            profile_dir.string() + " " + mode + " file://" + fs::absolute(page).string() + " 2>" +
                            log.string();
    Rendered r;
    FILE* pipe = popen(cmd.c_str(), "r");
    char buffer[65536];
    std::size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.dom.append(buffer, n);
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.log = read_text(log);
    return r;
}

// Console messages (errors, uncaught exceptions, logs) of the page, one per line.
std::string console_lines(const std::string& log) {
    std::string out;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);)
        if (contains(line, ":CONSOLE") || contains(line, "Uncaught")) out += line + "\n";
    return out;
}

// Width and height from a PNG's IHDR chunk; {0, 0} if it is no PNG.
std::pair<int, int> png_size(const std::string& bytes) {
    if (bytes.size() < 24 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return {0, 0};
    auto be32 = [&](std::size_t at) {
        return (static_cast<unsigned char>(bytes[at]) << 24) | (static_cast<unsigned char>(bytes[at + 1]) << 16) |
               (static_cast<unsigned char>(bytes[at + 2]) << 8) | static_cast<unsigned char>(bytes[at + 3]);
    };
    return {be32(16), be32(20)};
}

void screenshot_without_console_messages(const fs::path& page, const fs::path& work, const fs::path& png) {
    const Rendered shot = render(page, work, "--window-size=1280,2000 --screenshot=" + png.string());
    ASSERT_EQ(shot.exit_code, 0) << shot.log;
    EXPECT_EQ(console_lines(shot.log), "") << "the page logged to the console";
    const auto [width, height] = png_size(read_text(png));
    EXPECT_EQ(width, 1280);
    EXPECT_EQ(height, 2000);
    EXPECT_GT(fs::file_size(png), 20000u) << "a blank page compresses smaller";
}

TEST_F(HtmlRender, ReportRendersWithEveryOperatorCaseAndPoint) {
    REQUIRE_CHROMIUM();
    const fs::path page = dir_ / "report.html";
    const auto r = run_hapbench("report " + results_file("run_a.json") + " --html " + page.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "total score: 116.82")) << r.out;  // the table on stdout

    const fs::path png = dir_ / "report.png";
    screenshot_without_console_messages(page, dir_, png);
    // The README's screenshot is this one (HB_REPORT_SCREENSHOT=docs/images/report.png).
    if (const char* keep = std::getenv("HB_REPORT_SCREENSHOT")) fs::copy_file(png, keep, fs::copy_options::overwrite_existing);

    const Rendered dom = render(page, dir_, "--dump-dom");
    ASSERT_EQ(dom.exit_code, 0) << dom.log;
    EXPECT_EQ(console_lines(dom.log), "");
    const auto run = nlohmann::json::parse(read_text(results_file("run_a.json")));
    std::map<std::string, int> cases_of;
    for (const auto& c : run.at("cases")) ++cases_of[c.at("operator").get<std::string>()];
    ASSERT_EQ(run.at("operators").size(), 3u);
    for (const auto& op : run.at("operators")) {
        const std::string name = op.at("operator");
        EXPECT_EQ(count(dom.dom, "<tr data-op=\"" + name + "\">"), 1u) << name;
        // The operator's plot, as Chromium parsed it: one point per case.
        const auto svg_at = dom.dom.find("data-op=\"" + name + "\" width=");
        ASSERT_NE(svg_at, std::string::npos) << name;
        const std::string svg = dom.dom.substr(svg_at, dom.dom.find("</svg>", svg_at) - svg_at);
        EXPECT_EQ(static_cast<int>(count(svg, "<g class=\"case ")), cases_of[name]) << name;
    }
    EXPECT_EQ(count(dom.dom, "<g class=\"case "), run.at("cases").size());
    for (const auto& c : run.at("cases")) {
        if (c.at("passed").get<bool>() && c.at("audit").empty()) continue;
        const std::string row = "<tr class=\"attention\" data-op=\"" + c.at("operator").get<std::string>() +
                                "\" data-case=\"" + std::to_string(c.at("case_id").get<int>()) + "\">";
        EXPECT_EQ(count(dom.dom, row), 1u) << row;
    }
    EXPECT_EQ(count(dom.dom, "<tr class=\"attention\""), 7u);
}

TEST_F(HtmlRender, DiffRendersWithEveryComparedAndLoneCase) {
    REQUIRE_CHROMIUM();
    const fs::path page = dir_ / "diff.html";
    const auto r = run_hapbench("diff " + results_file("run_a.json") + " " + results_file("run_b.json") + " --html " +
                                page.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    screenshot_without_console_messages(page, dir_, dir_ / "diff.png");
    const Rendered dom = render(page, dir_, "--dump-dom");
    ASSERT_EQ(dom.exit_code, 0) << dom.log;
    EXPECT_EQ(count(dom.dom, "<tr class=\"case-diff"), 11u);
    EXPECT_EQ(count(dom.dom, "<tr class=\"case-diff status-changed\""), 6u);
    EXPECT_TRUE(contains(dom.dom, "id=\"only-a\"")) << "gelu 13 is only in A";
    EXPECT_TRUE(contains(dom.dom, "id=\"only-b\"")) << "gelu 14 is only in B";
}

TEST_F(HtmlRender, DiffOnTheCommandLineListsTheExpectedRows) {
    const auto r = run_hapbench("diff " + results_file("run_a.json") + " " + results_file("run_b.json"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Largest change first: a case that stopped or started passing leads.
    const std::regex first_row(R"(\n  (\S+) +(\d+) (\S+ -> \S+))");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, first_row)) << r.out;
    EXPECT_EQ(m[1].str() + " " + m[2].str() + " " + m[3].str(), "gcd 2 CRASH -> PASS") << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(gelu +3 PASS -> PRECISION_FAIL +132\.0 -> -)"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(gelu +1 PASS +303\.3 -> 151\.6 +0\.50x 0\.643 -> 0\.818 \(\+0\.175\))")))
        << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(cases only in A \(1\):\n  gelu +13 PASS)"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(cases only in B \(1\):\n  gelu +14 PASS)"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(mish +1 +0/3 -> 3/3 .* 0\.00 -> 66\.07 +\+66\.07)"))) << r.out;
}

TEST_F(HtmlRender, BadResultsFilesExitTwoWithTheReason) {
    const std::string text = read_text(results_file("run_a.json"));
    write_text(dir_ / "truncated.json", text.substr(0, text.size() / 2));
    auto old = nlohmann::json::parse(text);
    old["schema_version"] = 1;
    write_text(dir_ / "schema1.json", old.dump());
    auto bad_field = nlohmann::json::parse(text);
    bad_field["cases"][2]["t_hw_us"] = "slow";
    write_text(dir_ / "field.json", bad_field.dump());
    auto other_convention = nlohmann::json::parse(read_text(results_file("run_b.json")));
    other_convention["t_hw_convention"] = "cann-bench";
    write_text(dir_ / "cann.json", other_convention.dump());

    struct Case {
        std::string args, reason;
    };
    const std::string a = results_file("run_a.json");
    for (const Case& c : std::vector<Case>{
             {"report " + (dir_ / "truncated.json").string(), "truncated.json: not valid JSON (a truncated or partly written file?)"},
             {"report " + (dir_ / "schema1.json").string() + " --html " + (dir_ / "x.html").string(),
              "schema1.json: schema_version: 1 is not readable by this hapbench"},
             {"report " + (dir_ / "field.json").string(), "field.json: cases[2].t_hw_us: expected a number or null"},
             {"report " + (dir_ / "missing.json").string(), "cannot read results file"},
             {"report " + a + " --format pdf", "unknown format 'pdf'"},
             {"diff " + a + " " + (dir_ / "truncated.json").string(), "truncated.json: not valid JSON"},
             {"diff " + a + " " + (dir_ / "cann.json").string(), "the T_HW convention differs (hapbench in"},
         }) {
        const auto r = run_hapbench(c.args);
        EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
        EXPECT_TRUE(contains(r.err, c.reason)) << c.args << "\n" << r.err;
        EXPECT_TRUE(r.out.empty()) << c.args << ": nothing on stdout for a refused file";
    }
    EXPECT_FALSE(fs::exists(dir_ / "x.html")) << "no report is written from a refused file";
}

TEST_F(HtmlRender, EvalWritesTheHtmlReportOfItsRun) {
    const fs::path page = dir_ / "eval.html", results = dir_ / "eval.json";
    const auto r = run_hapbench(std::string("eval --no-perf --submission ") + HB_SOURCE_DIR +
                                "/examples/cpu/reference --op gelu --case 1 --case 2 --out " + results.string() +
                                " --html " + page.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string html = read_text(page);
    EXPECT_TRUE(contains(html, "<tr data-op=\"gelu\">"));
    EXPECT_EQ(count(html, "<g class=\"case "), 2u);
    EXPECT_TRUE(contains(html, "Correctness only (--no-perf)"));
    // report on the run's own results file gives the same page, and the same JSON.
    const auto again = run_hapbench("report " + results.string() + " --format html");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, html);
    const auto json = run_hapbench("report " + results.string() + " --format json");
    EXPECT_EQ(json.out, read_text(results));
}

}  // namespace
}  // namespace hb::test
