#include "targets/cpu/worker/sandbox.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "targets/cpu/protocol.hpp"

namespace hb::worker {

namespace {

void set_limit(int resource, rlim_t soft, rlim_t hard) {
    rlimit r{soft, hard};
    setrlimit(resource, &r);
}

// Root in the worker could read the harness's memory through /proc (the harness makes
// itself non-dumpable, which only CAP_SYS_PTRACE overrides) or open root-only files.
std::string drop_capabilities() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (::syscall(SYS_capset, &header, data) != 0) return std::string("capset failed: ") + std::strerror(errno);
    return "";
}

class Filter {
  public:
    explicit Filter(std::uint32_t default_action) : ctx_(seccomp_init(default_action)) {}
    ~Filter() {
        if (ctx_) seccomp_release(ctx_);
    }
    Filter(const Filter&) = delete;
    Filter& operator=(const Filter&) = delete;

    void allow(int syscall_number) { add(SCMP_ACT_ALLOW, syscall_number, 0, nullptr); }
    template <typename... Cmp>
    void rule(std::uint32_t action, int syscall_number, Cmp... cmps) {
        const scmp_arg_cmp args[] = {cmps...};
        add(action, syscall_number, sizeof...(cmps), args);
    }
    std::string load(const char* stage) {
        if (!ctx_) return std::string(stage) + ": seccomp_init failed";
        if (!error_.empty()) return std::string(stage) + ": " + error_;
        const int rc = seccomp_load(ctx_);
        return rc == 0 ? "" : std::string(stage) + ": seccomp_load failed: " + std::strerror(-rc);
    }

  private:
    void add(std::uint32_t action, int syscall_number, unsigned count, const scmp_arg_cmp* args) {
        if (!ctx_ || !error_.empty()) return;
        const int rc = seccomp_rule_add_array(ctx_, action, syscall_number, count, args);
        if (rc != 0 && rc != -EEXIST)
            error_ = "rule for " + std::to_string(syscall_number) + ": " + std::strerror(-rc);
    }
    scmp_filter_ctx ctx_;
    std::string error_;
};

// Signals the worker's reports depend on; a kernel may not take them over.
bool reserved_signal(int sig) { return sig == SIGSYS || sig == SIGSEGV || sig == SIGBUS || sig == SIGXCPU || sig == SIGXFSZ; }

// mmap and mprotect: every protection except writable-and-executable at once.
void allow_without_write_exec(Filter& f, int syscall_number) {
    const auto wx = static_cast<scmp_datum_t>(PROT_WRITE | PROT_EXEC);
    for (scmp_datum_t prot : {scmp_datum_t{0}, scmp_datum_t{PROT_WRITE}, scmp_datum_t{PROT_EXEC}})
        f.rule(SCMP_ACT_ALLOW, syscall_number, SCMP_A2(SCMP_CMP_MASKED_EQ, wx, prot));
}

}  // namespace

void apply_resource_limits(const ResourceLimits& limits) {
    if (limits.address_space_bytes) set_limit(RLIMIT_AS, limits.address_space_bytes, limits.address_space_bytes);
    if (limits.cpu_seconds > 0) {
        const auto soft = static_cast<rlim_t>(limits.cpu_seconds);
        set_limit(RLIMIT_CPU, soft, soft + 5);
    }
    set_limit(RLIMIT_FSIZE, 64ull << 20, 64ull << 20);  // the log: what a kernel prints
    set_limit(RLIMIT_NOFILE, 64, 64);
    set_limit(RLIMIT_CORE, 0, 0);
}

