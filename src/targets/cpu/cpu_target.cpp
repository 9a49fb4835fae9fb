#include "targets/cpu/cpu_target.hpp"

#include <linux/landlock.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "targets/cpu/compiler.hpp"
#include "targets/cpu/object_check.hpp"
#include "targets/cpu/cpu_session.hpp"

namespace hb {

namespace fs = std::filesystem;

std::string worker_executable() {
    if (const char* env = std::getenv("HAPBENCH_WORKER"); env && *env) {
        // hapbench's own environment, not the kernel's fault: no case may be blamed for it.
        if (access(env, X_OK) != 0)
            throw Error("HAPBENCH_WORKER=" + std::string(env) + " is not an executable file: " + std::strerror(errno) +
                            " (unset it to use the hapbench-worker next to the hapbench binary)",
                        ExitCode::internal);
        return env;
    }
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        const auto candidate = fs::path(self).parent_path() / "hapbench-worker";
        if (fs::exists(candidate)) return candidate.string();
    }
    throw Error("cannot find hapbench-worker next to the hapbench binary (set HAPBENCH_WORKER)", ExitCode::internal);
}

std::string CpuTarget::build_description() const {
    std::string cmd;
    for (const auto& part : cpu_compile_command("<op>.cpp", "<op>.so")) cmd += (cmd.empty() ? "" : " ") + part;
    return cmd;
}

std::string CpuTarget::compiler_version() const { return cpu_compiler_version(); }

// The worker confines its files with Landlock (worker/sandbox.cpp), which the kernel has or not.
bool CpuTarget::confines_files() const {
    return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION) >= 1;
}

BuildResult CpuTarget::build(const std::string& op, const std::string& source_path, const std::string& out_dir,
                             double timeout_s) const {
    BuildResult b = compile_cpu_kernel(source_path, out_dir + "/" + op + ".so", timeout_s);
    if (!b.ok) return b;
    if (!exports_kernel_entry(b.library_path)) {
        // Found here, not when the worker loads it: the operator's state is compile_error.
        b.ok = false;
        // First in the log: the operator's message keeps only the log's beginning.
        b.log = source_path + " compiles but defines no hapbench_kernel: declare it `extern \"C\" HB_EXPORT int "
                "hapbench_kernel(const hb_call* call)` (include/hapbench/kernel.h)" + (b.log.empty() ? "" : "\n" + b.log);
        return b;
    }
    const auto check_start = Clock::now();
    ObjectCheck check = check_kernel_source(source_path);
    if (check.ok) {
        try {
            check = check_kernel_object(b.library_path);
        } catch (const Error& e) {
            check = ObjectCheck{false, b.library_path, e.what()};
        }
    }
    if (!check.ok) {
        b.rejected_symbol = check.symbol;
        b.rejection = check.reason;
    }
    b.check_seconds = std::chrono::duration<double>(Clock::now() - check_start).count();
    b.seconds += b.check_seconds;
    return b;
}

std::unique_ptr<KernelSession> CpuTarget::open_session(const std::string& op, const std::string& library_path,
                                                       const SessionOptions& options) const {
    return std::make_unique<cpu::CpuSession>(worker_executable(), op, library_path, options);
}

std::unique_ptr<Target> make_target(const std::string& name) {
    if (name == "cpu") return std::make_unique<CpuTarget>();
    throw Error("unknown target '" + name + "' (known: cpu; cuda and ascend are planned)");
}

}  // namespace hb
