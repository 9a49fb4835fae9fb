// hapbench report: show a results file written by `eval --out` in any format, and write the
// HTML report of it.
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "report/reporter.hpp"
#include "report/results_reader.hpp"

namespace hb::cli {

void write_report_file(const std::string& format, const RunResult& run, const std::string& path) {
    std::ofstream f(path);
    if (!f) throw Error("cannot write " + path + " (does its directory exist?)");
    make_reporter(format)->write(run, f);
    if (!f.flush()) throw Error("could not finish writing " + path + " (disk full?)");
}

void add_report(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("report", "Show a results file (eval --out) as a table, Markdown, JSON or HTML");
    auto results = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("table");
    auto html_file = std::make_shared<std::string>();
    auto markdown_file = std::make_shared<std::string>();
    cmd->add_option("results", *results, "Results file written by hapbench eval --out")->required();
    cmd->add_option("--format", *format, "Output on stdout: table, json, markdown or html")->capture_default_str();
    cmd->add_option("--html", *html_file, "Also write the HTML report (one self-contained file) here");
    cmd->add_option("--markdown", *markdown_file, "Also write a Markdown summary here");
    cmd->callback([&action, results, format, html_file, markdown_file] {
        action = [results, format, html_file, markdown_file] {
            const auto reporter = make_reporter(*format);  // a bad format before reading anything
            const RunResult run = read_results_file(*results);
            if (!html_file->empty()) write_report_file("html", run, *html_file);
            if (!markdown_file->empty()) write_report_file("markdown", run, *markdown_file);
            reporter->write(run, std::cout);
            return 0;
        };
    });
}

}  // namespace hb::cli