std::string enter_sandbox() {
    if (getuid() == 0 || geteuid() == 0)
        if (auto e = drop_capabilities(); !e.empty()) return e;

    Filter f(SCMP_ACT_TRAP);
    // Memory, threads, time, synchronization, signals for the worker's own use.
    for (int nr : {SCMP_SYS(read), SCMP_SYS(readv), SCMP_SYS(pread64), SCMP_SYS(write), SCMP_SYS(writev),
                   SCMP_SYS(lseek), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(stat),
                   SCMP_SYS(lstat), SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(readlink),
                   SCMP_SYS(readlinkat), SCMP_SYS(getcwd), SCMP_SYS(getdents64), SCMP_SYS(fcntl), SCMP_SYS(dup),
                   SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise), SCMP_SYS(mincore),
                   SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(get_robust_list), SCMP_SYS(rseq),
                   SCMP_SYS(set_tid_address), SCMP_SYS(arch_prctl), SCMP_SYS(exit), SCMP_SYS(exit_group),
                   SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack), SCMP_SYS(restart_syscall),
                   SCMP_SYS(sched_getaffinity), SCMP_SYS(sched_setaffinity), SCMP_SYS(sched_yield),
                   SCMP_SYS(sched_getparam), SCMP_SYS(sched_getscheduler), SCMP_SYS(sched_get_priority_max),
                   SCMP_SYS(sched_get_priority_min), SCMP_SYS(getcpu), SCMP_SYS(getpid), SCMP_SYS(gettid),
                   SCMP_SYS(getppid), SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
                   SCMP_SYS(getresuid), SCMP_SYS(getresgid), SCMP_SYS(uname), SCMP_SYS(sysinfo), SCMP_SYS(getrusage),
                   SCMP_SYS(times), SCMP_SYS(getrlimit), SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres),
                   SCMP_SYS(gettimeofday), SCMP_SYS(time), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
                   SCMP_SYS(getrandom), SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(membarrier)})
        f.allow(nr);

    // Files: read-only opens only (the dynamic loader, /sys and /proc reads of the runtime).
    const auto write_flags = static_cast<scmp_datum_t>(O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND);
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(openat), SCMP_A2(SCMP_CMP_MASKED_EQ, write_flags, O_RDONLY));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(open), SCMP_A1(SCMP_CMP_MASKED_EQ, write_flags, O_RDONLY));
    // The harness channel (fds 3, 4, 5) may be neither closed nor replaced.
    for (int nr : {SCMP_SYS(close)}) {
        f.rule(SCMP_ACT_ALLOW, nr, SCMP_A0(SCMP_CMP_LT, protocol::command_fd));
        f.rule(SCMP_ACT_ALLOW, nr, SCMP_A0(SCMP_CMP_GT, protocol::shared_memory_fd));
    }
    for (int nr : {SCMP_SYS(dup2), SCMP_SYS(dup3)}) {
        f.rule(SCMP_ACT_ALLOW, nr, SCMP_A1(SCMP_CMP_LT, protocol::command_fd));
        f.rule(SCMP_ACT_ALLOW, nr, SCMP_A1(SCMP_CMP_GT, protocol::shared_memory_fd));
    }
    // Memory: never writable and executable at once.
    allow_without_write_exec(f, SCMP_SYS(mmap));
    allow_without_write_exec(f, SCMP_SYS(mprotect));
    // Threads, not processes; clone3's flags sit in memory a filter cannot read, so it
    // answers ENOSYS and the C library falls back to clone.
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(clone), SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    f.rule(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3));
    // Signals: to this process only, and never the ones the worker reports with.
    const auto self = static_cast<scmp_datum_t>(getpid());
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(tgkill), SCMP_A0(SCMP_CMP_EQ, self));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(kill), SCMP_A0(SCMP_CMP_EQ, self));
    for (int sig = 1; sig < 65; ++sig)
        if (!reserved_signal(sig)) f.rule(SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(sig)));
    // Reading limits (pthread_create asks for the stack size), not changing them.
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), SCMP_A2(SCMP_CMP_EQ, 0));
    // isatty() on the log, thread names.
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(ioctl), SCMP_A1(SCMP_CMP_EQ, TCGETS));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(prctl), SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(prctl), SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
    // Stage two is added after loading; adding filters can only narrow what is allowed.
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(prctl), SCMP_A0(SCMP_CMP_EQ, PR_SET_NO_NEW_PRIVS));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(seccomp), SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER));
    return f.load("sandbox stage 1");
}

std::string forbid_new_code() {
    Filter f(SCMP_ACT_ALLOW);
    const auto x = static_cast<scmp_datum_t>(PROT_EXEC);
    f.rule(SCMP_ACT_TRAP, SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, x, x));
    f.rule(SCMP_ACT_TRAP, SCMP_SYS(mprotect), SCMP_A2(SCMP_CMP_MASKED_EQ, x, x));
    f.rule(SCMP_ACT_TRAP, SCMP_SYS(pkey_mprotect), SCMP_A2(SCMP_CMP_MASKED_EQ, x, x));
    f.rule(SCMP_ACT_TRAP, SCMP_SYS(seccomp));
    return f.load("sandbox stage 2");
}

}  // namespace hb::worker
