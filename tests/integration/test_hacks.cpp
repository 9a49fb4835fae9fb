// The adversarial suite: each submission in tests/hacks/ tries one way of gaming the
// benchmark; each test asserts the exact status it earns and that it earns no performance
// credit from its trick (docs/security.md lists the mechanism behind each).
// Runs alone: catching work left running after a call (ASYNC_WORK) watches the worker for a
// pause of milliseconds, and a time budget must run out for one hack and not for others.
// ctest: RUN_SERIAL
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

// Case 13 of sigmoid: [241, 128] float32 over [-100, 100], small enough to run in a blink.
const std::string small_case = " --op sigmoid --case 13";
const std::string quick_timing = " --hardware cpu-example --warmup 1 --min-calls 5 --max-calls 5 --no-cache";

struct HackRun {
    nlohmann::json run;
    std::string log;  // the candidate worker's stdout and stderr
};

HackRun run_hack(const std::string& hack, const std::string& options) {
    const std::string work_dir =
        (std::filesystem::temp_directory_path() / ("hapbench-hack-" + hack + "-" + std::to_string(getpid()))).string();
    std::filesystem::remove_all(work_dir);
    const auto r = run_hapbench("eval --submission " + std::string(HB_SOURCE_DIR) + "/tests/hacks/" + hack + options +
                                " --format json --work-dir " + work_dir);
    EXPECT_EQ(r.exit_code, 1) << hack << " should leave failing cases (exit 1); stderr: " << r.err;
    HackRun h;
    try {
        h.run = r.json();
    } catch (const std::exception& e) {
        ADD_FAILURE() << hack << ": no JSON results: " << e.what() << "\n" << r.err;
        return h;
    }
    std::ifstream log(work_dir + "/sigmoid.candidate.log");
    std::stringstream ss;
    ss << log.rdbuf();
    h.log = ss.str();
    return h;
}

// Every case has `status`, no case scores, and the operator gets no performance term.
void expect_status_without_credit(const HackRun& h, const std::string& status, const std::string& message_part = "") {
    ASSERT_TRUE(h.run.contains("cases"));
    ASSERT_FALSE(h.run.at("cases").empty());
    for (const auto& c : h.run.at("cases")) {
        EXPECT_EQ(c.at("status"), status) << c.at("message");
        if (!message_part.empty()) {
            EXPECT_NE(c.at("message").get<std::string>().find(message_part), std::string::npos) << c.at("message");
        }
        EXPECT_TRUE(c.at("score").is_null() || c.at("score").get<double>() == 0) << c.dump();
    }
    const auto* op = find_operator(h.run, "sigmoid");
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->at("performance_term").get<double>(), 0);
}

TEST(Hacks, PointerKeyedCacheIsStaleWhenAnAddressComesBackWithNewContent) {
    // Timed calls take the case's two slots in turn, each time with new content: from the
    // third call on, every address has been seen; --verify-calls 5: every timed call is checked.
    expect_status_without_credit(run_hack("pointer_cache", small_case + quick_timing + " --verify-calls 5"),
                                 "CACHED_OR_STALE_OUTPUT", "do not match its own inputs");
}

TEST(Hacks, ContentKeyedCacheNeverHitsOnATimedCall) {
    const auto h = run_hack("content_cache", small_case + quick_timing + " --op exp");  // exp: missing, makes exit 1
    for (const auto& c : h.run.at("cases")) {
        if (c.at("operator") == "sigmoid") {
            EXPECT_EQ(c.at("status"), "PASS") << c.at("message");
        }
    }
    // Call 1 misses; call 2 sees the same content and hits; the warmup (on the slot the
    // correctness calls did not use) and each of the 5 timed calls have fresh content and
    // miss, so the cache buys no time where it is measured.
    std::istringstream lines(h.log);
    int misses = 0, hits = 0;
    for (std::string line; std::getline(lines, line);) {
        misses += line == "content_cache: miss";
        hits += line == "content_cache: hit";
    }
    EXPECT_EQ(misses, 1 + 1 + 5) << h.log;
    EXPECT_EQ(hits, 1) << h.log;
}

TEST(Hacks, DetachedThreadIsAsyncWork) {
    expect_status_without_credit(run_hack("detached_thread", small_case + quick_timing), "ASYNC_WORK", "after the call returned");
}

TEST(Hacks, OneDnnHeaderIsDelegation) {
    expect_status_without_credit(run_hack("calls_onednn", small_case + quick_timing), "DELEGATION", "<oneapi/dnnl/dnnl.h>");
}

TEST(Hacks, BlasSymbolIsDelegation) {
    expect_status_without_credit(run_hack("calls_cblas", small_case + quick_timing), "DELEGATION", "cblas_scopy");
}

