#include "targets/cpu/worker/sandbox.hpp"

#include <fcntl.h>
#include <link.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "targets/cpu/control_page.hpp"

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

// ---- Landlock ------------------------------------------------------------------------------
// Debian 12's kernel headers (6.1) stop at ABI 2; the rights and fields of later ABIs are
// spelled out here so that a newer running kernel is used to the full.
constexpr std::uint64_t fs_abi1 = (1ULL << 13) - 1;  // EXECUTE .. MAKE_SYM
constexpr std::uint64_t fs_refer = 1ULL << 13;       // ABI 2
constexpr std::uint64_t fs_truncate = 1ULL << 14;    // ABI 3
constexpr std::uint64_t fs_ioctl_dev = 1ULL << 15;   // ABI 5
constexpr std::uint64_t scope_abstract_unix_socket = 1ULL << 0;  // ABI 6
constexpr std::uint64_t scope_signal = 1ULL << 1;                // ABI 6

struct RulesetAttr {
    std::uint64_t handled_access_fs;
    std::uint64_t handled_access_net;  // ABI 4
    std::uint64_t scoped;              // ABI 6
};

struct PathBeneathAttr {
    std::uint64_t allowed_access;
    std::int32_t parent_fd;
} __attribute__((packed));

std::uint64_t handled_fs_rights(int abi) {
    std::uint64_t rights = fs_abi1;
    if (abi >= 2) rights |= fs_refer;
    if (abi >= 3) rights |= fs_truncate;
    if (abi >= 5) rights |= fs_ioctl_dev;
    return rights;
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
    std::string load() {
        if (!ctx_) return "seccomp_init failed";
        if (!error_.empty()) return error_;
        const int rc = seccomp_load(ctx_);
        return rc == 0 ? "" : std::string("seccomp_load failed: ") + std::strerror(-rc);
    }

  private:
    void add(std::uint32_t action, int syscall_number, unsigned count, const scmp_arg_cmp* args) {
        if (!ctx_ || !error_.empty()) return;
        const int rc = seccomp_rule_add_array(ctx_, action, syscall_number, count, args);
        if (rc != 0 && rc != -EEXIST) error_ = "rule for " + std::to_string(syscall_number) + ": " + std::strerror(-rc);
    }
    scmp_filter_ctx ctx_;
    std::string error_;
};

int collect_library(dl_phdr_info* info, size_t, void* data) {
    auto* paths = static_cast<std::vector<std::string>*>(data);
    if (info->dlpi_name && *info->dlpi_name == '/') paths->push_back(info->dlpi_name);
    return 0;
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

std::vector<std::string> loaded_libraries() {
    std::vector<std::string> paths;
    dl_iterate_phdr(collect_library, &paths);
    return paths;
}

FileConfinement restrict_files(const std::vector<std::string>& readable) {
    FileConfinement result;
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) {
        result.note = std::string("Landlock is not available in this kernel (") + std::strerror(errno) + ")";
        return result;
    }
    RulesetAttr attr{};
    attr.handled_access_fs = handled_fs_rights(static_cast<int>(abi));
    std::size_t attr_size = sizeof(std::uint64_t);
    if (abi >= 6) {
        // Signals to processes outside the worker and abstract unix sockets are refused too.
        attr.scoped = scope_signal | scope_abstract_unix_socket;
        attr_size = sizeof(RulesetAttr);
    }
    const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0));
    if (ruleset < 0) {
        result.note = std::string("landlock_create_ruleset failed: ") + std::strerror(errno);
        return result;
    }
    const std::uint64_t read_file = LANDLOCK_ACCESS_FS_READ_FILE;
    const std::uint64_t read_dir = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    for (const auto& path : readable) {
        const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
        if (fd < 0) continue;  // absent on this machine: nothing to allow
        struct stat st {};
        fstat(fd, &st);
        PathBeneathAttr rule{S_ISDIR(st.st_mode) ? read_dir : read_file, fd};
        const long rc = ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        const int saved = errno;
        close(fd);
        if (rc != 0) {
            close(ruleset);
            result.note = "landlock_add_rule for " + path + " failed: " + std::strerror(saved);
            return result;
        }
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        result.note = std::string("landlock_restrict_self failed: ") + std::strerror(errno);
        close(ruleset);
        return result;
    }
    close(ruleset);
    result.landlock_abi = static_cast<int>(abi);
    return result;
}

