#include "targets/cpu/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "core/error.hpp"
#include "core/subprocess.hpp"
#include "targets/cpu/control_page.hpp"

namespace hb::cpu {

namespace {

int milliseconds_left(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, INT32_MAX));
}

}  // namespace

WorkerProcess::WorkerProcess(std::string worker_exe, std::string library, std::string op, SessionOptions options,
                             const SharedRegion& control, int inputs_read_only_fd, const SharedRegion& outputs)
    : worker_exe_(std::move(worker_exe)), library_(std::move(library)), op_(std::move(op)), options_(std::move(options)),
      control_fd_(control.fd()), inputs_fd_(inputs_read_only_fd), outputs_fd_(outputs.fd()) {}

WorkerProcess::~WorkerProcess() { kill_now(); }

std::optional<nlohmann::json> WorkerProcess::start(Clock::time_point deadline, bool& timed_out) {
    int commands[2], events[2], arms[2], dones[2];
    if (pipe2(commands, O_CLOEXEC) != 0 || pipe2(events, O_CLOEXEC) != 0 || pipe2(arms, O_CLOEXEC) != 0 ||
        pipe2(dones, O_CLOEXEC) != 0)
        throw Error("pipe failed: " + std::string(std::strerror(errno)), ExitCode::internal);
    const std::string threads = std::to_string(options_.threads);
    const std::string memory = std::to_string(options_.memory_limit_bytes);
    const std::string cpu_limit = std::to_string(options_.cpu_limit_s);
    const std::string omp_threads = "OMP_NUM_THREADS=" + threads;
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw Error("fork failed: " + std::string(std::strerror(errno)), ExitCode::internal);
    if (pid == 0) {
        // Child: dies with the harness; fixed descriptors; a log for stdout/stderr; pinned.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        // Move every channel above the fixed numbers first: a pipe may already sit on one.
        const int sources[] = {commands[0], events[1], control_fd_, inputs_fd_, outputs_fd_, arms[0], dones[1]};
        const int targets[] = {command_fd, event_fd, control_fd, input_region_fd, output_region_fd, arm_fd, done_fd};
        int high[7];
        for (int i = 0; i < 7; ++i) high[i] = fcntl(sources[i], F_DUPFD, 100);
        for (int i = 0; i < 7; ++i) dup2(high[i], targets[i]);
        const int log = open(options_.log_path.empty() ? "/dev/null" : options_.log_path.c_str(),
                             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log >= 0) {
            dup2(log, 1);
            dup2(log, 2);
        }
        const int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        for (int fd = last_channel_fd + 1; fd < 1024; ++fd) close(fd);
        if (!options_.cpus.empty()) {
            cpu_set_t set;
            CPU_ZERO(&set);
            for (int c : options_.cpus) CPU_SET(c, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        // Inside the allotment the harness binds the worker's threads one CPU each before every
        // call (thread_placement.hpp); a sandboxed worker cannot change its affinity itself.
        const char* env[] = {"PATH=/usr/bin:/bin", omp_threads.c_str(), "OMP_WAIT_POLICY=PASSIVE", "LC_ALL=C", nullptr};
        std::vector<const char*> args = {worker_exe_.c_str(), library_.c_str(), op_.c_str(), threads.c_str(),
                                         "--memory-limit", memory.c_str(), "--cpu-limit", cpu_limit.c_str()};
        if (options_.sandbox) args.push_back("--sandbox");
        args.push_back(nullptr);
        execve(worker_exe_.c_str(), const_cast<char* const*>(args.data()), const_cast<char* const*>(env));
        std::fprintf(stderr, "cannot run %s: %s\n", worker_exe_.c_str(), std::strerror(errno));
        _exit(127);
    }
    close(commands[0]);
    close(events[1]);
    close(arms[0]);
    close(dones[1]);
    pid_ = pid;
    command_fd_ = commands[1];
    event_fd_ = events[0];
    arm_fd_ = arms[1];
    done_fd_ = dones[0];
    events_ = std::make_unique<protocol::LineReader>(event_fd_);
    return receive(deadline, timed_out);
}

bool WorkerProcess::send(const nlohmann::json& message) {
    if (pid_ <= 0) return false;
    return protocol::write_message(command_fd_, message);
}

std::optional<nlohmann::json> WorkerProcess::receive(Clock::time_point deadline, bool& timed_out) {
    timed_out = false;
    if (!events_) return std::nullopt;
    if (Clock::now() >= deadline) {
        timed_out = true;
        return std::nullopt;
    }
    auto line = events_->read_line(milliseconds_left(deadline), timed_out);
    if (!line) return std::nullopt;
    try {
        auto event = nlohmann::json::parse(*line);
        if (!event.is_object()) throw nlohmann::json::type_error::create(302, "not an object", nullptr);
        return event;
    } catch (const nlohmann::json::exception&) {
        return nlohmann::json{{"event", "garbled"}, {"message", line->substr(0, 200)}};
    }
}

bool WorkerProcess::arm() {
    const char byte = 1;
    return pid_ > 0 && ::write(arm_fd_, &byte, 1) == 1;
}

int WorkerProcess::wait_done(Clock::time_point deadline) {
    for (;;) {
        pollfd fds[2] = {{done_fd_, POLLIN, 0}, {event_fd_, POLLIN, 0}};
        const int left = milliseconds_left(deadline);
        const int ready = ::poll(fds, 2, left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) return Clock::now() >= deadline ? -2 : -2;
        if (fds[1].revents & (POLLIN | POLLHUP)) return 0;  // a fault report (or the end) comes first
        if (fds[0].revents & POLLIN) {
            char byte;
            if (::read(done_fd_, &byte, 1) == 1) return 1;
        }
        if (fds[0].revents & (POLLHUP | POLLERR)) return -1;
    }
}

void WorkerProcess::kill_now() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int status;
        waitpid(pid_, &status, 0);
        pid_ = -1;
    }
    for (int* fd : {&command_fd_, &event_fd_, &arm_fd_, &done_fd_}) {
        if (*fd >= 0) close(*fd);
        *fd = -1;
    }
    events_.reset();
}

std::string WorkerProcess::exit_description() {
    if (pid_ <= 0) return "was not running";
    int status = 0;
    // The channels closed: the process is exiting; wait briefly, then force it.
    for (int i = 0; i < 200; ++i) {
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            exit_signal_ = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
            kill_now();
            return describe_exit(status);
        }
        usleep(5000);
    }
    ::kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    kill_now();
    return "closed its channel and was killed";
}

std::string WorkerProcess::log_tail(std::size_t bytes) const {
    if (options_.log_path.empty()) return "";
    std::ifstream in(options_.log_path, std::ios::binary | std::ios::ate);
    if (!in) return "";
    const auto size = static_cast<std::size_t>(in.tellg());
    const auto start = size > bytes ? size - bytes : 0;
    in.seekg(static_cast<std::streamoff>(start));
    std::string text(size - start, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

}  // namespace hb::cpu
