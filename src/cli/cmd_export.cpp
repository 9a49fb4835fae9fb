// hapbench export: write one case (inputs, golden, same-precision reference, case.json) as
// NumPy files, for debugging a kernel outside the harness. See docs/case-files.md.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/split_options.hpp"
#include "eval/case_export.hpp"

namespace hb::cli {

void add_export(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("export", "Write a case's inputs, golden and same-precision outputs as .npy files plus case.json");
    auto o = std::make_shared<CaseExportOptions>();
    o->tasks_dir = default_tasks_dir();
    cmd->add_option("--op", o->op, "Operator")->required();
    cmd->add_option("--case", o->case_id, "Case id")->required();
    cmd->add_option("--dir", o->dir, "Directory to write (created when missing)")->required();
    cmd->add_option("--tasks", o->tasks_dir, "Tasks directory (levelN/<op>/proto.yaml, cases.yaml)")->capture_default_str();
    cmd->add_option("--profile", o->profile, "Case profile: cpu or accel")->capture_default_str();
    auto split = add_split_options(cmd, false);
    cmd->add_option("--eval-seed", o->eval_seed, "Seed added to every case seed (methodology 2)")->capture_default_str();
    cmd->callback([&action, o, split] {
        action = [o, split] {
            o->split = split->resolve();
            const CaseExport result = export_case(*o);
            std::cout << fmt::format("{} case {} ({} split, case seed {}) written to {}:\n", o->op, o->case_id, o->split.split,
                                     result.case_json.at("case_seed").get<std::uint64_t>(), result.dir);
            for (const auto& f : result.files) std::cout << "  " << f << "\n";
            return 0;
        };
    });
}

}  // namespace hb::cli
