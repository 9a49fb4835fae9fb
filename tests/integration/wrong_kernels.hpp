// Deliberately wrong kernels for the integration tests: each is a reference kernel
// (examples/cpu/reference/<op>.cpp) with one plausible bug, made at test time from the edits
// in tests/data/wrong_kernels/*.yaml (one file per level or group of operators, each mapping
// operator -> {bug, edits: [{find, replace}]}), so it stays the reference but for its bug.
// test_wrong_levelN*.cpp evaluate them and assert which cases the precision gate catches.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "run_hapbench.hpp"

namespace hb::test {

// Counts the occurrences of `needle` in `text`.
inline int occurrences(const std::string& text, const std::string& needle) {
    int n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

// The reference kernel of `op` with the edits of its entry applied (`file` names the entry's
// file in errors).
// Throws when an edit's text is not in the reference exactly once.
inline std::string wrong_kernel_source(const std::string& op, const YAML::Node& entry, const std::string& file = "tests/data/wrong_kernels") {
    const std::string reference_path = std::string(HB_SOURCE_DIR) + "/examples/cpu/reference/" + op + ".cpp";
    std::ifstream in(reference_path);
    if (!in) throw std::runtime_error("cannot read " + reference_path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string source = ss.str();
    for (const auto& edit : entry["edits"]) {
        const auto find = edit["find"].as<std::string>();
        const auto replace = edit["replace"].as<std::string>();
        const int n = occurrences(source, find);
        if (n != 1)
            throw std::runtime_error(file + ", " + op + ": the text to replace occurs " +
                                     std::to_string(n) + " times in " + reference_path + " (must be once): " + find);
        source.replace(source.find(find), find.size(), replace);
    }
    return "// WRONG on purpose, made by tests/integration/wrong_kernels.hpp from the reference kernel: " +
           entry["bug"].as<std::string>() + ".\n" + source;
}

// A temporary directory, removed with everything in it when the test process ends.
struct TemporaryDirectory {
    std::string path;
    TemporaryDirectory() {
        char path_template[] = "/tmp/hapbench-wrong-kernels-XXXXXX";
        if (!mkdtemp(path_template)) throw std::runtime_error("cannot create a temporary directory");
        path = path_template;
    }
    ~TemporaryDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
};

// Every entry of every tests/data/wrong_kernels/*.yaml: operator -> (its file, its node).
inline std::map<std::string, std::pair<std::string, YAML::Node>> wrong_kernel_entries() {
    std::map<std::string, std::pair<std::string, YAML::Node>> entries;
    for (const auto& file : std::filesystem::directory_iterator(std::string(HB_TEST_DATA_DIR) + "/wrong_kernels")) {
        if (file.path().extension() != ".yaml") continue;
        const YAML::Node all = YAML::LoadFile(file.path().string());
        for (const auto& item : all) {
            const auto op = item.first.as<std::string>();
            if (entries.count(op)) throw std::runtime_error(op + " has wrong-kernel edits in two files");
            entries.emplace(op, std::make_pair("tests/data/wrong_kernels/" + file.path().filename().string(), item.second));
        }
    }
    return entries;
}

// A submission directory holding every wrong kernel, written once per test process.
inline const std::string& wrong_submission_dir() {
    static const TemporaryDirectory dir;
    static const bool written = [] {
        for (const auto& [op, entry] : wrong_kernel_entries())
            std::ofstream(dir.path + "/" + op + ".cpp") << wrong_kernel_source(op, entry.second, entry.first);
        return true;
    }();
    (void)written;
    return dir.path;
}

// Status of each evaluated public case of `op` (all of them when `cases` is empty) with its
// wrong kernel, by case id. The run must finish with failures (exit status 1).
inline std::map<int, std::string> wrong_kernel_statuses(const std::string& op, const std::vector<int>& cases = {}) {
    std::string args = "eval --submission " + wrong_submission_dir() + " --op " + op + " --no-perf --format json";
    for (int c : cases) args += " --case " + std::to_string(c);
    const CommandResult r = run_hapbench(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    std::map<int, std::string> out;
    if (r.exit_code != 1) return out;
    const nlohmann::json run = r.json();  // kept alive: the loop walks into it
    for (const auto& c : run.at("cases")) out[c.at("case_id").get<int>()] = c.at("status").get<std::string>();
    return out;
}

inline int count_status(const std::map<int, std::string>& statuses, const std::string& status) {
    int n = 0;
    for (const auto& [id, s] : statuses) n += s == status;
    return n;
}

inline std::string describe(const std::map<int, std::string>& statuses) {
    std::map<std::string, int> counts;
    for (const auto& [id, s] : statuses) ++counts[s];
    std::string text;
    for (const auto& [status, n] : counts) text += status + " x" + std::to_string(n) + " ";
    return text;
}

}  // namespace hb::test
