#include "suite/case_selection.hpp"

#include <algorithm>

#include "core/cache_dir.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/registry.hpp"
#include "suite/split.hpp"

namespace hb {

int CaseSelection::case_count() const {
    int n = 0;
    for (const auto& o : operators) n += static_cast<int>(o.cases.size());
    return n;
}

std::string split_id(const SplitChoice& split, const std::string& profile) {
    if (split.split != "hidden" || !split.hidden_seed) return "";
    return hmac_sha256_hex(machine_split_key(), "hidden split seed=" + std::to_string(*split.hidden_seed) +
                                                    " count=" + std::to_string(split.hidden_count) + " profile=" + profile)
        .substr(0, 32);
}

std::uint64_t hidden_generation_seed(std::uint64_t hidden_seed) {
    // "hidden\0\0" as a 64-bit tag, mixed in: a different stream from any public draw.
    std::uint64_t state = hidden_seed ^ 0x68696464656e0000ull;
    return splitmix64(state);
}

namespace {

// A hidden split's cases for one operator: drawn from the hidden seed, and any case that is
// the same problem as a public one (shipped, or as `gen-cases` draws the public seed today)
// replaced by the case at the same position of a batch drawn from a derived seed. Small case
// spaces (an operator whose shapes come from short lists) can otherwise hand an agent a
// hidden case it has seen.
std::vector<CaseSpec> hidden_cases(const Operator& op, const TaskEntry& entry, const Profile& profile, std::uint64_t seed,
                                   int count) {
    std::vector<CaseSpec> cases = generate_cases(op, entry.proto, profile, hidden_generation_seed(seed), count, 1);
    std::vector<CaseSpec> known = entry.cases;
    for (auto& c : generate_cases(op, entry.proto, profile, public_generation_seed, 20, 1)) known.push_back(std::move(c));
    auto is_public = [&](const CaseSpec& c) {
        return std::any_of(known.begin(), known.end(), [&](const CaseSpec& p) { return c.same_problem(p); });
    };
    for (std::size_t i = 0; i < cases.size(); ++i)
        for (std::uint64_t attempt = 1; attempt <= 16 && is_public(cases[i]); ++attempt) {
            std::uint64_t state = hidden_generation_seed(seed) + attempt * 0x9e3779b97f4a7c15ull;
            std::vector<CaseSpec> other = generate_cases(op, entry.proto, profile, splitmix64(state), count, 1);
            cases[i] = std::move(other[i]);
        }
    return cases;
}

}  // namespace

CaseSelection select_cases(const std::string& tasks_dir, const std::string& profile, const std::vector<std::string>& ops,
                           const SplitChoice& split) {
    if (split.split != "public" && split.split != "hidden")
        throw Error("--split must be public or hidden, not '" + split.split + "'");
    const bool hidden = split.split == "hidden";
    if (hidden && !split.hidden_seed)
        throw Error("--split hidden needs --hidden-seed S or --hidden-seed-file FILE (the secret the hidden cases are drawn from)");
    if (hidden && split.hidden_count < 1) throw Error("--hidden-count must be at least 1");

    CaseSelection selection;
    selection.tasks = load_task_dir(tasks_dir, profile, ops);
    for (const auto& entry : selection.tasks.tasks) {
        SelectedOperator chosen{&entry, find_operator(entry.op), {}};
        if (chosen.op) {
            std::vector<CaseSpec> all = hidden ? hidden_cases(*chosen.op, entry, profile_by_name(profile), *split.hidden_seed,
                                                              split.hidden_count)
                                               : entry.cases;
            for (auto& spec : all)
                if (split.case_ids.empty() ||
                    std::find(split.case_ids.begin(), split.case_ids.end(), spec.case_id) != split.case_ids.end())
                    chosen.cases.push_back(std::move(spec));
        }
        selection.operators.push_back(std::move(chosen));
    }
    const int total = selection.case_count();
    // A public split with no cases file for the profile (the shipped suite has cpu cases
    // only) would otherwise "pass" an empty run.
    if (total == 0 && !hidden && !selection.tasks.has_cases())
        throw Error("no public cases for profile '" + profile + "' in " + tasks_dir +
                    " (no levelN/<op>/cases." + profile + ".yaml or cases.yaml); draw some with `hapbench gen-cases --profile " +
                    profile + "`, or use --split hidden");
    if (!split.case_ids.empty() && total == 0) {
        std::string known;
        for (const auto& o : selection.operators)
            if (o.op) {
                const auto& source = hidden ? std::vector<CaseSpec>{} : o.entry->cases;
                std::string ids;
                for (const auto& c : source) ids += (ids.empty() ? "" : ",") + std::to_string(c.case_id);
                if (!ids.empty()) known += (known.empty() ? "" : "; ") + o.entry->op + ": " + ids;
            }
        throw Error("no case matches the --case ids given" + (known.empty() ? std::string() : " (case ids: " + known + ")"));
    }
    return selection;
}

}  // namespace hb
