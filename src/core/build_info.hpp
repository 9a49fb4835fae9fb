// Facts fixed when hapbench is built: its version, the source tree it reads its suite,
// hardware models and kernel headers from, and the oneDNN version its baselines link.
// Only build_info.cpp sees the build's defines, so moving the tree or the build directory
// recompiles one file.
#pragma once

#include <string>

namespace hb {

const std::string& hapbench_version();
const std::string& source_dir();  // the repository root, no trailing slash
const std::string& dnnl_version();

}  // namespace hb
