// hapbench diff: what changed between two runs of the same suite.
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "report/diff_report.hpp"
#include "report/results_reader.hpp"

namespace hb::cli {

void add_diff(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "diff", "Compare two results files of the same suite: changes in status, T_cand, s_i and op score per case and "
                "operator, largest first");
    auto file_a = std::make_shared<std::string>();
    auto file_b = std::make_shared<std::string>();
    auto html_file = std::make_shared<std::string>();
    cmd->add_option("A", *file_a, "Results file of the earlier run (eval --out)")->required();
    cmd->add_option("B", *file_b, "Results file of the later run")->required();
    cmd->add_option("--html", *html_file, "Also write the diff as one self-contained HTML file here");
    cmd->callback([&action, file_a, file_b, html_file] {
        action = [file_a, file_b, html_file] {
            const RunResult a = read_results_file(*file_a);
            const RunResult b = read_results_file(*file_b);
            const RunDiff diff = diff_runs(a, b, *file_a, *file_b);
            if (!html_file->empty()) {
                std::ofstream f(*html_file);
                if (!f) throw Error("cannot write " + *html_file + " (does its directory exist?)");
                write_diff_html(diff, f);
                if (!f.flush()) throw Error("could not finish writing " + *html_file + " (disk full?)");
            }
            write_diff_text(diff, std::cout);
            return 0;
        };
    });
}

}  // namespace hb::cli
