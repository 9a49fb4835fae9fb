// hapbench compare: judge output files against an exported case with the precision gate of
// `hapbench eval`. Exit 0 pass, 1 fail, 2 bad input. See docs/case-files.md.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "eval/case_compare.hpp"

namespace hb::cli {

namespace {

std::string region_rule(std::int64_t candidate, std::int64_t same_precision, bool normal) {
    if (normal && candidate == 0) return "0 candidate errors";
    if (normal && same_precision == 0) return "errors where the reference has none";
    return fmt::format("{} <= 2 * max({}, 1)", candidate, same_precision);
}

void print_verdict(const OutputVerdict& v, std::ostream& os) {
    os << fmt::format("  output {}  {}  {}  {} elements\n", v.label, dtype_name(v.dtype), compare_mode_name(v.mode), v.elements);
    const Thresholds& th = v.thresholds;
    switch (v.mode) {
        case CompareMode::skipped:
            os << "    " << v.reason << "\n";
            return;
        case CompareMode::index_gather:
            if (v.index_gather)
                os << fmt::format("    gathered {} indices ({}): {} out of range, {} select a wrong value\n", v.index_gather->checked,
                                  v.index_gather->form, v.index_gather->out_of_range, v.index_gather->mismatches);
            break;
        case CompareMode::integer:
            os << fmt::format("    tolerance +-{:g}{}: {} elements outside, max abs err {:g}\n", th.abs_tolerance(),
                              th.tau_overridden ? " (proto override)" : " (exact)", v.mismatches, v.max_abs_err);
            break;
        case CompareMode::bit_exact:
            os << fmt::format("    bit-exact (threshold 0): {} elements differ\n", v.mismatches);
            break;
        case CompareMode::relative: {
            os << fmt::format("    compared {} elements; thresholds tau {:.4g}{}, 10 tau {:.4g}\n", v.compared, th.tau,
                              th.tau_overridden ? fmt::format(" (proto override of {:.4g})", th.default_tau) : "",
                              th.max_rel);
            os << fmt::format("    mean rel err {:.4e}  {}  tau     {:.4e}\n", v.mean_rel_err,
                              v.mean_rel_err < th.tau ? "< " : ">=", th.tau);
            os << fmt::format("    max rel err  {:.4e}  {}  10 tau  {:.4e}", v.max_rel_err,
                              v.max_rel_err < th.max_rel ? "< " : ">=", th.max_rel);
            if (v.max_rel_err_index >= 0)
                os << fmt::format("  (index {}: got {:g}, expected {:g})", v.max_rel_err_index, v.max_rel_err_got,
                                  v.max_rel_err_expected);
            os << "\n";
            os << fmt::format("    special values: NaN {} matched, {} mismatched; inf {} matched, {} opposite sign, "
                              "{} one-sided (compared as +-max)\n",
                              v.nan_matched, v.nan_mismatches, v.inf_matched, v.inf_sign_mismatches, v.inf_one_sided);
            os << "    screen 1: " << (v.screen1_passed ? "pass" : "fail") << "\n";
            if (v.fallback_ran) {
                os << fmt::format("    fallback regions, both sides counted at the same positions, each placed by the candidate's output "
                                  "(tau_sv {:.4g}, eps_sv {:.4g}, tau_cb = tau_cz {:.4g}):\n",
                                  th.tau_sv, th.eps_sv, th.tau_cb);
                os << fmt::format("      {:<13} {:>10} {:>15}  {:<36} {}\n", "region", "candidate", "same-precision", "rule", "verdict");
                auto row = [&](const char* name, std::int64_t cand, std::int64_t sp, bool passed, bool normal) {
                    os << fmt::format("      {:<13} {:>10} {:>15}  {:<36} {}\n", name, cand, sp, region_rule(cand, sp, normal),
                                      passed ? "pass" : "FAIL");
                };
                row("small value", v.candidate_errors.small_value, v.same_precision_errors.small_value, v.region_passed.small_value, false);
                row("cancellation", v.candidate_errors.cancellation, v.same_precision_errors.cancellation, v.region_passed.cancellation, false);
                row("normal", v.candidate_errors.normal, v.same_precision_errors.normal, v.region_passed.normal, true);
                if (v.same_precision_nan > 0)
                    os << fmt::format("      the same-precision reference is NaN at {} of these positions (no error: a NaN "
                                      "is not evidence that the operation is hard)\n",
                                      v.same_precision_nan);
            }
            break;
        }
    }
    os << "    " << (v.passed ? "PASS" : "FAIL");
    if (v.passed && v.mode == CompareMode::relative && !v.screen1_passed) os << " (rescued by the fallback regions)";
    if (!v.passed) os << ": " << v.reason;
    os << "\n";
}

}  // namespace

void add_compare(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("compare", "Judge output .npy files against an exported case with the eval precision gate");
    auto case_dir = std::make_shared<std::string>();
    auto outputs = std::make_shared<std::vector<std::string>>();
    auto format = std::make_shared<std::string>("table");
    cmd->add_option("--case-dir", *case_dir, "Directory written by hapbench export")->required();
    cmd->add_option("--output", *outputs, "NAME=FILE for each output (list members: NAME[i]=FILE or NAME_i=FILE)")->required();
    cmd->add_option("--format", *format, "table or json")->capture_default_str();
    cmd->callback([&action, case_dir, outputs, format] {
        action = [case_dir, outputs, format] {
            if (*format != "table" && *format != "json") throw Error("--format must be table or json, not '" + *format + "'");
            std::vector<CandidateFile> files;
            for (const auto& o : *outputs) files.push_back(parse_candidate_arg(o));
            const ExportedCase exported = load_case_dir(*case_dir);
            const GateResult gate = compare_case(exported, files);
            const auto& meta = exported.meta;
            if (*format == "json") {
                nlohmann::json j = to_json(gate);
                j["operator"] = exported.problem.op();
                j["case_id"] = exported.problem.case_id();
                j["split"] = meta.value("split", nlohmann::json(nullptr));
                j["eval_seed"] = meta.value("eval_seed", nlohmann::json(nullptr));
                j["case_dir"] = *case_dir;
                std::cout << j.dump(2) << "\n";
            } else {
                std::cout << fmt::format("{} case {} ({} split, eval seed {}, case seed {})\n", exported.problem.op(),
                                         exported.problem.case_id(), meta.value("split", "?"),
                                         meta.value("eval_seed", nlohmann::json("?")).dump(),
                                         meta.value("case_seed", nlohmann::json("?")).dump());
                for (const auto& v : gate.outputs) print_verdict(v, std::cout);
                std::cout << "verdict: " << (gate.passed ? "PASS" : "FAIL: " + gate.reason) << "\n";
            }
            return gate.passed ? 0 : static_cast<int>(ExitCode::failures);
        };
    });
}

}  // namespace hb::cli
