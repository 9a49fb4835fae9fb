// hapbench list / info OP: what the suite holds.
#include <fmt/format.h>

#include <iostream>

#include "core/build_info.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "ops/registry.hpp"
#include "suite/task_dir.hpp"

namespace hb::cli {

std::string default_tasks_dir() { return source_dir() + "/suite"; }

void add_list(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("list", "List the operators of a tasks directory and whether hapbench implements them");
    auto tasks = std::make_shared<std::string>(default_tasks_dir());
    auto profile = std::make_shared<std::string>("cpu");
    cmd->add_option("--tasks", *tasks, "Tasks directory (levelN/<op>/proto.yaml, cases.yaml)")->capture_default_str();
    cmd->add_option("--profile", *profile, "Case profile: cpu or accel")->capture_default_str();
    cmd->callback([&action, tasks, profile] {
        action = [tasks, profile] {
            const TaskDir dir = load_task_dir(*tasks, *profile);
            std::cout << fmt::format("{:<30} {:>5} {:>6}  {}\n", "operator", "level", "cases", "implemented");
            for (const auto& t : dir.tasks)
                std::cout << fmt::format("{:<30} {:>5} {:>6}  {}\n", t.op, t.level, t.cases.size(),
                                         find_operator(t.op) ? "yes" : "no");
            return 0;
        };
    });
}

void add_info(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("info", "Show an operator's interface, thresholds, baseline and cases");
    auto op = std::make_shared<std::string>();
    auto tasks = std::make_shared<std::string>(default_tasks_dir());
    auto profile = std::make_shared<std::string>("cpu");
    cmd->add_option("OP", *op, "Operator name, e.g. sigmoid")->required();
    cmd->add_option("--tasks", *tasks, "Tasks directory")->capture_default_str();
    cmd->add_option("--profile", *profile, "Case profile: cpu or accel")->capture_default_str();
    cmd->callback([&action, op, tasks, profile] {
        action = [op, tasks, profile] {
            const TaskDir dir = load_task_dir(*tasks, *profile, {*op});
            const auto& t = dir.tasks.at(0);
            const auto& p = t.proto;
            std::cout << fmt::format("{} (level {}, {})\n  {}\n", t.op, t.level, p.category, p.schema);
            std::cout << "attributes:\n";
            for (const auto& a : p.attrs)
                std::cout << fmt::format("  {}{}{}\n", a.name, a.default_value ? " = " + a.default_value->to_string() : "",
                                         a.required ? " (required)" : "");
            auto dtypes = [](const std::vector<DType>& ds) {
                std::string s;
                for (auto d : ds) s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
                return s;
            };
            std::cout << "inputs:\n";
            for (const auto& in : p.inputs)
                std::cout << fmt::format("  {}{}{}: {}\n", in.name, in.is_list ? "[]" : "", in.optional ? "?" : "", dtypes(in.dtypes));
            std::cout << "outputs:\n";
            for (const auto& o : p.outputs)
                std::cout << fmt::format("  {}{}: {}{}\n", o.name, o.is_list ? "[]" : "", dtypes(o.dtypes),
                                         o.index_gather ? " (validated by gathering)" : (o.compare ? "" : " (not compared)"));
            if (!p.tau_overrides.empty()) {
                std::cout << "tau overrides:";
                for (const auto& [d, tau] : p.tau_overrides) std::cout << fmt::format(" {}={}", dtype_name(d), tau);
                std::cout << "\n";
            }
            if (const auto* impl = find_operator(t.op)) std::cout << "baseline: " << impl->baseline_description() << "\n";
            else std::cout << "not implemented by hapbench yet\n";
            std::cout << fmt::format("cases ({}, from {}):\n", t.cases.size(), t.cases_file);
            for (const auto& c : t.cases) {
                std::string shapes;
                for (std::size_t i = 0; i < c.inputs.size(); ++i) {
                    if (!c.inputs[i].present) continue;
                    shapes += (shapes.empty() ? "" : " ") + std::string(dtype_name(c.inputs[i].dtype));
                    for (const auto& s : c.inputs[i].shapes) shapes += shape_to_string(s);
                }
                std::cout << fmt::format("  {:>3}  {:>10} elements  {}  {}  {}\n", c.case_id, c.total_input_elements(), shapes,
                                         attrs_to_string(c.attrs), c.note);
            }
            return 0;
        };
    });
}

}  // namespace hb::cli
