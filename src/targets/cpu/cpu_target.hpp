// The cpu target: g++-built shared objects run in hapbench-worker processes.
#pragma once

#include "targets/target.hpp"

namespace hb {

class CpuTarget final : public Target {
  public:
    std::string name() const override { return "cpu"; }
    std::string hardware_kind() const override { return "cpu"; }
    std::string build_description() const override;
    std::string compiler_version() const override;
    bool confines_files() const override;
    BuildResult build(const std::string& op, const std::string& source_path, const std::string& out_dir,
                      double timeout_s) const override;
    std::unique_ptr<KernelSession> open_session(const std::string& op, const std::string& library_path,
                                                const SessionOptions& options) const override;
};

// Path of the hapbench-worker executable (next to the running hapbench binary, or
// $HAPBENCH_WORKER).
std::string worker_executable();

}  // namespace hb
