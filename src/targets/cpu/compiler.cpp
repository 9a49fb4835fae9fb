#include "targets/cpu/compiler.hpp"

#include <cstdlib>
#include <filesystem>

#include "core/build_info.hpp"
#include "core/subprocess.hpp"

namespace hb {

namespace {
std::string compiler() {
    const char* cxx = std::getenv("CXX");
    return cxx && *cxx ? cxx : "g++";
}
std::string include_dir() { return source_dir() + "/include"; }
}  // namespace

std::vector<std::string> cpu_compile_command(const std::string& source, const std::string& output) {
    return {compiler(), "-std=c++20", "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared",
            "-fvisibility=hidden", "-I" + include_dir(), source, "-o", output};
}

std::string cpu_compiler_version() {
    auto r = run_process({compiler(), "--version"}, 30);
    auto line = r.output.substr(0, r.output.find('\n'));
    return line.empty() ? compiler() : line;
}

BuildResult compile_cpu_kernel(const std::string& source, const std::string& output, double timeout_s) {
    BuildResult b;
    const auto cmd = cpu_compile_command(source, output);
    for (const auto& part : cmd) b.command += (b.command.empty() ? "" : " ") + part;
    std::filesystem::create_directories(std::filesystem::path(output).parent_path());
    std::filesystem::remove(output);
    const auto r = run_process(cmd, timeout_s);
    b.seconds = r.seconds;
    b.log = r.output;
    if (r.timed_out) {
        b.log += "\nbuild timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s";
        return b;
    }
    b.ok = r.exit_code == 0 && std::filesystem::exists(output);
    if (!b.ok && b.log.empty()) b.log = "compiler exited with status " + std::to_string(r.exit_code);
    b.library_path = output;
    return b;
}

}  // namespace hb
