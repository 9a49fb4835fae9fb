// The options that choose cases, shared by eval, baseline, export and check-cases:
// --split, --hidden-seed or --hidden-seed-file, --hidden-count, --case.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "suite/case_selection.hpp"

namespace hb::cli {

struct SplitOptions {
    SplitChoice choice;
    std::uint64_t hidden_seed = 0;
    std::string hidden_seed_file;
    CLI::Option* seed_option = nullptr;
    // The choice with the seed read from the option or the file (one of them, not both).
    SplitChoice resolve() const;
};

// with_cases: also add --case (export takes a single --case of its own).
std::shared_ptr<SplitOptions> add_split_options(CLI::App* cmd, bool with_cases = true);

// Overwrites the value of every --hidden-seed in argv with 'x's, so that the seed does not
// stay readable in /proc/<pid>/cmdline while hapbench runs.
void scrub_secret_arguments(int argc, char** argv);

}  // namespace hb::cli
