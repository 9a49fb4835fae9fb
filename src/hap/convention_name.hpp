// The T_HW conventions hapbench computes (docs/hap.md, "The two conventions"):
//  - hapbench: every compulsory byte read and written, the reachable bytes only, vector work
//    as an implementation needs it at the sourced rates, over the implementation choices;
//  - cann-bench: the published reference benchmark's convention, every input read in full,
//    no writes, the operator's formula counted as written and priced by one cost table.
// Both are lower bounds; hapbench's is the tighter one and the default.
#pragma once

#include <string>
#include <string_view>

namespace hb {

enum class Convention { hapbench, cann_bench };

std::string_view convention_name(Convention c);
// Throws hb::Error (bad input, exit 2) naming the known conventions for any other name.
Convention parse_convention(std::string_view name);
// "hapbench, cann-bench"
std::string known_convention_names();

}  // namespace hb
