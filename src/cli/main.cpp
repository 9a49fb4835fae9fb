// hapbench: evaluate compute kernels against a vendor baseline and the hardware limit.
// Exit codes: 0 success (eval: every evaluated case passed), 1 eval finished with failing
// cases, 2 bad input (flags, files, unknown names), 3 internal error. See docs/results.md.
#include <malloc.h>
#include <sys/prctl.h>

#include <climits>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/split_options.hpp"
#include "core/build_info.hpp"
#include "core/error.hpp"
#include "measure/harness_environment.hpp"

int main(int argc, char** argv) {
    // The harness's OpenMP helpers must sleep, not spin, while a kernel is timed, and its heap
    // asks for huge pages (measure/harness_environment.hpp); libgomp and glibc read those
    // settings before main, so restart with them.
    hb::restart_with_harness_environment(argv);
    // A worker that dies mid-conversation must become a case status, not kill the harness.
    std::signal(SIGPIPE, SIG_IGN);
    // The goldens live in this process: non-dumpable, its memory (/proc/<pid>/mem) is closed to
    // processes without CAP_SYS_PTRACE, which the candidate's worker drops (docs/security.md).
    prctl(PR_SET_DUMPABLE, 0);
    // The harness allocates and frees fp64 copies of whole tensors (tens to hundreds of MB) for
    // every verified call: from mmap, each would fault in and zero every page anew. From the
    // heap, kept after free, they reuse the same pages (measured on tuned sigmoid: about 1 s of
    // 10 less, for 0.5 GB more peak memory). One arena: the verifying threads are new for each
    // case, and in arenas of their own (64 MB heaps) their copies faulted in anew (970,000 page
    // faults in verification before, 420,000 after; 3.0 s -> 2.5 s). The heap is trimmed only
    // above 2 GiB free at its top. Its pages are 2 MiB where the kernel allows (core/huge_pages.hpp).
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    mallopt(M_ARENA_MAX, 1);
    CLI::App app{"hapbench: score compute kernels against the vendor baseline and the hardware limit (T_HW)"};
    app.set_version_flag("--version", "hapbench " + hb::hapbench_version());
    app.footer("Exit codes: 0 success (eval: every case passed), 1 eval finished with failing cases, "
               "2 bad input, 3 internal error. Results schema and statuses: docs/results.md");
    app.require_subcommand(1);
    hb::cli::Action action;
    hb::cli::add_list(app, action);
    hb::cli::add_info(app, action);
    hb::cli::add_eval(app, action);
    hb::cli::add_baseline(app, action);
    hb::cli::add_hap(app, action);
    hb::cli::add_calibrate(app, action);
    hb::cli::add_gen_cases(app, action);
    hb::cli::add_check_cases(app, action);
    hb::cli::add_export(app, action);
    hb::cli::add_compare(app, action);
    hb::cli::add_report(app, action);
    hb::cli::add_diff(app, action);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : static_cast<int>(hb::ExitCode::bad_input);
    }
    hb::cli::scrub_secret_arguments(argc, argv);
    try {
        return action ? action() : 0;
    } catch (const hb::Error& e) {
        std::cerr << "hapbench: error: " << e.what() << "\n";
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::cerr << "hapbench: internal error: " << e.what() << "\n";
        return static_cast<int>(hb::ExitCode::internal);
    }
}
