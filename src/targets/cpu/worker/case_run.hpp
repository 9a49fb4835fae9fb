// One case in the worker: the case's shared memory, the worker's own copies of its inputs
// and outputs (each followed by a guard page), the workspace and the kernel call; the two
// correctness calls and, when the harness asks, the warmup and timed calls. The messages
// are those of protocol.hpp; the checks are those of docs/security.md.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer.hpp"
#include "core/kernel_call.hpp"
#include "core/tensor.hpp"
#include "targets/cpu/protocol.hpp"

namespace hb::worker {

// The loaded kernel and how the worker runs it.
struct LoadedKernel {
    hb_kernel_fn kernel = nullptr;
    hb_workspace_fn workspace_query = nullptr;  // may be null: no workspace
    std::string op_name;
    int threads = 1;
    bool sandbox = false;
};

class CaseRun {
  public:
    // Maps the shared memory and copies the inputs out of it; see mapped().
    CaseRun(const LoadedKernel& kernel, const nlohmann::json& case_command);
    ~CaseRun();
    CaseRun(const CaseRun&) = delete;
    CaseRun& operator=(const CaseRun&) = delete;

    // False when the shared memory could not be mapped (nothing else was set up).
    bool mapped() const { return shm_ != nullptr; }

    // The two correctness calls; reports {"event":"outputs"} (the first call's outputs now
    // in shared memory) or {"event":"kernel_error"}. False after a kernel error.
    bool run_correctness();

    // Warmup and timed calls under `timing` ({warmup, min_repeat, max_repeat, target_s,
    // pool_bytes}), answering the harness's keep/drop after each. False when the harness
    // closed the command channel (the worker should end).
    bool run_timing(protocol::LineReader& commands, const nlohmann::json& timing);

  private:
    // One call on the current inputs, read-only while it runs: {return code, ns}.
    std::pair<int, double> call_once();
    void report_kernel_error(int rc, const char* phase);

    const LoadedKernel& kernel_;
    protocol::CaseLayout layout_;
    char* shm_ = nullptr;
    std::vector<Arg> inputs_;
    std::vector<Arg> outputs_;
    std::optional<KernelCall> call_;
    Buffer workspace_;
    std::uint64_t workspace_bytes_ = 0;
    double first_call_ns_ = 0;
};

}  // namespace hb::worker
