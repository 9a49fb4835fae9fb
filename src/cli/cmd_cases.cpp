// hapbench gen-cases / check-cases: write a cases file by the methodology's rules, and check
// a tasks directory's cases files against them.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/split_options.hpp"
#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/case_rules.hpp"
#include "suite/cases_file.hpp"
#include "suite/split.hpp"
#include "suite/task_dir.hpp"

namespace hb::cli {

void add_gen_cases(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("gen-cases", "Draw cases for an operator by the suite rules and print them as cases.yaml");
    auto op = std::make_shared<std::string>();
    auto tasks = std::make_shared<std::string>(default_tasks_dir());
    auto profile = std::make_shared<std::string>("cpu");
    auto seed = std::make_shared<std::uint64_t>(2026);
    auto count = std::make_shared<int>(20);
    auto out = std::make_shared<std::string>();
    cmd->add_option("--op", *op, "Operator")->required();
    cmd->add_option("--tasks", *tasks, "Tasks directory holding its proto.yaml")->capture_default_str();
    cmd->add_option("--profile", *profile, "cpu or accel")->capture_default_str();
    cmd->add_option("--seed", *seed, "Seed of the draw")->capture_default_str();
    cmd->add_option("--count", *count, "Number of cases")->capture_default_str();
    cmd->add_option("--out", *out, "Write here instead of stdout");
    cmd->callback([&action, op, tasks, profile, seed, count, out] {
        action = [op, tasks, profile, seed, count, out] {
            const TaskDir dir = load_task_dir(*tasks, *profile, {*op});
            const Operator* impl = find_operator(*op);
            if (!impl) throw Error("hapbench does not implement " + *op + " (known: " + known_operator_names() + ")");
            const auto& entry = dir.tasks.at(0);
            const Profile& prof = profile_by_name(*profile);
            const auto cases = generate_cases(*impl, entry.proto, prof, *seed, *count, 1);
            for (const auto& c : cases) resolve_problem(entry.proto, *impl, c);  // every case must be valid
            const std::string header = fmt::format(
                "hapbench's own public cases for {} ({} profile), drawn by `hapbench gen-cases --op {} --profile {} --seed {} --count {}`\n"
                "by the rules of methodology section 2; checked by `hapbench check-cases`.",
                *op, *profile, *op, *profile, *seed, *count);
            const std::string text = cases_to_yaml(cases, entry.proto, header);
            if (out->empty()) {
                std::cout << text;
            } else {
                std::ofstream f(*out);
                if (!f) throw Error("cannot write " + *out);
                f << text;
            }
            return 0;
        };
    });
}

void add_check_cases(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("check-cases", "Check cases files (or a hidden split) against the suite rules");
    auto tasks = std::make_shared<std::string>(default_tasks_dir());
    auto profile = std::make_shared<std::string>("cpu");
    auto ops = std::make_shared<std::vector<std::string>>();
    cmd->add_option("--tasks", *tasks, "Tasks directory")->capture_default_str();
    cmd->add_option("--profile", *profile, "cpu or accel")->capture_default_str();
    cmd->add_option("--op", *ops, "Only these operators");
    auto split = add_split_options(cmd, false);
    cmd->callback([&action, tasks, profile, ops, split] {
        action = [tasks, profile, ops, split] {
            const CaseSelection selection = select_cases(*tasks, *profile, *ops, split->resolve());
            const Profile& prof = profile_by_name(*profile);
            int violations = 0;
            for (const auto& selected : selection.operators) {
                const Operator* impl = selected.op;
                if (!impl) continue;
                const TaskEntry& entry = *selected.entry;
                const auto& cases = selected.cases;
                for (const auto& c : cases) resolve_problem(entry.proto, *impl, c);
                const auto problems = check_case_rules(cases, entry.proto, *impl, prof);
                for (const auto& p : problems) std::cout << p << "\n";
                violations += static_cast<int>(problems.size());
                std::cout << fmt::format("{:<26} {:>3} cases  {}\n", entry.op, cases.size(), problems.empty() ? "ok" : "VIOLATIONS");
            }
            return violations ? static_cast<int>(ExitCode::failures) : 0;
        };
    });
}

}  // namespace hb::cli
