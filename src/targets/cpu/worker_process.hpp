// The harness's handle on one worker process: spawn it with its descriptors (control_page.hpp),
// pinned to its CPUs, with a scrubbed environment; exchange set-up lines; learn how it
// ended; kill it. The worker dies with the harness (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

#include "targets/cpu/protocol.hpp"
#include "targets/cpu/shared_region.hpp"
#include "targets/target.hpp"

namespace hb::cpu {

class WorkerProcess {
  public:
    // The regions the worker inherits: control page (read-write), inputs (read-only
    // descriptor), outputs and workspace (read-write).
    WorkerProcess(std::string worker_exe, std::string library, std::string op, SessionOptions options,
                  const SharedRegion& control, int inputs_read_only_fd, const SharedRegion& outputs);
    ~WorkerProcess();
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;

    // Spawns the worker and waits for its first event ("ready", or why not) until the
    // deadline. nullopt when none came (see exit_description / timed_out).
    std::optional<nlohmann::json> start(Clock::time_point deadline, bool& timed_out);
    bool running() const { return pid_ > 0; }
    pid_t pid() const { return pid_; }

    bool send(const nlohmann::json& message);
    // The next event line; nullopt when the worker died or the deadline passed.
    std::optional<nlohmann::json> receive(Clock::time_point deadline, bool& timed_out);
    // One byte on the arm pipe.
    bool arm();
    // Waits for the done byte or an event line (a fault report), whichever comes first:
    // 1 done, 0 an event is waiting (receive it), -1 the worker died, -2 the deadline passed.
    int wait_done(Clock::time_point deadline);

    void kill_now();
    // After the worker died: "killed by SIGSEGV" etc.; reaps the process.
    std::string exit_description();
    std::string log_tail(std::size_t bytes = 2000) const;
    // The signal that ended the worker, once exit_description has reaped it (0: none).
    int exit_signal() const { return exit_signal_; }

  private:
    std::string worker_exe_, library_, op_;
    SessionOptions options_;
    int control_fd_, inputs_fd_, outputs_fd_;
    pid_t pid_ = -1;
    int command_fd_ = -1, event_fd_ = -1, arm_fd_ = -1, done_fd_ = -1;
    std::unique_ptr<protocol::LineReader> events_;
    int exit_signal_ = 0;
};

}  // namespace hb::cpu
