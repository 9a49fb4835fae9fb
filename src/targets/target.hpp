// The interface every target (cpu now; cuda and ascend later) implements: build a
// submission's operator file, and run cases of it in an isolated process. Core code talks
// to targets only through this header.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "measure/timing_plan.hpp"
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
    ok, kernel_error, crash, timeout, out_of_bounds, input_mutation, load_error,
    async_work, sandbox_violation, resource_limit
};

struct UnwrittenReport {
    std::string output;
    int tensor_index = 0;
    std::int64_t count = 0;
    std::int64_t first_index = -1;
};

struct KeptOutputs {
    int variant = 0;  // the timed call whose inputs were variant k of the base inputs
    std::vector<Arg> outputs;
};

struct CaseRun {
    RunOutcome outcome = RunOutcome::ok;
    std::string message;                 // what went wrong, for the report
    std::vector<Arg> outputs;            // from the first correctness call (Arg::written_length: its reports)
    // Per output: the length the second correctness call reported (outputs of data-dependent
    // length; -1 for the others).
    std::vector<std::int64_t> second_call_written_lengths;
    std::vector<UnwrittenReport> unwritten;
    std::int64_t nondeterministic_elements = 0;  // elements differing between the two calls
    // Per output: the largest difference between the two correctness calls, relative to
    // max(1, |a|, |b|) (infinite where only one is NaN; integers: absolute).
    std::vector<std::pair<std::string, double>> max_call_difference;
    std::vector<double> samples_us;      // timed calls, in order
    std::vector<KeptOutputs> kept;       // outputs of the verified timed calls
    double first_call_us = 0;
    double sandbox_us = 0;  // the worker's sandbox work for this case (set-up, fingerprints, pauses)
    std::uint64_t workspace_bytes = 0;
};

struct RunRequest {
    bool time = true;
    TimingPlan plan;
    // Called once the worker knows how many timed calls it makes; returns which of them
    // (1-based) have their outputs kept for verification. Decided after the kernel runs.
    std::function<std::set<int>(int repeat)> choose_verified;
};

class KernelSession {
  public:
    virtual ~KernelSession() = default;
    virtual CaseRun run_case(const Problem& problem, const std::vector<Arg>& inputs, const RunRequest& request,
                             Clock::time_point deadline) = 0;
    // Freeze the session's process while another one is measured (a kernel's leftover
    // threads must not slow the baseline), and let it go on.
    virtual void suspend() {}
    virtual void resume() {}
};

struct SessionOptions {
    int threads = 1;
    std::vector<int> cpus;      // cores the worker is pinned to
    std::string log_path;       // worker stdout/stderr
    bool sandbox = true;        // seccomp filter and capability drop (candidates; baselines are trusted)
    std::uint64_t memory_limit_bytes = 0;  // address-space limit of the worker (0: none)
    double cpu_limit_s = 0;     // CPU-time limit of the worker (0: none)
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
    virtual BuildResult build(const std::string& op, const std::string& source_path, const std::string& out_dir,
                              double timeout_s) const = 0;
    virtual std::unique_ptr<KernelSession> open_session(const std::string& op, const std::string& library_path,
                                                        const SessionOptions& options) const = 0;
};

// "cpu" (the default); an unknown name is an error listing the known targets.
std::unique_ptr<Target> make_target(const std::string& name);

}  // namespace hb