TEST(Hacks, DlopenIsDelegation) {
    expect_status_without_credit(run_hack("dlopen_library", small_case + quick_timing), "DELEGATION", "dlopen");
}

TEST(Hacks, ExportedClockGettimeIsDelegation) {
    expect_status_without_credit(run_hack("defines_clock_gettime", small_case + quick_timing), "DELEGATION", "exports clock_gettime");
}

TEST(Hacks, InputWriteIsInputMutation) {
    expect_status_without_credit(run_hack("mutates_input", small_case + quick_timing), "INPUT_MUTATION", "input x");
}

TEST(Hacks, WritePastOutputIsOutOfBounds) {
    expect_status_without_credit(run_hack("writes_past_output", small_case + quick_timing), "OUT_OF_BOUNDS", "output y");
}

TEST(Hacks, Bfloat16MathOnAFloat32CaseFailsPrecision) {
    expect_status_without_credit(run_hack("bf16_for_fp32", small_case + quick_timing), "PRECISION_FAIL");
}

TEST(Hacks, HardCodedPublicShapesFailTheHiddenSplit) {
    const auto pub = run_hack("hardcoded_shapes", " --op sigmoid --case 1 --case 13 --op exp --no-perf");
    for (const auto& c : pub.run.at("cases")) {
        if (c.at("operator") == "sigmoid") {
            EXPECT_EQ(c.at("status"), "PASS");
        }
    }
    expect_status_without_credit(
        run_hack("hardcoded_shapes", " --op sigmoid --split hidden --hidden-seed 5 --hidden-count 2" + quick_timing),
        "OUTPUT_UNWRITTEN", "never written");
}

TEST(Hacks, ForkIsASandboxViolation) {
    expect_status_without_credit(run_hack("forks", small_case + quick_timing), "SANDBOX_VIOLATION", "clone");
}

TEST(Hacks, SocketIsASandboxViolation) {
    expect_status_without_credit(run_hack("opens_socket", small_case + quick_timing), "SANDBOX_VIOLATION", "socket");
}

TEST(Hacks, SocketInAStaticConstructorIsCaughtWhileLoading) {
    expect_status_without_credit(run_hack("socket_in_constructor", small_case + quick_timing), "SANDBOX_VIOLATION",
                                 "while loading the kernel");
}

TEST(Hacks, HarnessMemoryIsClosedToTheKernel) {
    // /proc/self/maps is readable; /proc/<harness>/mem is not (the harness is non-dumpable
    // and the worker holds no capabilities). The kernel reports the refusal as its error.
    const auto h = run_hack("reads_parent_memory", small_case + quick_timing);
    expect_status_without_credit(h, "KERNEL_ERROR", "/mem:");
    for (const auto& c : h.run.at("cases")) {
        const std::string message = c.at("message");
        EXPECT_TRUE(message.find("Permission denied") != std::string::npos || message.find("not permitted") != std::string::npos)
            << message;
    }
}

TEST(Hacks, SleepingPastTheBudgetIsTimeout) {
    expect_status_without_credit(run_hack("sleeps_past_timeout", small_case + quick_timing + " --timeout 2"), "TIMEOUT");
}

TEST(Hacks, UnboundedAllocationHitsTheResourceLimit) {
    expect_status_without_credit(run_hack("unbounded_alloc", small_case + quick_timing), "RESOURCE_LIMIT",
                                 "address space");
}

TEST(Hacks, StaleScratchMemoryIsNondeterministic) {
    expect_status_without_credit(run_hack("reads_stale_memory", small_case + quick_timing), "NONDETERMINISTIC",
                                 "identical inputs");
}

TEST(Hacks, ForgedTimingMessageIsASandboxViolation) {
    expect_status_without_credit(run_hack("forges_timing_message", small_case + quick_timing), "SANDBOX_VIOLATION",
                                 "unexpected message");
}

