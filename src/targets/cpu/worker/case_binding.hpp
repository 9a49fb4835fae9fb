// The worker's side of one case: the kernel call described from the harness's layout, its
// buffers in the worker's mappings of the harness's shared regions (inputs read-only, outputs
// and the workspace read-write, each followed by a guard page that faults), and the loop that
// serves the harness's calls. It neither times, copies, compares nor fingerprints anything:
// all of that happens in the harness, through its own mapping (docs/security.md).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel_call.hpp"
#include "targets/cpu/call_layout.hpp"
#include "targets/cpu/control_page.hpp"
#include "targets/cpu/worker/shared_mappings.hpp"

namespace hb::worker {

// The loaded kernel and how the worker runs it.
struct LoadedKernel {
    hb_kernel_fn kernel = nullptr;
    hb_workspace_fn workspace_query = nullptr;  // may be null: no workspace
    std::string op_name;
    int threads = 1;
};

class CaseBinding {
  public:
    // From the harness's {"cmd":"case", "inputs", "outputs", "attrs"}: the call with null
    // data pointers. Its buffers will lie in `mappings`, which outlive it (kept across cases).
    CaseBinding(const LoadedKernel& kernel, SharedMappings& mappings, const nlohmann::json& case_command);
    ~CaseBinding();
    CaseBinding(const CaseBinding&) = delete;
    CaseBinding& operator=(const CaseBinding&) = delete;

    // What the kernel asks for (hapbench_workspace_bytes on the shape-only call).
    std::uint64_t workspace_bytes();
    // Fits the mappings to `layout` (shared_mappings.hpp), at least `input_map_bytes` and
    // `output_map_bytes` long where a mapping is made anew (what the harness has mapped: room
    // for the session's larger cases), guards its pages and points the call into them.
    // Returns an error message, or "".
    std::string map(const cpu::CallLayout& layout, std::size_t input_map_bytes, std::size_t output_map_bytes,
                    cpu::ControlPage& page);
    // Serves calls from the arm pipe until the harness asks to leave (true) or goes away
    // (false).
    bool serve_calls(cpu::ControlPage& page);

  private:
    void bind_slot(std::uint32_t slot);
    void watch_faults(const char* slot);

    const LoadedKernel& kernel_;
    SharedMappings& mappings_;
    std::optional<KernelCall> call_;
    cpu::CallLayout layout_;
    std::uint32_t bound_slot_ = ~0u;
    std::vector<bool> populated_;  // input slots whose page tables are filled
};

}  // namespace hb::worker
