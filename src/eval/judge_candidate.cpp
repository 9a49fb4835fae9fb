#include "eval/judge_candidate.hpp"

#include <cstring>
#include <map>

#include <fmt/format.h>

#include "measure/cold_measure.hpp"
#include "suite/inputs.hpp"
#include "verify/call_comparison.hpp"
#include "verify/written_length.hpp"
#include "verify/thresholds.hpp"

namespace hb {

namespace {

Judgement failed(CaseStatus status, std::string message) {
    Judgement j;
    j.status = status;
    j.message = std::move(message);
    return j;
}

// Two correctness calls may differ only as a reordered reduction can: within the gate's tau
// on the relative scale (integer outputs: its absolute tolerance).
std::string nondeterminism_finding(const Problem& problem, const std::vector<TensorComparison>& comparisons) {
    static const std::map<DType, double> no_overrides;
    const auto& overrides = problem.proto ? problem.proto->tau_overrides : no_overrides;
    for (const auto& c : comparisons) {
        if (c.differing == 0) continue;
        for (const auto& out : problem.outputs) {
            if (out.name != c.output || out.tensors.empty()) continue;
            const Thresholds th = thresholds_for(out.tensors[0].dtype, overrides);
            const double allowed = th.integer() ? th.abs_tolerance() : th.tau;
            if (c.max_difference > allowed)
                return fmt::format("two calls on identical inputs gave different {} (largest difference {:.3g}, allowed {:.3g}): "
                                   "the kernel reads memory it did not initialize, or races",
                                   c.output, c.max_difference, allowed);
        }
    }
    return "";
}

}  // namespace

CaseStatus status_of(RunOutcome o) {
    switch (o) {
        case RunOutcome::ok: return CaseStatus::pass;
        case RunOutcome::kernel_error: return CaseStatus::kernel_error;
        case RunOutcome::crash: return CaseStatus::crash;
        case RunOutcome::timeout: return CaseStatus::timeout;
        case RunOutcome::out_of_bounds: return CaseStatus::out_of_bounds;
        case RunOutcome::input_mutation: return CaseStatus::input_mutation;
        case RunOutcome::load_error: return CaseStatus::compile_error;
        case RunOutcome::async_work: return CaseStatus::async_work;
        case RunOutcome::sandbox_violation: return CaseStatus::sandbox_violation;
        case RunOutcome::resource_limit: return CaseStatus::resource_limit;
    }
    return CaseStatus::crash;
}

void write_inputs(const CaseBuffers& buffers, int slot, const std::vector<Arg>& inputs) {
    const auto& views = buffers.input_slots.at(static_cast<std::size_t>(slot));
    for (std::size_t a = 0; a < inputs.size(); ++a)
        for (std::size_t k = 0; k < inputs[a].tensors.size(); ++k)
            if (inputs[a].tensors[k].bytes())
                std::memcpy(views[a].tensors[k].data, inputs[a].tensors[k].data(), inputs[a].tensors[k].bytes());
}

Judgement judge_candidate(KernelSession& session, const PreparedCase& prepared, Clock::time_point deadline) {
    const CaseBuffers& buffers = session.buffers();
    write_inputs(buffers, 0, prepared.inputs());

    prepare_call_buffers(buffers, 0, 0xff);
    const CallResult first_call = session.call(0, deadline, CallCheck::thorough);
    if (first_call.outcome != RunOutcome::ok) return failed(status_of(first_call.outcome), first_call.message);
    const std::vector<Arg> first = copy_args(buffers.outputs, first_call.written_lengths);

    prepare_call_buffers(buffers, 0, 0x00);
    const CallResult second_call = session.call(0, deadline, CallCheck::thorough);
    if (second_call.outcome != RunOutcome::ok) return failed(status_of(second_call.outcome), second_call.message);
    const std::vector<Arg> second = borrow_args(buffers.outputs);

    // Lengths of data-dependent outputs must fit what was allocated before anything is compared.
    const Problem& problem = prepared.problem();
    for (std::size_t a = 0; a < problem.outputs.size() && a < first_call.written_lengths.size(); ++a) {
        if (!problem.outputs[a].present || !problem.outputs[a].variable_length) continue;
        for (const auto& [call, length] : {std::pair<const char*, std::int64_t>{"the first correctness call", first_call.written_lengths[a]},
                                           {"the second correctness call", second_call.written_lengths[a]}})
            if (auto v = check_length_in_capacity(problem.outputs[a], length, call); v.status != CaseStatus::pass)
                return failed(v.status, v.reason);
    }
    // Then the first call's lengths against the golden's (WRONG_LENGTH), before the prefix
    // it reported is searched for poison (docs/results.md gives this order).
    if (has_variable_length_outputs(problem)) {
        ValueArgs<double> lengths(problem.outputs.size());
        for (std::size_t a = 0; a < problem.outputs.size(); ++a) {
            lengths[a].present = problem.outputs[a].present;
            for (std::size_t t = 0; t < problem.outputs[a].tensors.size(); ++t) {
                TensorValues<double> tv;
                tv.spec = problem.outputs[a].tensors[t];
                tv.written_length = a < first_call.written_lengths.size() ? first_call.written_lengths[a] : -1;
                lengths[a].tensors.push_back(std::move(tv));
            }
        }
        if (auto v = judge_written_lengths(problem, lengths, prepared.golden()); v.status != CaseStatus::pass)
            return failed(v.status, v.reason);
    }
    Judgement j;
    const auto comparisons = compare_correctness_calls(first, second, first_call.written_lengths, second_call.written_lengths);
    for (const auto& c : comparisons) {
        j.nondeterministic_elements += c.differing;
        if (c.unwritten > 0 && j.status == CaseStatus::pass) {
            j.status = CaseStatus::output_unwritten;
            j.message = std::to_string(c.unwritten) + " elements of output " + c.output +
                        (c.tensor_index ? "[" + std::to_string(c.tensor_index) + "]" : "") +
                        " were never written (first at flat index " + std::to_string(c.first_unwritten) + ")";
        }
    }
    if (j.status != CaseStatus::pass) return j;
    if (auto finding = nondeterminism_finding(prepared.problem(), comparisons); !finding.empty()) {
        j.status = CaseStatus::nondeterministic;  // keeps the count of differing elements
        j.message = std::move(finding);
        return j;
    }

    const OutputVerdictSummary verdict = prepared.judge(first);
    j.gate = verdict.gate;
    j.status = verdict.status;
    j.message = verdict.reason;
    return j;
}

Judgement judge_second_trial(KernelSession& session, const PreparedCase& prepared, std::uint64_t eval_seed,
                             Clock::time_point deadline) {
    const Problem& problem = prepared.problem();
    std::vector<Arg> inputs = allocate_args(problem.inputs, false);
    fill_inputs(problem, prepared.op(), base_input_seed(problem, eval_seed + 1), inputs);
    for (auto& a : inputs)
        for (auto& t : a.tensors)
            if (is_floating(t.spec.dtype))
                for (std::int64_t i = 0; i < t.numel(); ++i)
                    t.set(static_cast<std::size_t>(i), t.get(static_cast<std::size_t>(i)) + 0.01);
    const CaseBuffers& buffers = session.buffers();
    write_inputs(buffers, 0, inputs);
    prepare_call_buffers(buffers, 0, 0xff);
    const CallResult r = session.call(0, deadline, CallCheck::thorough);
    if (r.outcome != RunOutcome::ok) return failed(status_of(r.outcome), "trial 2: " + r.message);
    Judgement j;
    const OutputVerdictSummary verdict =
        judge_against_inputs(prepared.op(), problem, inputs, copy_args(buffers.outputs, r.written_lengths));
    j.gate = verdict.gate;
    j.status = verdict.status;
    if (verdict.status != CaseStatus::pass) j.message = "trial 2 (seed + 1, inputs + 0.01): " + verdict.reason;
    return j;
}

}  // namespace hb
