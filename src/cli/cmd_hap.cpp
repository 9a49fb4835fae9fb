// hapbench hap: T_HW per case for a hardware model; hapbench calibrate: measure this CPU.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <map>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "hap/calibrate.hpp"
#include "hap/hardware_source.hpp"
#include "hap/solver.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/task_dir.hpp"

namespace hb::cli {

namespace {

// The table's last lines: per level, how many cases were computed (and why others were
// not), the share of each bottleneck group, and how many sit at the floor.
void print_summary(const nlohmann::json& rows, double floor_us) {
    struct Level {
        int computed = 0, not_implemented = 0, errors = 0, floored = 0;
        std::map<std::string, int> groups;
    };
    std::map<int, Level> levels;
    for (const auto& row : rows) {
        Level& l = levels[row["level"].get<int>()];
        if (row["status"] == "not_implemented") ++l.not_implemented;
        else if (row["status"] == "error") ++l.errors;
        else {
            ++l.computed;
            ++l.groups[row["bottleneck"].get<std::string>()];
            if (row["floored"].get<bool>()) ++l.floored;
        }
    }
    std::cout << "\nsummary (bottleneck groups of the computed cases):\n";
    for (const auto& [level, l] : levels) {
        std::string line = fmt::format("  level {}: {} computed", level, l.computed);
        if (l.not_implemented) line += fmt::format(", {} not implemented", l.not_implemented);
        if (l.errors) line += fmt::format(", {} errors", l.errors);
        std::string groups;
        for (const auto& [group, n] : l.groups)
            groups += fmt::format("{}{} {} ({:.1f}%)", groups.empty() ? "" : ", ", group, n, 100.0 * n / l.computed);
        if (!groups.empty()) line += "; " + groups;
        if (l.floored) line += fmt::format("; {} floored at {:g} us", l.floored, floor_us);
        std::cout << line << "\n";
    }
}

}  // namespace

void add_hap(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("hap", "Compute T_HW, per-unit times and the bottleneck of every case for a hardware model");
    auto hardware = std::make_shared<std::string>();
    auto tasks = std::make_shared<std::string>(default_tasks_dir());
    auto profile = std::make_shared<std::string>("cpu");
    auto ops = std::make_shared<std::vector<std::string>>();
    auto format = std::make_shared<std::string>("table");
    cmd->add_option("--hardware", *hardware, "Hardware model: a name from hardware/ or a YAML file")->required();
    cmd->add_option("--tasks", *tasks, "Tasks directory")->capture_default_str();
    cmd->add_option("--profile", *profile, "Case profile (cases.<profile>.yaml before cases.yaml)")->capture_default_str();
    cmd->add_option("--op", *ops, "Only these operators");
    cmd->add_option("--format", *format, "table or json")->capture_default_str();
    cmd->callback([&action, hardware, tasks, profile, ops, format] {
        action = [hardware, tasks, profile, ops, format] {
            if (*format != "table" && *format != "json") throw Error("unknown format '" + *format + "' (known: table, json)");
            const HardwareModel model = load_hardware_model(*hardware);
            const TaskDir dir = load_task_dir(*tasks, *profile, *ops);
            if (!dir.has_cases())
                throw Error("no cases for profile '" + *profile + "' in " + *tasks + " (no levelN/<op>/cases." + *profile +
                            ".yaml or cases.yaml)");
            auto rows = nlohmann::json::array();
            for (const auto& entry : dir.tasks) {
                const Operator* op = find_operator(entry.op);
                for (const auto& c : entry.cases) {
                    nlohmann::json row = {{"operator", entry.op}, {"level", entry.level}, {"case_id", c.case_id}};
                    if (!op) {
                        row["status"] = "not_implemented";
                        rows.push_back(row);
                        continue;
                    }
                    try {
                        const Problem p = resolve_problem(entry.proto, *op, c);
                        const HapResult r = solve(op->work(p), model);
                        row["status"] = "ok";
                        row["t_hw_us"] = r.t_hw_us;
                        row["unfloored_us"] = r.unfloored_us;
                        // "bottleneck" is the group label (Vector, Cube, MTE; Memory, Matrix
                        // on CPUs), as the reference benchmark reports it.
                        row["bottleneck"] = r.bottleneck_group;
                        row["bottleneck_group"] = r.bottleneck_group;
                        row["bottleneck_unit"] = r.bottleneck_unit;
                        row["unit_us"] = r.unit_us;
                        row["choice"] = r.choice.describe();
                        row["floored"] = r.floored;
                    } catch (const Error& e) {
                        row["status"] = "error";
                        row["error"] = e.what();
                    }
                    rows.push_back(row);
                }
            }
            if (*format == "json") {
                std::cout << rows.dump(1) << "\n";
                return 0;
            }
            std::cout << fmt::format("hardware model {} ({})\n", model.name, peak_origin_name(model.provenance.origin));
            std::cout << fmt::format("{:<26} {:>5} {:>12}  {:<10} {}\n", "operator", "case", "T_HW us", "bottleneck", "units (us)");
            for (const auto& row : rows) {
                if (row["status"] != "ok") {
                    std::cout << fmt::format("{:<26} {:>5} {:>12}  {}\n", row["operator"].get<std::string>(), row["case_id"].get<std::int64_t>(),
                                             "-", row["status"] == "error" ? row["error"].get<std::string>() : "not implemented");
                    continue;
                }
                std::string units;
                for (const auto& [name, t] : row["unit_us"].items()) units += fmt::format("{}={:.2f} ", name, t.get<double>());
                std::cout << fmt::format("{:<26} {:>5} {:>12.3f}  {:<10} {}\n", row["operator"].get<std::string>(),
                                         row["case_id"].get<std::int64_t>(), row["t_hw_us"].get<double>(),
                                         row["bottleneck"].get<std::string>(), units);
            }
            print_summary(rows, model.floor_us);
            return 0;
        };
    });
}

void add_calibrate(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("calibrate", "Measure this CPU's peaks and write a calibrated hardware model");
    auto out = std::make_shared<std::string>();
    auto quick = std::make_shared<bool>(false);
    auto threads = std::make_shared<int>(0);
    cmd->add_option("--out", *out, "Where to write the model (YAML)")->required();
    cmd->add_flag("--quick", *quick, "Short runs with small buffers (for tests; not for scoring)");
    cmd->add_option("--threads", *threads, "Threads (0: every allowed core)")->capture_default_str();
    cmd->callback([&action, out, quick, threads] {
        action = [out, quick, threads] {
            CalibrateOptions options;
            options.quick = *quick;
            options.threads = *threads;
            options.progress = [](const std::string& line) { std::cerr << "calibrate: " << line << "\n"; };
            const HardwareModel model = calibrate_cpu(options);
            std::ofstream f(*out);
            if (!f) throw Error("cannot write " + *out);
            f << to_yaml(model);
            std::cerr << "wrote " << *out << "\n";
            return 0;
        };
    });
}

}  // namespace hb::cli
