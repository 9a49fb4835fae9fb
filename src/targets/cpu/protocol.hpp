// The line channels between the harness and a worker: one JSON object per line, commands on
// fd 3 (harness -> worker), events on fd 4 (worker -> harness); the descriptors and the
// doorbell that runs the calls are in control_page.hpp. Set-up of a case:
//   {"cmd":"case", inputs, outputs, attrs}  -> {"event":"workspace","bytes":N}
//   {"cmd":"map", layout}                   -> {"event":"mapped"}
//   {"cmd":"calls"}                         -> the worker serves doorbell calls until "leave"
//   {"cmd":"exit"}
// and at any time {"event":"fault"|"sandbox_violation"|"resource_limit", ...} before the
// worker dies. The events come from a process the kernel controls: the harness bounds
// their length and treats their content as claims, not facts.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "core/attr.hpp"

namespace hb::protocol {

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
    // A line longer than this is garbage (a kernel writing into the channel): read_line
    // returns it cut, and the harness treats it as garbled.
    static constexpr std::size_t max_line_bytes = 1 << 16;

  private:
    int fd_;
    std::string buffer_;
};

}  // namespace hb::protocol
