// The roofline-style plot of one operator's cases (inline SVG): each case at its T_HW on the
// x axis and its times on the y axis, both log scale. The diagonal y = T_HW is the hardware
// limit and the dashed y = 10 T_HW the cap on T_base; a case's T_cand is a dot coloured by
// status, joined to its T_base (hollow square), so the distance from the dot down to the
// diagonal is what is left to gain. Cases without a candidate time (failed before timing,
// --no-perf) sit in a "not timed" band under the axis, so every case has exactly one dot.
// Hovering a dot shows the case (SVG <title>).
#pragma once

#include <ostream>

#include "eval/results.hpp"

namespace hb {

// `plot_id` makes the plot's element ids unique within the page.
void write_case_plot(std::ostream& out, const OperatorResult& op, int plot_id);

}  // namespace hb
