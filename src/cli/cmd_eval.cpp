// hapbench eval: evaluate a submission on a suite.
#include <unistd.h>

#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/split_options.hpp"
#include "core/error.hpp"
#include "eval/evaluate.hpp"
#include "report/reporter.hpp"

namespace hb::cli {

namespace {

std::string duration(double s) {
    if (s < 60) return fmt::format("{:.0f}s", s);
    return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
}

// A live line on a terminal; one line per operator when stderr is a file or pipe.
void print_progress(const Progress& p) {
    static std::string last_op;
    static const bool tty = isatty(2);
    if (p.op.empty()) {
        if (tty) std::cerr << "\r\033[K";
        return;
    }
    const std::string line = fmt::format("[{:>4}/{}] {} case {}  elapsed {}  ETA {}", p.cases_done, p.cases_total, p.op,
                                         p.case_id, duration(p.elapsed_s), p.cases_done ? duration(p.eta_s) : "?");
    static double last_print_s = -1e9;
    if (tty) {
        std::cerr << "\r\033[K" << line << std::flush;
    } else if (p.op != last_op || p.elapsed_s - last_print_s >= 30) {
        std::cerr << line << "\n";
        last_print_s = p.elapsed_s;
    }
    last_op = p.op;
}

}  // namespace

void add_timing_options(CLI::App* cmd, TimingPlan& plan) {
    cmd->add_option("--warmup", plan.warmup, "Cold warmup calls per case on fresh inputs, after the two correctness calls (at least one on each input slot they did not use)")
        ->capture_default_str()->check(CLI::NonNegativeNumber);
    cmd->add_option("--min-calls", plan.stopping.min_calls, "Fewest timed calls per case")
        ->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--max-calls", plan.stopping.max_calls, "Most timed calls per case")
        ->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--max-timed-s", plan.stopping.max_time_s, "Seconds of timed calls after which timing stops")
        ->capture_default_str()->check(CLI::NonNegativeNumber);
    cmd->add_option("--precision", plan.stopping.relative_precision,
                    "Target relative standard error of the median (the stopping rule)")
        ->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--verify-calls", plan.verified_calls,
                    "Timed calls per case whose outputs are verified (drawn at random after each call)")
        ->capture_default_str()->check(CLI::NonNegativeNumber);
}

