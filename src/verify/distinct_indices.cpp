#include "verify/distinct_indices.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "verify/index_gather.hpp"

namespace hb {

void apply_distinct_index_rule(const Problem& problem, const ValueArgs<double>& candidate_outputs, GateResult& result) {
    if (!problem.proto) return;
    for (std::size_t a = 0; a < problem.outputs.size() && a < problem.proto->outputs.size(); ++a) {
        const auto& def = problem.proto->outputs[a];
        const ArgSpec& spec = problem.outputs[a];
        if (!def.index_gather || !def.index_gather->distinct || !spec.present || a >= candidate_outputs.size()) continue;
        for (std::size_t t = 0; t < spec.tensors.size() && t < candidate_outputs[a].tensors.size(); ++t) {
            const std::string label = spec.is_list ? fmt::format("{}[{}]", spec.name, t) : spec.name;
            const auto verdict = check_distinct_indices(candidate_outputs[a].tensors[t].v, spec.tensors[t].shape,
                                                        problem.attr_int(def.index_gather->dim_attr));
            if (verdict.passed) continue;
            const std::string reason = "output " + label + ": " + verdict.reason;
            auto it = std::find_if(result.outputs.begin(), result.outputs.end(), [&](const OutputVerdict& v) { return v.label == label; });
            if (it != result.outputs.end()) {
                it->passed = false;
                it->mismatches += verdict.repeats;
                it->reason = it->reason.empty() ? reason : it->reason + "; " + reason;
            }
            const bool first_failure = result.passed;
            result.passed = false;
            result.reason = first_failure ? reason : result.reason + " (and output " + label + " repeats indices)";
        }
    }
}

}  // namespace hb
