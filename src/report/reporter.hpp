// Output formats of a run, behind one interface: json (for scripts), table (for a
// terminal), markdown (for a pull request or a log), html (one self-contained page with
// plots, to look at and to send). stdout carries only the chosen format.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "eval/results.hpp"

namespace hb {

class Reporter {
  public:
    virtual ~Reporter() = default;
    virtual void write(const RunResult& run, std::ostream& out) const = 0;
};

// "table", "json", "markdown" or "html"; anything else is an error listing these.
std::unique_ptr<Reporter> make_reporter(const std::string& format);

nlohmann::json run_to_json(const RunResult& run);

}  // namespace hb
