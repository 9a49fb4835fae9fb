// The interface every target (cpu now; cuda and ascend later) implements: build a
// submission's operator file, and run single calls of it in an isolated process that the
// harness times from outside. Everything above the target (measure, eval) talks to it only
// through this header: the target owns the clock of a call (the harness's own, around the
// call's release and its completion) and the checks that the process the kernel runs in
// went idle when the call said it was done; the caller owns what is in the buffers.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "ops/problem.hpp"

namespace hb {

using Clock = std::chrono::steady_clock;

struct BuildResult {
    bool ok = false;
    std::string library_path;
    std::string command;  // the exact compiler command line
    std::string log;      // compiler output (tail)
    double seconds = 0;
    // Built, but refused before running (docs/security.md): the offending symbol or header
    // and why. Empty when the object may run.
    std::string rejected_symbol;
    std::string rejection;
    double check_seconds = 0;  // the object check's share of `seconds`
};

enum class RunOutcome {
    ok, kernel_error, crash, timeout, out_of_bounds, input_mutation, load_error, async_work, sandbox_violation,
    resource_limit
};

// The buffers of a loaded case as the harness sees them: `slots` copies of the inputs (a
// call names the slot it reads), the outputs and the workspace the kernel asked for.
struct CaseBuffers {
    std::vector<std::vector<ArgView>> input_slots;
    std::vector<ArgView> outputs;
    char* workspace = nullptr;
    std::uint64_t workspace_bytes = 0;
};

struct CallResult {
    RunOutcome outcome = RunOutcome::ok;
    std::string message;  // what went wrong, for the report
    int rc = 0;           // the kernel's return code (outcome kernel_error when non-zero)
    // The harness's clock from releasing the call to seeing it done, in ns. It includes
    // the doorbell's round trip, which null calls measure.
    double window_ns = 0;
    // Per output argument, what a variable-length output reported (-1: nothing).
    std::vector<std::int64_t> written_lengths;
    double worker_call_ns = 0;  // the worker's own measure: diagnostic, never trusted
    // The worker used more CPU than its loop may in the moment after this call (outputs
    // unchanged), or, for previous_unsettled, between the previous call and this one. Such a
    // call's time is not used: work may have run outside the window that timed it. A session
    // turns them into async_work once they are no longer rare (settle_check.hpp).
    bool unsettled = false;
    bool previous_unsettled = false;
};

// Facts about a session's isolation, for the results.
struct SessionFacts {
    bool sandboxed = false;
    int landlock_abi = 0;  // 0: files were not confined (see landlock_note)
    std::string landlock_note;
    int workers_started = 0;
    double setup_ns_total = 0;  // sandbox set-up in the workers, summed
};

enum class CallCheck { quick, thorough };

class KernelSession {
  public:
    virtual ~KernelSession() = default;
    // Loads a case with `input_slots` copies of its inputs: the worker describes the call,
    // asks the kernel for its workspace and maps the buffers. The outcome says why not.
    virtual CallResult load_case(const Problem& problem, int input_slots, Clock::time_point deadline) = 0;
    virtual const CaseBuffers& buffers() const = 0;
    // One call on input slot `slot`, timed by the harness, then checked: the outputs must be
    // unchanged a moment after the worker said it was done (outcome async_work otherwise), and
    // the worker idle then and between calls (a call after which it was not is `unsettled`;
    // async_work once unsettled calls are no longer rare). Guard pages are checked too
    // (out_of_bounds).
    // `thorough` watches longer and compares every output byte (correctness calls);
    // `quick` samples bytes for a moment (timed calls).
    virtual CallResult call(int slot, Clock::time_point deadline, CallCheck check) = 0;
    // After the last call of a sequence: the worker must stay idle for a while (a thread left
    // running shows now if no later call saw it); previous_unsettled when it was not, and
    // async_work when that makes unsettled calls no longer rare.
    virtual CallResult finish_calls(Clock::time_point deadline) = 0;
    // `count` round trips of a call that does nothing (the doorbell's own cost), in ns.
    virtual std::vector<double> null_calls(int count, Clock::time_point deadline) = 0;
    // Ends the worker; the next load_case starts a fresh one.
    virtual void close() = 0;
    virtual SessionFacts facts() const = 0;
};

struct SessionOptions {
    int threads = 1;
    std::vector<int> cpus;      // cores the worker is pinned to
    std::string log_path;       // worker stdout/stderr
    bool sandbox = true;        // seccomp, Landlock and capability drop (candidates; baselines are trusted)
    std::uint64_t memory_limit_bytes = 0;  // address-space limit of the worker (0: none)
    double cpu_limit_s = 0;     // CPU-time limit of the worker (0: none)
    // The cases the session will load (their argument specs are what counts): what it shares
    // with the worker is sized at once for the largest of them, so that a later, larger case
    // does not map it all again (targets/cpu/worker/shared_mappings.hpp says what that costs).
    // Empty: sized case by case, growing when a case needs more.
    std::vector<Problem> planned_cases{};
};

class Target {
  public:
    virtual ~Target() = default;
    virtual std::string name() const = 0;
    // The kind of hardware model its T_HW comes from ("cpu", "nvidia", "ascend"): scoring a
    // kernel of one target against another kind's limit would give meaningless scores.
    virtual std::string hardware_kind() const = 0;
    // Compiler and flags as recorded in results.
    virtual std::string build_description() const = 0;
    virtual std::string compiler_version() const = 0;
    // Whether a sandboxed session keeps every file hapbench writes (caches, results) out of
    // the kernel's reach on this machine; the answer-key caches are used only then.
    virtual bool confines_files() const = 0;
    virtual BuildResult build(const std::string& op, const std::string& source_path, const std::string& out_dir,
                              double timeout_s) const = 0;
    virtual std::unique_ptr<KernelSession> open_session(const std::string& op, const std::string& library_path,
                                                        const SessionOptions& options) const = 0;
};

// "cpu" (the default); an unknown name is an error listing the known targets.
std::unique_ptr<Target> make_target(const std::string& name);

}  // namespace hb
