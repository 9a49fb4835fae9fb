// The status of one case (docs/results.md documents each value).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hb {

enum class CaseStatus {
    pass,                    // outputs pass the precision gate (and timing, when measured)
    precision_fail,          // outputs differ from the golden beyond the thresholds
    cached_or_stale_output,  // a verified timed call's outputs do not match its inputs
    impossible_time,         // correct, but measured faster than the hardware limit: audit
    compile_error,           // the operator file did not build, or lacks hapbench_kernel
    missing,                 // the submission has no file for this operator
    kernel_error,            // the kernel returned a non-zero code
    crash,                   // the worker died (signal, abort, exit)
    timeout,                 // the operator's time budget ran out
    out_of_bounds,           // a write into the guard page after an output or the workspace
    input_mutation,          // a write into an input (inputs are read-only during calls)
    output_unwritten,        // output elements were never written (inside the written prefix, for outputs of data-dependent length)
    wrong_length,            // an output of data-dependent length reports another length than the golden's
    length_over_capacity,    // an output of data-dependent length reports a negative length, none, or one beyond its capacity
    nondeterministic,        // two calls on identical inputs disagreed beyond the tolerance
    async_work,              // outputs changed after the call returned (work left running)
    delegation,              // the object calls a vendor library, dlopen/dlsym or raw syscall, or exports more than its entry points
    sandbox_violation,       // a system call outside the sandbox's allowlist, or forged harness messages
    resource_limit,          // the worker ran into its address-space, CPU-time or file-size limit
    // Keep not_run last: status_from_name walks the enum up to it.
    not_run,                 // not evaluated (operator not implemented by hapbench, --no-run)
};

std::string status_name(CaseStatus s);  // "PASS", "PRECISION_FAIL", ...
// The status named `name` (as status_name writes it); nullopt for any other string.
std::optional<CaseStatus> status_from_name(std::string_view name);
// Structural failures cost the case its compile credit (methodology 6).
bool is_structural_failure(CaseStatus s);
// Whether the outputs passed correctness (PASS and IMPOSSIBLE_TIME).
bool is_correct(CaseStatus s);

}  // namespace hb
