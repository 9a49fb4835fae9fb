// Turns a case as written into a Problem: defaults applied, argument specs built, outputs
// inferred by the operator.
#pragma once

#include "ops/operator.hpp"
#include "ops/problem.hpp"

namespace hb {

Problem resolve_problem(const Proto& proto, const Operator& op, const CaseSpec& spec);

}  // namespace hb
