// Checks on a compiled kernel object before any of its code runs (docs/security.md):
// what it imports must come from the C and C++ runtime, libm, OpenMP or pthreads, less the
// entry points to other code (dlopen and friends, raw syscall); what it exports must be its
// kernel entry points only; its source may not include a vendor library's headers.
// A failure is the DELEGATION status, with the offending symbol or header named.
#pragma once

#include <string>

namespace hb {

struct ObjectCheck {
    bool ok = true;
    std::string symbol;  // the offending symbol, library or header
    std::string reason;  // one sentence for the report
};

ObjectCheck check_kernel_source(const std::string& source_path);
ObjectCheck check_kernel_object(const std::string& object_path);

// Whether the object exports hapbench_kernel. One that does not is a compile error of the
// operator (docs/results.md), found before any case runs.
bool exports_kernel_entry(const std::string& object_path);

}  // namespace hb