std::string enter_sandbox() {
    if (getuid() == 0 || geteuid() == 0)
        if (auto e = drop_capabilities(); !e.empty()) return e;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return std::string("no_new_privs failed: ") + std::strerror(errno);

    Filter f(SCMP_ACT_TRAP);
    // Memory, threads, time, synchronization, reading open descriptors and files.
    for (int nr : {SCMP_SYS(read), SCMP_SYS(readv), SCMP_SYS(pread64), SCMP_SYS(write), SCMP_SYS(writev),
                   SCMP_SYS(lseek), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(stat),
                   SCMP_SYS(lstat), SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(readlink),
                   SCMP_SYS(readlinkat), SCMP_SYS(getcwd), SCMP_SYS(getdents64), SCMP_SYS(fcntl), SCMP_SYS(dup),
                   SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mincore), SCMP_SYS(futex),
                   SCMP_SYS(set_robust_list), SCMP_SYS(get_robust_list), SCMP_SYS(rseq), SCMP_SYS(set_tid_address),
                   SCMP_SYS(arch_prctl), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigprocmask),
                   SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack), SCMP_SYS(restart_syscall),
                   SCMP_SYS(sched_getaffinity), SCMP_SYS(sched_yield), SCMP_SYS(sched_getparam),
                   SCMP_SYS(sched_getscheduler), SCMP_SYS(sched_get_priority_max), SCMP_SYS(sched_get_priority_min),
                   SCMP_SYS(getcpu), SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getppid), SCMP_SYS(getuid),
                   SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getresuid), SCMP_SYS(getresgid),
                   SCMP_SYS(uname), SCMP_SYS(sysinfo), SCMP_SYS(getrusage), SCMP_SYS(times), SCMP_SYS(getrlimit),
                   SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(gettimeofday), SCMP_SYS(time),
                   SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep), SCMP_SYS(getrandom), SCMP_SYS(poll),
                   SCMP_SYS(ppoll), SCMP_SYS(membarrier)})
        f.allow(nr);

    // Files: read-only opens only (the loader and the runtime read libraries, /proc and /sys;
    // Landlock narrows which).
    const auto write_flags = static_cast<scmp_datum_t>(O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND);
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(openat), SCMP_A2(SCMP_CMP_MASKED_EQ, write_flags, O_RDONLY));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(open), SCMP_A1(SCMP_CMP_MASKED_EQ, write_flags, O_RDONLY));
    // The harness's descriptors may be neither closed nor replaced.
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(close), SCMP_A0(SCMP_CMP_LT, cpu::command_fd));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(close), SCMP_A0(SCMP_CMP_GT, cpu::last_channel_fd));
    for (int nr : {SCMP_SYS(dup2), SCMP_SYS(dup3)}) {
        f.rule(SCMP_ACT_ALLOW, nr, SCMP_A1(SCMP_CMP_LT, cpu::command_fd));
        f.rule(SCMP_ACT_ALLOW, nr, SCMP_A1(SCMP_CMP_GT, cpu::last_channel_fd));
    }
    // Memory. Executable mappings only as the loader makes them: read-only, from a file.
    const auto exec = static_cast<scmp_datum_t>(PROT_EXEC);
    const auto write_exec = static_cast<scmp_datum_t>(PROT_WRITE | PROT_EXEC);
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, exec, 0));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, write_exec, exec),
           SCMP_A3(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(MAP_ANONYMOUS), 0));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(mprotect), SCMP_A2(SCMP_CMP_MASKED_EQ, exec, 0));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(pkey_mprotect), SCMP_A2(SCMP_CMP_MASKED_EQ, exec, 0));
    // Freeing pages of a shared mapping would zero the harness's view of them.
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(madvise), SCMP_A2(SCMP_CMP_NE, static_cast<scmp_datum_t>(MADV_REMOVE)));
    // Threads, not processes; clone3's flags sit in memory a filter cannot read, so it
    // answers ENOSYS and the C library falls back to clone.
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(clone), SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    f.rule(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3));
    // The CPUs the harness pinned the worker to are the kernel's allotment.
    f.rule(SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setaffinity));
    // No signal handlers (rt_sigaction is not allowed at all: the worker installed its own
    // before this filter) and no signals, except abort()'s SIGABRT to itself, whose default
    // action ends the worker (CRASH).
    const auto self = static_cast<scmp_datum_t>(getpid());
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(tgkill), SCMP_A0(SCMP_CMP_EQ, self),
           SCMP_A2(SCMP_CMP_EQ, static_cast<scmp_datum_t>(SIGABRT)));
    // Reading limits (pthread_create asks for the stack size), not changing them.
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), SCMP_A2(SCMP_CMP_EQ, 0));
    // isatty() on the log, thread names.
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(ioctl), SCMP_A1(SCMP_CMP_EQ, TCGETS));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(prctl), SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
    f.rule(SCMP_ACT_ALLOW, SCMP_SYS(prctl), SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
    return f.load();
}

}  // namespace hb::worker
