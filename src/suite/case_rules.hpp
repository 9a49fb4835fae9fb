// The case-design rules of methodology section 2, checked on a list of cases (every
// shipped cases file, and every hidden split, is held to them).
#pragma once

#include <string>
#include <vector>

#include "spec/case_spec.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"

namespace hb {

class Operator;

// Returns one message per violated rule; empty when the cases meet every rule.
std::vector<std::string> check_case_rules(const std::vector<CaseSpec>& cases, const Proto& proto, const Operator& op,
                                          const Profile& profile);

}  // namespace hb
