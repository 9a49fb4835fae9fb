// How a RunDiff is shown: a plain-text report for a terminal and a self-contained HTML page.
#pragma once

#include <ostream>

#include "report/run_diff.hpp"

namespace hb {

void write_diff_text(const RunDiff& diff, std::ostream& out);
void write_diff_html(const RunDiff& diff, std::ostream& out);

}  // namespace hb
