#include "core/status.hpp"

namespace hb {

std::string status_name(CaseStatus s) {
    switch (s) {
        case CaseStatus::pass: return "PASS";
        case CaseStatus::precision_fail: return "PRECISION_FAIL";
        case CaseStatus::cached_or_stale_output: return "CACHED_OR_STALE_OUTPUT";
        case CaseStatus::impossible_time: return "IMPOSSIBLE_TIME";
        case CaseStatus::compile_error: return "COMPILE_ERROR";
        case CaseStatus::missing: return "MISSING";
        case CaseStatus::kernel_error: return "KERNEL_ERROR";
        case CaseStatus::crash: return "CRASH";
        case CaseStatus::timeout: return "TIMEOUT";
        case CaseStatus::out_of_bounds: return "OUT_OF_BOUNDS";
        case CaseStatus::input_mutation: return "INPUT_MUTATION";
        case CaseStatus::output_unwritten: return "OUTPUT_UNWRITTEN";
        case CaseStatus::wrong_length: return "WRONG_LENGTH";
        case CaseStatus::length_over_capacity: return "LENGTH_OVER_CAPACITY";
        case CaseStatus::nondeterministic: return "NONDETERMINISTIC";
        case CaseStatus::async_work: return "ASYNC_WORK";
        case CaseStatus::delegation: return "DELEGATION";
        case CaseStatus::sandbox_violation: return "SANDBOX_VIOLATION";
        case CaseStatus::resource_limit: return "RESOURCE_LIMIT";
        case CaseStatus::not_run: return "NOT_RUN";
    }
    return "UNKNOWN";
}

std::optional<CaseStatus> status_from_name(std::string_view name) {
    // not_run is the enum's last value: every status lies in [pass, not_run].
    for (int k = 0; k <= static_cast<int>(CaseStatus::not_run); ++k) {
        const auto s = static_cast<CaseStatus>(k);
        if (status_name(s) == name) return s;
    }
    return std::nullopt;
}

bool is_structural_failure(CaseStatus s) {
    switch (s) {
        case CaseStatus::compile_error:
        case CaseStatus::missing:
        case CaseStatus::kernel_error:
        case CaseStatus::crash:
        case CaseStatus::timeout:
        case CaseStatus::out_of_bounds:
        case CaseStatus::input_mutation:
        case CaseStatus::output_unwritten:
        // The written length is the output's shape: a wrong one is a wrong output shape
        // (methodology section 3), and one outside [0, capacity] breaks the kernel ABI.
        case CaseStatus::wrong_length:
        case CaseStatus::length_over_capacity:
        case CaseStatus::async_work:
        case CaseStatus::delegation:
        case CaseStatus::sandbox_violation:
        case CaseStatus::resource_limit:
        case CaseStatus::not_run: return true;
        default: return false;
    }
}

bool is_correct(CaseStatus s) { return s == CaseStatus::pass || s == CaseStatus::impossible_time; }

}  // namespace hb