TEST(Hacks, LegitimateRuntimeUseIsNotAFinding) {
    // Threads, thread_local, aligned heap memory, exceptions, iostream, a static
    // constructor: a kernel may use all of it (false positives would cost real scores).
    const std::string work_dir =
        (std::filesystem::temp_directory_path() / ("hapbench-sandbox-legit-" + std::to_string(getpid()))).string();
    const auto r = run_hapbench("eval --submission " + std::string(HB_TEST_DATA_DIR) + "/sandbox_legit --op sigmoid --case 1 --case 13" +
                                quick_timing + " --format json --work-dir " + work_dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto run = r.json();
    for (const auto& c : run.at("cases")) {
        EXPECT_EQ(c.at("status"), "PASS") << c.at("message");
        EXPECT_TRUE(c.at("audit").empty()) << c.at("audit");
    }
}

// ---- Code in the kernel's address space (docs/security.md, "Nothing in the worker times or
// judges"): the old in-worker clock, fingerprint and verified-call copy are gone, and what
// the kernel can still reach is refused or checked from outside.

TEST(Hacks, PatchingCodeInAStaticConstructorIsRefusedBeforeTheKernelRuns) {
    expect_status_without_credit(run_hack("patches_code_in_constructor", small_case + quick_timing), "SANDBOX_VIOLATION",
                                 "mprotect");
}

TEST(Hacks, ForgingTheDoneMarkerLeavesTheWorkerBusyAfterItSaidDone) {
    expect_status_without_credit(run_hack("forges_done_early", small_case + quick_timing), "ASYNC_WORK",
                                 "after the call returned");
}

TEST(Hacks, FinishingOutputsWhileTheHarnessWaitsForAQuietWorkerGainsNothing) {
    // The harness reads the worker's CPU time once no thread of it is runnable, so a helper
    // that writes a sixteenth of the output from 100 us after "done" and then sleeps, all
    // within the settle interval, is not charged CPU for it. Two outcomes, both without gain:
    // - the harness woke on a free CPU: the output sample drawn at "done" (62 random bytes and
    //   both ends) sees the slice change, 1 - (15/16)^62 = 98% a call: ASYNC_WORK;
    // - the harness woke behind the helper (on its CPU; 3 runs of 44 here): its window
    //   includes the helper's work, every call's own (shorter) measure is clamped to the
    //   window, and the time is the whole work's (4.5 ms here against 4.1 ms with no helper).
    // Case 1: float16 [63, 38, 256], about 4 ms a call on one thread: a settle of about 400 us.
    // (exp, which the submission lacks, makes the run exit 1 whichever the outcome.)
    const auto h = run_hack("finishes_while_runnable", " --op sigmoid --op exp --case 1" + quick_timing);
    for (const auto& c : h.run.at("cases")) {
        if (c.at("operator") != "sigmoid") continue;
        if (c.at("status") == "PASS") {
            const auto& t = c.at("candidate_timing");
            EXPECT_EQ(t.at("clamped_calls"), t.at("count")) << t.dump();
            continue;
        }
        EXPECT_EQ(c.at("status"), "ASYNC_WORK") << c.at("message");
        EXPECT_NE(c.at("message").get<std::string>().find("outputs changed after the call returned"), std::string::npos)
            << c.at("message");
        EXPECT_TRUE(c.at("score").is_null() || c.at("score").get<double>() == 0) << c.dump();
    }
}

TEST(Hacks, WritingOneElementAfterDoneIsCaughtByTheCorrectnessCallsDigest) {
    // One element written 300 us after "done" by a sleeping helper: too little CPU for the
    // idle allowance, but the correctness calls compare a keyed digest of every output byte.
    expect_status_without_credit(run_hack("writes_one_element_late", small_case + quick_timing), "ASYNC_WORK",
                                 "outputs changed after the call returned");
}

TEST(Hacks, SkippingTheCallsAfterTheFirstVerifiedOneIsCaught) {
    // Five timed calls, three verified at random after each returns: at least two of the
    // kept ones are among the four the kernel skipped.
    expect_status_without_credit(run_hack("skips_unverified_calls", small_case + quick_timing + " --verify-calls 3"),
                                 "CACHED_OR_STALE_OUTPUT", "do not match its own inputs");
}

// ---- Timed inputs are fresh: no timed input is a permutation of another, constant cases
// included.

TEST(Hacks, ShiftedCacheMissesFreshInputs) {
    expect_status_without_credit(run_hack("shift_cache", small_case + quick_timing + " --verify-calls 5"),
                                 "CACHED_OR_STALE_OUTPUT", "do not match its own inputs");
}

TEST(Hacks, ConstantInputShortcutMissesTheMarkedElements) {
    // Case 3: float32 [4, 4, 3, 769] over [0, 0].
    expect_status_without_credit(
        run_hack("constant_input_shortcut", " --op sigmoid --case 3" + quick_timing + " --verify-calls 5"),
        "CACHED_OR_STALE_OUTPUT", "do not match its own inputs");
}

// ---- Signals: no handlers, no timers, no signals to the worker's own threads.

TEST(Hacks, SignalHandlerThatFinishesLaterIsASandboxViolation) {
    expect_status_without_credit(run_hack("sigalrm_finisher", small_case + quick_timing), "SANDBOX_VIOLATION",
                                 "rt_sigaction");
}

TEST(Hacks, TimerSignalIsASandboxViolation) {
    expect_status_without_credit(run_hack("timer_thread_signal", small_case + quick_timing), "SANDBOX_VIOLATION",
                                 "timer_create");
}

TEST(Hacks, SignalToOwnThreadIsASandboxViolation) {
    expect_status_without_credit(run_hack("signals_own_thread", small_case + quick_timing), "SANDBOX_VIOLATION", "tgkill");
}

// ---- Slowing the baseline: a worker that keeps running after a call is ASYNC_WORK and is
// gone (killed) before any baseline is timed; handlers that would learn of a pause are refused.

TEST(Hacks, ThreadSpinningAfterReturnIsAsyncWork) {
    const auto h = run_hack("spins_after_return", small_case + quick_timing);
    expect_status_without_credit(h, "ASYNC_WORK", "after the call returned");
    for (const auto& c : h.run.at("cases")) EXPECT_EQ(c.at("baseline_status"), "measured");
}

TEST(Hacks, LongSystemCallsAfterReturnAreAsyncWork) {
    // Caught by the CPU it uses or by its thread still running: either message ends the same.
    expect_status_without_credit(run_hack("long_syscall_after_return", small_case + quick_timing), "ASYNC_WORK",
                                 "after the call returned");
}

TEST(Hacks, SigcontHandlerIsASandboxViolation) {
    expect_status_without_credit(run_hack("catches_sigcont", small_case + quick_timing), "SANDBOX_VIOLATION",
                                 "rt_sigaction");
}

// ---- The CPU allotment and the secrets.

TEST(Hacks, WideningTheCpuAllotmentIsRefused) {
    const auto h = run_hack("widens_affinity", small_case + quick_timing + " --threads 1");
    expect_status_without_credit(h, "KERNEL_ERROR", "sched_setaffinity: Operation not permitted; CPUs allowed: 1");
}

TEST(Hacks, HarnessCommandLineIsOutOfReach) {
    const auto h = run_hack("reads_harness_arguments", " --op sigmoid --split hidden --hidden-seed 918273645 --hidden-count 1" +
                                                           quick_timing);
    expect_status_without_credit(h, "KERNEL_ERROR");
    for (const auto& c : h.run.at("cases")) {
        const std::string message = c.at("message");
        EXPECT_EQ(message.find("918273645"), std::string::npos) << message;
        EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
    }
}

TEST(Hacks, GoldenCacheIsOutOfReach) {
    // The goldens of the case are written to this cache before the kernel's first call.
    // The path the hack looks in (it cannot be told one: its environment is scrubbed); this
    // file runs serially, so no other test uses it meanwhile.
    const std::string cache = "/tmp/hapbench-hack-cache";
    std::filesystem::remove_all(cache);
    setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    const auto h = run_hack("reads_golden_cache", small_case + " --hardware cpu-example --warmup 1 --min-calls 5 --max-calls 5");
    unsetenv("XDG_CACHE_HOME");
    EXPECT_TRUE(std::filesystem::is_directory(cache + "/hapbench/goldens"));
    expect_status_without_credit(h, "KERNEL_ERROR", cache + "/hapbench/goldens: Permission denied");
    std::filesystem::remove_all(cache);
}

// ---- One submission per remaining sandbox rule (issue 14).

TEST(Hacks, WritableOpenIsASandboxViolation) {
    expect_status_without_credit(run_hack("opens_for_writing", small_case + quick_timing), "SANDBOX_VIOLATION", "openat");
}

TEST(Hacks, WritableExecutableMappingIsASandboxViolation) {
    expect_status_without_credit(run_hack("maps_executable_memory", small_case + quick_timing), "SANDBOX_VIOLATION", "mmap");
}

TEST(Hacks, MakingWrittenMemoryExecutableIsASandboxViolation) {
    expect_status_without_credit(run_hack("jit_write_then_execute", small_case + quick_timing), "SANDBOX_VIOLATION",
                                 "mprotect");
}

TEST(Hacks, OwnSegfaultHandlerIsASandboxViolation) {
    expect_status_without_credit(run_hack("hides_segfault", small_case + quick_timing), "SANDBOX_VIOLATION", "rt_sigaction");
}

TEST(Hacks, ReplacingAHarnessDescriptorIsASandboxViolation) {
    expect_status_without_credit(run_hack("dup2_over_channel", small_case + quick_timing), "SANDBOX_VIOLATION", "dup2");
}

TEST(Hacks, SyscallFunctionIsDelegation) {
    expect_status_without_credit(run_hack("calls_syscall_function", small_case + quick_timing), "DELEGATION", "syscall");
}

TEST(Hacks, InlineSyscallInstructionIsStillFiltered) {
    expect_status_without_credit(run_hack("inline_syscall_socket", small_case + quick_timing), "SANDBOX_VIOLATION", "socket");
}

TEST(Hacks, DlsymIsDelegation) {
    expect_status_without_credit(run_hack("calls_dlsym", small_case + quick_timing), "DELEGATION", "dlsym");
}

TEST(Hacks, BlasHeaderIsDelegation) {
    expect_status_without_credit(run_hack("includes_cblas_header", small_case + quick_timing), "DELEGATION", "cblas.h");
}

}  // namespace
}  // namespace hb::test
