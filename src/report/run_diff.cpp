#include "report/run_diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/run_summary.hpp"

namespace hb {

namespace {

bool positive(double v) { return v > 0 && std::isfinite(v); }

// Properties that make two runs' cases different things: comparing them would mislead.
void refuse_incomparable(const RunResult& a, const RunResult& b, const std::string& na, const std::string& nb) {
    auto refuse = [&](const std::string& what, const std::string& va, const std::string& vb, const std::string& why) {
        throw Error(fmt::format("cannot compare {} with {}: {} differs ({} in {}, {} in {}); {}", na, nb, what,
                                va.empty() ? "none" : va, na, vb.empty() ? "none" : vb, nb, why));
    };
    if (a.target != b.target) refuse("the target", a.target, b.target, "the kernels ran on different devices");
    if (a.profile != b.profile) refuse("the case profile", a.profile, b.profile, "the cases have other sizes");
    if (a.split != b.split || a.split_id != b.split_id)
        refuse("the split", a.split + (a.split_id.empty() ? "" : " " + a.split_id.substr(0, 16)),
               b.split + (b.split_id.empty() ? "" : " " + b.split_id.substr(0, 16)),
               "cases with the same id are different cases");
    if (a.t_hw_convention != b.t_hw_convention)
        refuse("the T_HW convention", a.t_hw_convention, b.t_hw_convention,
               "T_HW and s_i are anchored differently (evaluate both with the same --convention)");
    if (a.hardware && b.hardware &&
        (a.hardware->name != b.hardware->name || a.hardware->kind != b.hardware->kind))
        refuse("the hardware model", a.hardware->name, b.hardware->name,
               "T_HW and s_i come from different machines' limits (evaluate both with the same --hardware)");
}

std::string definition(const CaseResult& c) {
    return fmt::format("{} {} {} {}", c.signature, attrs_to_string(c.attrs), c.value_range, c.input_elements);
}

CaseSide side_of(const RunResult& run, const CaseResult& c) {
    CaseSide s;
    s.status = c.status;
    s.t_cand_us = c.candidate.measured() && positive(c.t_cand_us) ? c.t_cand_us : 0;
    s.scored = perf_measured(run) && c.passed() && std::isfinite(c.score_i);
    s.score_i = s.scored ? c.score_i : 0;
    s.message = c.message;
    return s;
}

double abs_log(std::optional<double> ratio) { return ratio && *ratio > 0 ? std::fabs(std::log(*ratio)) : 0; }

}  // namespace

std::optional<double> CaseChange::score_change() const {
    if (!a.scored || !b.scored) return std::nullopt;
    return b.score_i - a.score_i;
}

std::optional<double> CaseChange::t_cand_ratio() const {
    if (!positive(a.t_cand_us) || !positive(b.t_cand_us)) return std::nullopt;
    return b.t_cand_us / a.t_cand_us;
}

RunDiff diff_runs(const RunResult& a, const RunResult& b, const std::string& name_a, const std::string& name_b) {
    refuse_incomparable(a, b, name_a, name_b);
    RunDiff d;
    d.name_a = name_a;
    d.name_b = name_b;
    d.submission_a = a.submission;
    d.submission_b = b.submission;
    d.started_a = a.started_at;
    d.started_b = b.started_at;
    d.total_a = a.total_score;
    d.total_b = b.total_score;
    d.timed_both = perf_measured(a) && perf_measured(b);

    if (a.suite_hash != b.suite_hash)
        d.warnings.push_back("the suites' hashes differ (other case files or another --op selection): cases are "
                             "matched by operator and id, and a case whose definition changed is listed apart");
    if (a.eval_seed != b.eval_seed)
        d.warnings.push_back(fmt::format("the eval seeds differ ({} and {}): the cases' inputs differ", a.eval_seed,
                                         b.eval_seed));
    if (!perf_measured(a) || !perf_measured(b))
        d.warnings.push_back(fmt::format("{} was not timed (--no-perf): only statuses and op scores are compared",
                                         !perf_measured(a) && !perf_measured(b) ? "neither run"
                                         : !perf_measured(a)                   ? name_a
                                                                               : name_b));
    if (a.hapbench_version != b.hapbench_version)
        d.warnings.push_back(fmt::format("hapbench versions differ ({} and {})", a.hapbench_version, b.hapbench_version));
    if (a.threads != b.threads)
        d.warnings.push_back(fmt::format("thread counts differ ({} and {}): times are not like for like", a.threads,
                                         b.threads));
    if (a.hardware.has_value() != b.hardware.has_value())
        d.warnings.push_back(fmt::format("only {} has a hardware model: T_HW and s_i are not compared",
                                         a.hardware ? name_a : name_b));

    std::map<int, std::pair<double, double>> levels;
    for (const auto& [level, score] : a.level_scores) levels[level].first = score;
    for (const auto& [level, score] : b.level_scores) levels[level].second = score;
    d.levels.assign(levels.begin(), levels.end());

    std::map<std::string, const OperatorResult*> ops_b;
    for (const auto& op : b.operators) ops_b[op.op] = &op;
    std::map<std::string, bool> in_a;
    int t_hw_changed = 0;
    double t_hw_change_max = 0;
    for (const auto& opa : a.operators) {
        in_a[opa.op] = true;
        const auto found = ops_b.find(opa.op);
        if (found == ops_b.end()) {
            d.operators_only_a.push_back(opa.op);
            for (const auto& c : opa.cases) d.only_a.push_back({c.op, c.case_id, c.signature, c.status});
            continue;
        }
        const OperatorResult& opb = *found->second;
        OperatorChange oc;
        oc.op = opa.op;
        oc.level = opa.level;
        oc.a = opa.score;
        oc.b = opb.score;
        oc.mean_score_a = mean_passing_score(opa);
        oc.mean_score_b = mean_passing_score(opb);
        std::map<std::int64_t, const CaseResult*> cases_b;
        for (const auto& c : opb.cases) cases_b[c.case_id] = &c;
        double log_ratio_sum = 0;
        int timed = 0;
        for (const auto& ca : opa.cases) {
            const auto cb_it = cases_b.find(ca.case_id);
            if (cb_it == cases_b.end()) {
                d.only_a.push_back({ca.op, ca.case_id, ca.signature, ca.status});
                continue;
            }
            const CaseResult& cb = *cb_it->second;
            cases_b.erase(cb_it);
            if (definition(ca) != definition(cb)) {
                d.redefined.push_back({ca.op, ca.case_id, ca.signature + " -> " + cb.signature, cb.status});
                continue;
            }
            CaseChange cc{ca.op, ca.level, ca.case_id, ca.signature, side_of(a, ca), side_of(b, cb)};
            if (a.hardware && b.hardware && positive(ca.t_hw_us) && positive(cb.t_hw_us) && ca.t_hw_us != cb.t_hw_us) {
                ++t_hw_changed;
                t_hw_change_max = std::max(t_hw_change_max, std::fabs(cb.t_hw_us / ca.t_hw_us - 1));
            }
            if (const auto r = cc.t_cand_ratio()) {
                log_ratio_sum += std::log(*r);
                ++timed;
            }
            ++oc.cases_compared;
            oc.status_changes += cc.status_changed();
            d.cases.push_back(std::move(cc));
        }
        for (const auto& [id, cb] : cases_b) d.only_b.push_back({cb->op, id, cb->signature, cb->status});
        if (timed) oc.t_cand_ratio = std::exp(log_ratio_sum / timed);
        d.operators.push_back(std::move(oc));
    }
    for (const auto& opb : b.operators)
        if (!in_a.count(opb.op)) {
            d.operators_only_b.push_back(opb.op);
            for (const auto& c : opb.cases) d.only_b.push_back({c.op, c.case_id, c.signature, c.status});
        }
    if (t_hw_changed)
        d.warnings.push_back(fmt::format("T_HW differs in {} compared cases (by up to {:.1f}%: recalibrated peaks or "
                                         "changed work models): s_i changes include that",
                                         t_hw_changed, 100 * t_hw_change_max));

    std::stable_sort(d.operators.begin(), d.operators.end(), [](const OperatorChange& x, const OperatorChange& y) {
        return std::make_tuple(-std::fabs(x.op_score_change()), -x.status_changes, -abs_log(x.t_cand_ratio), x.op) <
               std::make_tuple(-std::fabs(y.op_score_change()), -y.status_changes, -abs_log(y.t_cand_ratio), y.op);
    });
    std::stable_sort(d.cases.begin(), d.cases.end(), [](const CaseChange& x, const CaseChange& y) {
        auto key = [](const CaseChange& c) {
            return std::make_tuple(!c.correctness_changed(), !c.status_changed(), -std::fabs(c.score_change().value_or(0)),
                                   -abs_log(c.t_cand_ratio()), c.op, c.case_id);
        };
        return key(x) < key(y);
    });
    return d;
}

}  // namespace hb
