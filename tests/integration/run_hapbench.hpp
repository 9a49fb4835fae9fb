// Runs the hapbench binary like a user and captures exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hb::test {

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
    nlohmann::json json() const { return nlohmann::json::parse(out); }
};

// `environment`: assignments put before the command, e.g. "XDG_CACHE_HOME=/tmp/x".
inline CommandResult run_hapbench(const std::string& args, const std::string& environment = "") {
    const std::string err_path = (std::filesystem::temp_directory_path() / "hapbench-test-stderr-XXXXXX").string();
    std::vector<char> err_template(err_path.begin(), err_path.end());
    err_template.push_back('\0');
    const int err_fd = mkstemp(err_template.data());
    if (err_fd >= 0) close(err_fd);
    const std::string err_file = err_template.data();
    const std::string cmd = (environment.empty() ? "" : environment + " ") + std::string(HB_HAPBENCH_BIN) + " " + args +
                            " 2>" + err_file;
    CommandResult r;
    FILE* pipe = popen(cmd.c_str(), "r");
    std::array<char, 65536> buffer{};
    std::size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream e(err_file);
    std::stringstream ss;
    ss << e.rdbuf();
    r.err = ss.str();
    std::remove(err_file.c_str());
    return r;
}

// Operators in the shipped suite (every suite/levelN/<op>/proto.yaml): the tests that run
// the whole suite count on it instead of a fixed number, since each level adds operators.
inline std::size_t suite_operator_count() {
    std::size_t n = 0;
    for (const auto& level : std::filesystem::directory_iterator(std::string(HB_SOURCE_DIR) + "/suite"))
        if (level.is_directory())
            for (const auto& op : std::filesystem::directory_iterator(level.path()))
                n += std::filesystem::exists(op.path() / "proto.yaml");
    return n;
}

inline const nlohmann::json* find_operator(const nlohmann::json& run, const std::string& op) {
    for (const auto& o : run.at("operators"))
        if (o.at("operator") == op) return &o;
    return nullptr;
}

}  // namespace hb::test
