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

#include <nlohmann/json.hpp>

namespace hb::test {

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
    nlohmann::json json() const { return nlohmann::json::parse(out); }
};

inline CommandResult run_hapbench(const std::string& args) {
    char err_template[] = "/tmp/hapbench-test-stderr-XXXXXX";
    const int err_fd = mkstemp(err_template);
    if (err_fd >= 0) close(err_fd);
    const std::string err_file = err_template;
    const std::string cmd = std::string(HB_HAPBENCH_BIN) + " " + args + " 2>" + err_file;
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

// Operators with a cpu cases file in the shipped suite (suite/levelN/<op>/cases.cpu.yaml),
// 20 public cases each: tests count from here rather than assume the levels present.
inline std::size_t suite_operator_count() {
    namespace fs = std::filesystem;
    std::size_t n = 0;
    for (const auto& level : fs::directory_iterator(fs::path(HB_SOURCE_DIR) / "suite"))
        if (level.is_directory() && level.path().filename().string().rfind("level", 0) == 0)
            for (const auto& op : fs::directory_iterator(level.path())) n += fs::exists(op.path() / "cases.cpu.yaml");
    return n;
}

inline const nlohmann::json* find_operator(const nlohmann::json& run, const std::string& op) {
    for (const auto& o : run.at("operators"))
        if (o.at("operator") == op) return &o;
    return nullptr;
}

}  // namespace hb::test
