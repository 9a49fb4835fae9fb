#include "targets/cpu/worker_process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "core/error.hpp"
#include "core/subprocess.hpp"

namespace hb {

WorkerProcess::WorkerProcess(std::string worker_exe, std::string library, std::string op, SessionOptions options)
    : worker_exe_(std::move(worker_exe)), library_(std::move(library)), op_(std::move(op)), options_(std::move(options)) {}

WorkerProcess::~WorkerProcess() {
    kill_now();
    unmap_shared();
    if (shm_fd_ >= 0) close(shm_fd_);
}

std::string WorkerProcess::start(Clock::time_point deadline) {
    int commands[2], events[2];
    if (pipe2(commands, O_CLOEXEC) != 0 || pipe2(events, O_CLOEXEC) != 0)
        throw Error("pipe failed: " + std::string(std::strerror(errno)), ExitCode::internal);
    if (shm_fd_ < 0) {
        shm_fd_ = memfd_create("hapbench-case", MFD_CLOEXEC);
        if (shm_fd_ < 0) throw Error("memfd_create failed: " + std::string(std::strerror(errno)), ExitCode::internal);
    }
    const std::string threads = std::to_string(options_.threads);
    const pid_t pid = fork();
    if (pid < 0) throw Error("fork failed: " + std::string(std::strerror(errno)), ExitCode::internal);
    if (pid == 0) {
        // Child: fixed descriptors, a log for stdout/stderr, a scrubbed environment, pinned.
        // Move the three channels out of the way first: a pipe may already sit on 3, 4 or 5.
        const int high_commands = fcntl(commands[0], F_DUPFD, 100);
        const int high_events = fcntl(events[1], F_DUPFD, 100);
        const int high_shm = fcntl(shm_fd_, F_DUPFD, 100);
        dup2(high_commands, protocol::command_fd);
        dup2(high_events, protocol::event_fd);
        dup2(high_shm, protocol::shared_memory_fd);
        const int log = open(options_.log_path.empty() ? "/dev/null" : options_.log_path.c_str(),
                             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log >= 0) {
            dup2(log, 1);
            dup2(log, 2);
        }
        const int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        for (int fd = 6; fd < 1024; ++fd) close(fd);
        if (!options_.cpus.empty()) {
            cpu_set_t set;
            CPU_ZERO(&set);
            for (int c : options_.cpus) CPU_SET(c, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        const std::string omp_threads = "OMP_NUM_THREADS=" + threads;
        const char* env[] = {"PATH=/usr/bin:/bin", omp_threads.c_str(), "OMP_PROC_BIND=close", "OMP_PLACES=cores",
                             "OMP_WAIT_POLICY=PASSIVE", "LC_ALL=C", nullptr};
        const std::string memory = std::to_string(options_.memory_limit_bytes);
        const std::string cpu = std::to_string(options_.cpu_limit_s);
        std::vector<const char*> args = {worker_exe_.c_str(), library_.c_str(), op_.c_str(), threads.c_str(),
                                         "--memory-limit", memory.c_str(), "--cpu-limit", cpu.c_str()};
        if (options_.sandbox) args.push_back("--sandbox");
        args.push_back(nullptr);
        execve(worker_exe_.c_str(), const_cast<char* const*>(args.data()), const_cast<char* const*>(env));
        std::fprintf(stderr, "cannot run %s: %s\n", worker_exe_.c_str(), std::strerror(errno));
        _exit(127);
    }
    close(commands[0]);
    close(events[1]);
    pid_ = pid;
    command_fd_ = commands[1];
    event_fd_ = events[0];
    events_ = std::make_unique<protocol::LineReader>(event_fd_);

    bool timed_out = false;
    start_event_.reset();
    auto ready = receive(deadline, timed_out);
    if (ready && ready->value("event", "") != "ready" && ready->value("event", "") != "load_error") {
        start_event_ = ready;
        const std::string why = "the worker reported " + ready->dump() + " while loading the kernel";
        exit_description();
        return why;
    }
    if (!ready) {
        std::string why = timed_out ? "the worker did not start before the time budget ran out" : "the worker " + exit_description() + " while loading the kernel";
        const auto tail = log_tail(600);
        if (!tail.empty()) why += ": " + tail;
        kill_now();
        return why;
    }
    setup_ns_ = ready->value("sandbox_setup_ns", 0.0);
    if (ready->value("event", "") == "load_error") {
        const std::string why = "cannot load the kernel: " + ready->value("message", "");
        kill_now();
        return why;
    }
    return "";
}

bool WorkerProcess::send(const nlohmann::json& message) {
    if (pid_ <= 0) return false;
    return protocol::write_message(command_fd_, message);
}

std::optional<nlohmann::json> WorkerProcess::receive(Clock::time_point deadline, bool& timed_out) {
    timed_out = false;
    if (!events_) return std::nullopt;
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left_ms <= 0) {
        timed_out = true;
        return std::nullopt;
    }
    auto line = events_->read_line(static_cast<int>(std::min<long long>(left_ms, INT32_MAX)), timed_out);
    if (!line) return std::nullopt;
    try {
        return nlohmann::json::parse(*line);
    } catch (const nlohmann::json::exception&) {
        return nlohmann::json{{"event", "garbled"}, {"message", line->substr(0, 200)}};
    }
}

char* WorkerProcess::map_shared(std::size_t bytes) {
    unmap_shared();
    if (ftruncate(shm_fd_, static_cast<off_t>(bytes)) != 0)
        throw Error("cannot size shared memory to " + std::to_string(bytes) + " bytes: " + std::strerror(errno), ExitCode::internal);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd_, 0);
    if (p == MAP_FAILED) throw Error("cannot map shared memory: " + std::string(std::strerror(errno)), ExitCode::internal);
    shm_ = static_cast<char*>(p);
    shm_bytes_ = bytes;
    return shm_;
}

void WorkerProcess::unmap_shared() {
    if (shm_) munmap(shm_, shm_bytes_);
    shm_ = nullptr;
    shm_bytes_ = 0;
}

void WorkerProcess::stop() {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void WorkerProcess::cont() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
}

void WorkerProcess::kill_now() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int status;
        waitpid(pid_, &status, 0);
        pid_ = -1;
    }
    if (command_fd_ >= 0) close(command_fd_);
    if (event_fd_ >= 0) close(event_fd_);
    command_fd_ = event_fd_ = -1;
    events_.reset();
}

std::string WorkerProcess::exit_description() {
    if (pid_ <= 0) return "was not running";
    int status = 0;
    // The event pipe closed: the process is exiting; wait briefly, then force it.
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

}  // namespace hb
