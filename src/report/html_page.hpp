// The frame of hapbench's HTML pages (the run report and the diff of two runs): one
// self-contained file with inline CSS, inline SVG and a few lines of inline script that sort
// tables; no network, no external script, style sheet or font, so it can be mailed as is.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "core/status.hpp"

namespace hb::html {

// Text for element content and attribute values (& < > " ').
std::string escape(std::string_view text);

// <!DOCTYPE html> ... <body>, with the style sheet; `title` is escaped here.
void begin_page(std::ostream& out, const std::string& title);
// The sorting script and </body></html>.
void end_page(std::ostream& out);

// The colour class of a status, one of five: pass, audit (correct but flagged:
// IMPOSSIBLE_TIME), wrong (a non-structural failure: wrong or stale outputs), broken (a
// structural failure), notrun.
std::string_view status_class(CaseStatus status);
// A legend of those classes, as a row of swatches.
void status_legend(std::ostream& out);

// A horizontal bar for `value` in [0, full] with a tick at `mark` and the value printed.
std::string score_bar(double value, double full, double mark, const std::string& label);

}  // namespace hb::html
