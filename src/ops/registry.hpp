// Every operator hapbench implements, by task-directory name.
#pragma once

#include <string>
#include <vector>

#include "ops/operator.hpp"

namespace hb {

const Operator* find_operator(const std::string& name);  // nullptr when unknown
std::vector<const Operator*> all_operators();
std::string known_operator_names();  // "exp, foreach_addcdiv_scalar, ..."

}  // namespace hb
