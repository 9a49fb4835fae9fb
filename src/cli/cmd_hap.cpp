// hapbench hap: T_HW per case for a hardware model; hapbench calibrate: measure this CPU.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "hap/calibrate.hpp"
#include "hap/convention.hpp"
#include "hap/hardware_source.hpp"
#include "hap/published_thw.hpp"
#include "hap/solver.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/task_dir.hpp"

namespace hb::cli {

namespace {

// A published value more than this fraction above hapbench's bound is beatable by a kernel
// (docs/hap.md, "Published values above hapbench's bound"); the same tolerance as
// check-ascend-thw's agreement.
constexpr double published_tolerance = 0.10;

// The table's last lines: per level, how many cases were computed (and why others were
// not), the share of each bottleneck group, and how many sit at the floor; then how the
// published values compare.
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
    int compared = 0, within = 0, above = 0;
    std::map<std::string, int> above_by_op;
    for (const auto& row : rows) {
        if (!row.contains("published_t_hw_us") || row["status"] != "ok") continue;
        ++compared;
        // As check-ascend-thw counts agreement: T_HW relative to the published value.
        const double rel = row["t_hw_us"].get<double>() / row["published_t_hw_us"].get<double>() - 1;
        if (std::fabs(rel) <= published_tolerance) ++within;
        if (row.value("published_above_bound", false)) {
            ++above;
            ++above_by_op[row["operator"].get<std::string>()];
        }
    }
    if (!compared) return;
    std::cout << fmt::format("  published values: {} of {} within {:.0f}% of this convention's T_HW\n", within, compared,
                             100 * published_tolerance);
    if (!rows.empty() && rows[0].value("t_hw_convention", "") == convention_name(Convention::hapbench)) {
        std::string ops;
        for (const auto& [op, n] : above_by_op) ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", op, n);
        std::cout << fmt::format("  published above hapbench's bound by more than {:.0f}% (beatable there): {} cases{}\n",
                                 100 * published_tolerance, above, ops.empty() ? "" : " (" + ops + ")");
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
    auto convention = std::make_shared<std::string>(convention_name(Convention::hapbench));
    cmd->add_option("--hardware", *hardware, "Hardware model: a name from hardware/ or a YAML file")->required();
    cmd->add_option("--tasks", *tasks, "Tasks directory")->capture_default_str();
    cmd->add_option("--profile", *profile, "Case profile (cases.<profile>.yaml before cases.yaml)")->capture_default_str();
    cmd->add_option("--op", *ops, "Only these operators");
    cmd->add_option("--format", *format, "table or json")->capture_default_str();
    cmd->add_option("--convention", *convention,
                    "T_HW convention: hapbench (every compulsory byte, the tighter bound) or cann-bench (the reference "
                    "benchmark's published convention); docs/hap.md")
        ->capture_default_str();
    cmd->callback([&action, hardware, tasks, profile, ops, format, convention] {
        action = [hardware, tasks, profile, ops, format, convention] {
            if (*format != "table" && *format != "json") throw Error("unknown format '" + *format + "' (known: table, json)");
            const Convention conv = parse_convention(*convention);
            const HardwareModel model = load_hardware_model(*hardware);
            const TaskDir dir = load_task_dir(*tasks, *profile, *ops);
            if (!dir.has_cases())
                throw Error("no cases for profile '" + *profile + "' in " + *tasks + " (no levelN/<op>/cases." + *profile +
                            ".yaml or cases.yaml)");
            const PublishedThw published = load_published_thw(*tasks, model);
            auto rows = nlohmann::json::array();
            for (const auto& entry : dir.tasks) {
                const Operator* op = find_operator(entry.op);
                for (const auto& c : entry.cases) {
                    nlohmann::json row = {{"operator", entry.op}, {"level", entry.level}, {"case_id", c.case_id},
                                          {"t_hw_convention", convention_name(conv)}};
                    const double* published_us = published.find(entry.op, c.case_id);
                    if (published_us) row["published_t_hw_us"] = *published_us;
                    if (!op) {
                        row["status"] = "not_implemented";
                        rows.push_back(row);
                        continue;
                    }
                    try {
                        const Problem p = resolve_problem(entry.proto, *op, c);
                        const HapResult r = t_hw_under(conv, p, op->work(p), model);
                        row["status"] = "ok";
                        row["t_hw_us"] = r.t_hw_us;
                        row["unfloored_us"] = r.unfloored_us;
                        // "bottleneck" is the group label (Vector, Cube, MTE; Memory, Matrix
                        // on CPUs), as the reference benchmark reports it.
                        row["bottleneck"] = r.bottleneck_group;
                        row["bottleneck_group"] = r.bottleneck_group;
                        row["bottleneck_unit"] = r.bottleneck_unit;
                        row["unit_us"] = r.unit_us;
                        row["choice"] = conv == Convention::hapbench
                                            ? r.choice.describe()
                                            : "every input read once, the formula's operations (cann-bench)";
                        row["floored"] = r.floored;
                        // A recurrence's steps, one after another (docs/hap.md, "Dependent chains").
                        if (r.chain_us > 0) {
                            row["chain_us"] = r.chain_us;
                            row["chain_bound"] = r.chain_bound;
                        }
                        // Only hapbench's bound is one no kernel beats: a published value above it
                        // is a limit a kernel can beat.
                        if (published_us && conv == Convention::hapbench)
                            row["published_above_bound"] = *published_us > r.t_hw_us * (1 + published_tolerance);
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
            std::cout << fmt::format("hardware model {} ({}), T_HW convention {}\n", model.name,
                                     peak_origin_name(model.provenance.origin), convention_name(conv));
            if (!published.t_hw_us.empty()) std::cout << "published values: " << published.source_path << "\n";
            const bool show_published = !published.t_hw_us.empty();
            std::cout << fmt::format("{:<26} {:>5} {:>12}  {:<10} {}{}\n", "operator", "case", "T_HW us", "bottleneck",
                                     show_published ? fmt::format("{:>12}  {:<14} ", "published us", "") : "", "units (us)");
            for (const auto& row : rows) {
                if (row["status"] != "ok") {
                    std::cout << fmt::format("{:<26} {:>5} {:>12}  {}\n", row["operator"].get<std::string>(), row["case_id"].get<std::int64_t>(),
                                             "-", row["status"] == "error" ? row["error"].get<std::string>() : "not implemented");
                    continue;
                }
                std::string units;
                for (const auto& [name, t] : row["unit_us"].items()) units += fmt::format("{}={:.2f} ", name, t.get<double>());
                if (row.contains("chain_us"))
                    units += fmt::format("chain={:.2f}{} ", row["chain_us"].get<double>(),
                                         row["chain_bound"].get<bool>() ? " (binds)" : "");
                std::string published_cell;
                if (show_published) {
                    std::string flag;
                    if (row.contains("published_t_hw_us")) {
                        // ABOVE: the published value over hapbench's bound; off: T_HW over the
                        // published value, where they disagree by more than the tolerance.
                        const double published_over = row["published_t_hw_us"].get<double>() / row["t_hw_us"].get<double>() - 1;
                        const double t_hw_over = row["t_hw_us"].get<double>() / row["published_t_hw_us"].get<double>() - 1;
                        if (row.value("published_above_bound", false)) flag = fmt::format("ABOVE {:+.0f}%", 100 * published_over);
                        else if (std::fabs(t_hw_over) > published_tolerance) flag = fmt::format("off {:+.0f}%", 100 * t_hw_over);
                        published_cell = fmt::format("{:>12.3f}  {:<14} ", row["published_t_hw_us"].get<double>(), flag);
                    } else {
                        published_cell = fmt::format("{:>12}  {:<14} ", "-", "");
                    }
                }
                std::cout << fmt::format("{:<26} {:>5} {:>12.3f}  {:<10} {}{}\n", row["operator"].get<std::string>(),
                                         row["case_id"].get<std::int64_t>(), row["t_hw_us"].get<double>(),
                                         row["bottleneck"].get<std::string>(), published_cell, units);
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
