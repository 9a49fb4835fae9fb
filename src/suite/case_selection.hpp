// Which cases a command works on, decided in one place for eval, baseline, export and
// check-cases: the operators of a tasks directory (or the ones named), the public split (the
// shipped cases files) or a hidden split drawn from a secret seed, and optionally only some
// case ids. A hidden split is drawn from a seed domain-separated from the public one, so no
// hidden seed reproduces the shipped cases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/case_spec.hpp"
#include "suite/task_dir.hpp"

namespace hb {

class Operator;

struct SplitChoice {
    std::string split = "public";  // or "hidden"
    std::optional<std::uint64_t> hidden_seed;
    int hidden_count = 80;
    std::vector<std::int64_t> case_ids;  // empty: all
};

struct SelectedOperator {
    const TaskEntry* entry = nullptr;
    const Operator* op = nullptr;  // null: hapbench does not implement it
    std::vector<CaseSpec> cases;
};

struct CaseSelection {
    TaskDir tasks;
    std::vector<SelectedOperator> operators;
    int case_count() const;
};

// Checks the split choice (bad names, a hidden split without a seed) and selects; an
// empty result is an error that says why (no cases file for the profile, no such case id).
CaseSelection select_cases(const std::string& tasks_dir, const std::string& profile, const std::vector<std::string>& ops,
                           const SplitChoice& split);

// Identifies a hidden split in results and exports without revealing its seed: 32 hex
// digits of HMAC-SHA256, under this machine's split key, of the seed, count and profile.
// Empty for the public split.
std::string split_id(const SplitChoice& split, const std::string& profile);

// The seed gen-cases drew the shipped public cases files with.
inline constexpr std::uint64_t public_generation_seed = 2026;

// The seed generate_cases draws a hidden split from: never equal to a seed the public
// cases files were drawn with (`hapbench gen-cases --seed S` uses S itself).
std::uint64_t hidden_generation_seed(std::uint64_t hidden_seed);

}  // namespace hb
