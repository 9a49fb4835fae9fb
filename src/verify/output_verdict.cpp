#include "verify/output_verdict.hpp"

#include "verify/written_length.hpp"

namespace hb {

OutputVerdictSummary judge_outputs(const Problem& problem, const ValueArgs<double>& candidate,
                                   const ValueArgs<double>& golden, const SamePrecisionReference& same_precision,
                                   const ValueArgs<double>& inputs) {
    OutputVerdictSummary v;
    if (!has_variable_length_outputs(problem)) {
        v.gate = run_precision_gate(problem, candidate, golden, same_precision, inputs);
    } else {
        if (const auto lengths = judge_written_lengths(problem, candidate, golden); lengths.status != CaseStatus::pass) {
            v.status = lengths.status;
            v.reason = lengths.reason;
            return v;
        }
        const Problem cut = written_prefix_problem(problem, golden);
        std::optional<ValueArgs<double>> cut_reference;
        v.gate = run_precision_gate(cut, cut_to_written_prefix(problem, golden, candidate),
                                    cut_to_written_prefix(problem, golden, golden),
                                    SamePrecisionReference([&]() -> const ValueArgs<double>& {
                                        if (!cut_reference) cut_reference = cut_to_written_prefix(problem, golden, same_precision());
                                        return *cut_reference;
                                    }),
                                    inputs);
    }
    if (!v.gate->passed) {
        v.status = CaseStatus::precision_fail;
        v.reason = v.gate->reason;
    }
    return v;
}

}  // namespace hb
