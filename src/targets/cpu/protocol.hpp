// The line protocol between the harness and a worker process.
//
// fd 3 carries commands (harness -> worker), fd 4 events (worker -> harness), one JSON
// object per line; fd 5 is a shared-memory file sized by the harness for each case, holding
// the case's inputs followed by its outputs. The worker's stdout and stderr go to a log.
//
// Per case: harness sends {"cmd":"case", ...layout, attrs, timing}; worker copies the
// inputs out, runs the correctness calls and answers {"event":"outputs", ...} (outputs now in
// shared memory) or {"event":"kernel_error"}. The harness then sends {"cmd":"time"} or
// {"cmd":"skip"}; for timing the worker sends {"event":"timing_plan","repeat":R}, then per
// timed call {"event":"timed","k":k,"ns":t} and waits for {"cmd":"keep"} (copy this call's
// outputs to shared memory, answer {"event":"kept"}) or {"cmd":"drop"}; it ends with
// {"event":"timing_done"}. A fault caught by the worker is {"event":"fault","kind":...}.
// Outputs of data-dependent length: "outputs" carries "written_lengths" (per output, null or
// the two correctness calls' reported lengths) and "kept" the timed call's ("written_lengths",
// per output, null or the length).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "suite/attr.hpp"

namespace hb::protocol {

constexpr int command_fd = 3;
constexpr int event_fd = 4;
constexpr int shared_memory_fd = 5;

// Where each tensor of a case lives in the shared memory.
struct TensorSlot {
    TensorSpec spec;
    std::size_t offset = 0;
};
struct ArgLayout {
    std::string name;
    bool is_list = false;
    bool present = true;
    std::vector<TensorSlot> tensors;
    bool variable_length = false;  // ArgSpec::variable_length: the kernel reports a written length
};
struct CaseLayout {
    std::vector<ArgLayout> inputs;
    std::vector<ArgLayout> outputs;
    std::size_t total_bytes = 0;
};

// Lays inputs then outputs out back to back, each tensor 64-byte aligned.
CaseLayout make_layout(const std::vector<ArgSpec>& inputs, const std::vector<ArgSpec>& outputs);

nlohmann::json to_json(const CaseLayout& layout);
CaseLayout layout_from_json(const nlohmann::json& j);
nlohmann::json attrs_to_json(const AttrMap& attrs);
AttrMap attrs_from_json(const nlohmann::json& j);

// Writes one JSON line; returns false when the peer is gone.
bool write_message(int fd, const nlohmann::json& message);

// Buffered line reader over a file descriptor.
class LineReader {
  public:
    explicit LineReader(int fd) : fd_(fd) {}
    // Blocks until a full line arrives; nullopt on end of file or error.
    std::optional<std::string> read_line();
    // Waits at most timeout_ms (negative: forever); sets timed_out when nothing came.
    std::optional<std::string> read_line(int timeout_ms, bool& timed_out);
    int fd() const { return fd_; }

  private:
    int fd_;
    std::string buffer_;
};

}  // namespace hb::protocol
