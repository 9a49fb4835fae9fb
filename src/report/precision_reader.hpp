// Reads the precision gate's verdict back from a results file: the inverse of
// to_json(GateResult) in verify/precision_gate.hpp, field for field.
#pragma once

#include "report/json_field.hpp"
#include "verify/precision_gate.hpp"

namespace hb {

GateResult read_gate_result(const JsonField& field);

}  // namespace hb
