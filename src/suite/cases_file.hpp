// Reading and writing cases.yaml in the reference benchmark's layout.
#pragma once

#include <string>
#include <vector>

#include "spec/case_spec.hpp"
#include "spec/proto.hpp"

namespace hb {

// Parses every case; a malformed case throws hb::Error naming file, line, case and field.
std::vector<CaseSpec> load_cases(const std::string& path, const Proto& proto);
// Serializes cases in the same layout (used by `hapbench gen-cases`).
std::string cases_to_yaml(const std::vector<CaseSpec>& cases, const Proto& proto,
                           const std::string& header_comment);

}  // namespace hb
