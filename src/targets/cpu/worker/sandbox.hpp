// The candidate worker's confinement (docs/security.md), complete before the kernel object
// is loaded, so it holds for its static constructors as for its calls:
//   - resource limits (address space, CPU time, file size, open files, no core files);
//   - no capabilities, no_new_privs;
//   - Landlock, where the running kernel has it: the worker may read only the kernel object,
//     the runtime libraries it has already loaded, /sys/devices/system/cpu and its own /proc
//     directory, and write no file at all (so no cache, golden, results file or other
//     process's /proc entry is reachable);
//   - one seccomp allowlist: threads but no processes, no sockets, no ptrace, files opened
//     read-only, no executable memory except the read-only, file-backed mappings the loader
//     makes (no PROT_EXEC in mprotect or pkey_mprotect, no anonymous executable mmap, never
//     writable and executable at once), no signal handlers and no signals except the
//     SIGABRT of abort(), no changing the CPU affinity the harness set.
// A refused call raises SIGSYS, which signal_report turns into SANDBOX_VIOLATION; a refused
// affinity change answers EPERM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hb::worker {

struct ResourceLimits {
    std::uint64_t address_space_bytes = 0;  // 0: unlimited
    double cpu_seconds = 0;                 // 0: unlimited
};

// Address space, CPU time, file size (the log), open files, no core files.
void apply_resource_limits(const ResourceLimits& limits);

// What restrict_files did: the Landlock ABI version used (0: none), or why not.
struct FileConfinement {
    int landlock_abi = 0;
    std::string note;
};

// Landlock: read-only access to `readable` (files or directories) and nothing else. Where
// the kernel lacks Landlock, returns abi 0 with the reason and leaves files unconfined.
FileConfinement restrict_files(const std::vector<std::string>& readable);

// Drops every capability and installs the seccomp filter. Returns an error message, or "".
std::string enter_sandbox();

// The files the worker's own runtime has loaded (libc, libstdc++, libgomp, ...), for
// restrict_files: the kernel object links against exactly these.
std::vector<std::string> loaded_libraries();

}  // namespace hb::worker
