// hapbench subcommands. Each file cmd_<name>.cpp adds one subcommand to the app and sets
// the action to run when it is chosen; main.cpp parses and runs it.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace hb {
struct RunResult;
}

namespace hb::cli {

using Action = std::function<int()>;

void add_list(CLI::App& app, Action& action);
void add_info(CLI::App& app, Action& action);
void add_eval(CLI::App& app, Action& action);
void add_baseline(CLI::App& app, Action& action);
void add_hap(CLI::App& app, Action& action);
void add_calibrate(CLI::App& app, Action& action);
void add_gen_cases(CLI::App& app, Action& action);
void add_check_cases(CLI::App& app, Action& action);
void add_export(CLI::App& app, Action& action);
void add_compare(CLI::App& app, Action& action);
void add_report(CLI::App& app, Action& action);
void add_diff(CLI::App& app, Action& action);

// Writes `run` as `format` (table, json, markdown, html) to the file `path` (cmd_report.cpp).
void write_report_file(const std::string& format, const RunResult& run, const std::string& path);

// The repo's own suite/ directory (the default for --tasks).
std::string default_tasks_dir();

}  // namespace hb::cli
