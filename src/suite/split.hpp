// Case generation: the hidden split (80 cases per operator from a secret seed) and the
// generator that wrote the shipped public cases, both by methodology section 2.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/case_spec.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"

namespace hb {

class Operator;

// Draws `count` cases for one operator, deterministically from `seed`. Case ids run from
// `first_case_id`. The rules checker (suite/case_rules) accepts every result.
std::vector<CaseSpec> generate_cases(const Operator& op, const Proto& proto, const Profile& profile,
                                     std::uint64_t seed, int count, std::int64_t first_case_id = 1);

}  // namespace hb