void add_eval(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("eval", "Evaluate a submission: correctness, speed, T_HW, score");
    auto o = std::make_shared<EvalOptions>();
    o->tasks_dir = default_tasks_dir();
    auto format = std::make_shared<std::string>("table");
    auto out_file = std::make_shared<std::string>();
    auto markdown_file = std::make_shared<std::string>();
    auto html_file = std::make_shared<std::string>();
    cmd->add_option("--submission", o->submission_dir, "Directory with one <op>.cpp per operator")->required();
    cmd->add_option("--tasks", o->tasks_dir, "Tasks directory (levelN/<op>/proto.yaml, cases.yaml)")->capture_default_str();
    cmd->add_option("--op", o->ops, "Only these operators (repeatable)");
    auto split = add_split_options(cmd);
    cmd->add_option("--profile", o->profile, "Case profile: cpu or accel")->capture_default_str();
    cmd->add_option("--target", o->target, "Target: cpu")->capture_default_str();
    cmd->add_option("--eval-seed", o->eval_seed, "Seed added to every case seed (methodology 2)")->capture_default_str();
    add_timing_options(cmd, o->plan);
    cmd->add_option("--threads", o->threads, "Threads for candidate and baseline (0: all allowed cores)")->capture_default_str();
    cmd->add_flag("--no-perf", o->no_perf, "Check correctness only; no timing, no performance score");
    cmd->add_flag("--no-sandbox", [o](std::int64_t) { o->sandbox = false; },
                  "Run candidates without the seccomp and Landlock sandbox (only to measure its cost; recorded in the results)");
    cmd->add_flag("--no-cache", o->no_cache, "Neither read nor write the golden and baseline caches");
    cmd->add_flag("--live-baseline", o->live_baseline,
                  "Measure the baseline in this run, right after each case's candidate, instead of the cached time");
    cmd->add_flag("--two-trial", o->two_trial, "Also run trial 2 (seed + 1, inputs + 0.01) on passing cases");
    cmd->add_option("--timeout", o->op_timeout_s, "Time budget per operator, seconds")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--build-timeout", o->build_timeout_s, "Build time limit per operator, seconds")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--hardware", o->hardware, "Hardware model file or name, of the target's kind (default: calibrate this machine once and cache)");
    cmd->add_option("--convention", o->convention,
                    "T_HW convention: hapbench (every compulsory byte, the tighter bound) or cann-bench (the reference "
                    "benchmark's published convention); docs/hap.md")
        ->capture_default_str();
    cmd->add_flag("--recalibrate", o->recalibrate, "Measure this machine's peaks again and replace the cached model");
    cmd->add_option("--work-dir", o->work_dir, "Keep build outputs and worker logs here");
    cmd->add_option("--format", *format, "Output on stdout: table, json, markdown or html")->capture_default_str();
    cmd->add_option("--out", *out_file, "Also write the JSON results to this file");
    cmd->add_option("--markdown", *markdown_file, "Also write a Markdown summary to this file");
    cmd->add_option("--html", *html_file, "Also write the HTML report (one self-contained file with plots) to this file");
    cmd->callback([&action, o, format, out_file, markdown_file, html_file, split] {
        action = [o, format, out_file, markdown_file, html_file, split] {
            o->split = split->resolve();
            const auto reporter = make_reporter(*format);  // reject a bad format before the run
            // Open the result files before the run too: a path that cannot be written is
            // found now, not after the evaluation, whose results would be lost.
            std::ofstream json_out, markdown_out, html_out;
            auto open = [](std::ofstream& f, const std::string& path) {
                if (path.empty()) return;
                f.open(path);
                if (!f) throw Error("cannot write " + path);
            };
            open(json_out, *out_file);
            open(markdown_out, *markdown_file);
            open(html_out, *html_file);
            const RunResult run = evaluate(*o, print_progress);
            if (json_out.is_open()) make_reporter("json")->write(run, json_out);
            if (markdown_out.is_open()) make_reporter("markdown")->write(run, markdown_out);
            if (html_out.is_open()) make_reporter("html")->write(run, html_out);
            reporter->write(run, std::cout);
            // NOT_RUN cases (operators hapbench does not implement) were not evaluated.
            for (const auto& op : run.operators)
                for (const auto& c : op.cases)
                    if (!c.passed() && c.status != CaseStatus::not_run) return static_cast<int>(ExitCode::failures);
            return 0;
        };
    });
}

void add_baseline(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("baseline", "Measure the baseline of every selected case and keep it in the baseline cache");
    auto o = std::make_shared<EvalOptions>();
    o->tasks_dir = default_tasks_dir();
    auto refresh = std::make_shared<bool>(false);
    cmd->add_flag("--refresh", *refresh, "Measure again the cases the cache already holds");
    cmd->add_option("--tasks", o->tasks_dir, "Tasks directory")->capture_default_str();
    cmd->add_option("--op", o->ops, "Only these operators (repeatable)");
    auto split = add_split_options(cmd);
    cmd->add_option("--profile", o->profile, "Case profile: cpu or accel")->capture_default_str();
    cmd->add_option("--eval-seed", o->eval_seed, "Seed added to every case seed (methodology 2)")->capture_default_str();
    add_timing_options(cmd, o->plan);
    cmd->add_option("--threads", o->threads, "Threads (0: all allowed cores)")->capture_default_str();
    cmd->add_option("--hardware", o->hardware, "Hardware model file or name (default: this machine's calibrated model)");
    cmd->add_option("--timeout", o->op_timeout_s, "Time budget per operator, seconds")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->callback([&action, o, refresh, split] {
        action = [o, refresh, split] {
            o->split = split->resolve();
            for (const auto& line : measure_baselines(*o, *refresh, print_progress)) std::cout << line << "\n";
            return 0;
        };
    });
}

}  // namespace hb::cli
