// The candidate worker's confinement (docs/security.md): resource limits, no capabilities,
// and a seccomp allowlist of system calls, in two stages. Stage one, before the kernel
// object is loaded (its static constructors run at load): what loading and running need,
// with files opened read-only, threads but no processes, no sockets, no ptrace, no
// writable-and-executable memory. Stage two, once it is loaded: no new executable memory at
// all. A refused call raises SIGSYS, which signal_report turns into SANDBOX_VIOLATION.
#pragma once

#include <cstdint>
#include <string>

namespace hb::worker {

struct ResourceLimits {
    std::uint64_t address_space_bytes = 0;  // 0: unlimited
    double cpu_seconds = 0;                 // 0: unlimited
};

// Address space, CPU time, file size (the log), open files, no core files.
void apply_resource_limits(const ResourceLimits& limits);

// Drops every capability and installs stage one. Returns an error message, or "".
std::string enter_sandbox();
// Installs stage two. Returns an error message, or "".
std::string forbid_new_code();

}  // namespace hb::worker
