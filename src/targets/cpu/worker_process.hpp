// The harness's handle on one worker process: spawn, talk, time out, kill, and the shared
// memory the case data travels through.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "targets/cpu/protocol.hpp"
#include "targets/target.hpp"

namespace hb {

class WorkerProcess {
  public:
    WorkerProcess(std::string worker_exe, std::string library, std::string op, SessionOptions options);
    ~WorkerProcess();
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;

    // Spawns the worker and waits for "ready" (or a load error) until the deadline.
    // Returns an empty string on success, else what went wrong.
    std::string start(Clock::time_point deadline);
    bool running() const { return pid_ > 0; }
    // SIGSTOP / SIGCONT to the worker (all its threads).
    void stop();
    void cont();

    bool send(const nlohmann::json& message);
    // The next event; nullopt when the worker died (see exit_description) or the deadline passed.
    std::optional<nlohmann::json> receive(Clock::time_point deadline, bool& timed_out);

    // Resizes the shared memory to `bytes` and maps it into the harness.
    char* map_shared(std::size_t bytes);
    void kill_now();
    // After the worker died: "killed by SIGSEGV" etc.; reaps the process.
    std::string exit_description();
    std::string log_tail(std::size_t bytes = 2000) const;
    // The event that ended a failed start (a sandbox violation while loading, a fault in a
    // static constructor), if the worker sent one.
    const std::optional<nlohmann::json>& start_event() const { return start_event_; }
    // The signal that ended the worker, once exit_description has reaped it (0: none).
    int exit_signal() const { return exit_signal_; }
    // Nanoseconds the worker spent setting up its sandbox, reported once (then 0).
    double take_setup_ns() {
        const double ns = setup_ns_;
        setup_ns_ = 0;
        return ns;
    }

  private:
    void unmap_shared();
    std::string worker_exe_, library_, op_;
    SessionOptions options_;
    pid_t pid_ = -1;
    int command_fd_ = -1;
    int event_fd_ = -1;
    int shm_fd_ = -1;
    char* shm_ = nullptr;
    std::size_t shm_bytes_ = 0;
    std::unique_ptr<protocol::LineReader> events_;
    std::optional<nlohmann::json> start_event_;
    int exit_signal_ = 0;
    double setup_ns_ = 0;
};

}  // namespace hb
