// Compiles one operator file of a submission into a shared object with pinned flags.
#pragma once

#include <string>
#include <vector>

#include "targets/target.hpp"

namespace hb {

// The compiler command hapbench uses for every operator file (recorded in results):
// CXX (default g++) -std=c++20 -O3 -march=native -fopenmp -fPIC -shared -fvisibility=hidden.
std::vector<std::string> cpu_compile_command(const std::string& source, const std::string& output);
std::string cpu_compiler_version();
BuildResult compile_cpu_kernel(const std::string& source, const std::string& output, double timeout_s);

}  // namespace hb
