#include "verify/written_length.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace hb {

namespace {

std::int64_t capacity_of(const TensorSpec& spec) { return spec.shape.empty() ? 1 : spec.shape[0]; }

// Elements per dim-0 entry of a variable-length tensor (a row of a [capacity, ...] tensor).
std::int64_t entry_elements(const TensorSpec& spec) {
    std::int64_t n = 1;
    for (std::size_t d = 1; d < spec.shape.size(); ++d) n *= spec.shape[d];
    return n;
}

std::string describe_reported(std::int64_t reported) {
    return reported == kWrittenLengthUnset ? std::string("no length (*written_length was never set)")
                                           : fmt::format("length {}", reported);
}

// The golden's length of output `a` (the same for every member of a list), checked: the
// golden is hapbench's own code, so a missing or impossible length is an internal error.
std::int64_t golden_length(const Problem& problem, const ValueArgs<double>& golden, std::size_t a) {
    const ArgSpec& spec = problem.outputs[a];
    if (a >= golden.size() || golden[a].tensors.size() != spec.tensors.size())
        throw Error(problem.context() + "the golden has no tensors for output '" + spec.name + "'", ExitCode::internal);
    std::int64_t length = -1;
    for (std::size_t t = 0; t < spec.tensors.size(); ++t) {
        const std::int64_t l = golden[a].tensors[t].written_length;
        if (l < 0 || l > capacity_of(spec.tensors[t]))
            throw Error(problem.context() + fmt::format("the golden of output '{}' set written length {} (capacity {}): "
                                                        "an operator with outputs of data-dependent length must set it",
                                                        spec.name, l, capacity_of(spec.tensors[t])),
                        ExitCode::internal);
        if (t > 0 && l != length)
            throw Error(problem.context() + "the golden's members of output '" + spec.name + "' have different lengths",
                        ExitCode::internal);
        length = l;
    }
    return length;
}

}  // namespace

bool has_variable_length_outputs(const Problem& problem) {
    for (const auto& out : problem.outputs)
        if (out.present && out.variable_length) return true;
    return false;
}

WrittenLengthVerdict check_length_in_capacity(const ArgSpec& output, std::int64_t reported, const std::string& when) {
    WrittenLengthVerdict v;
    if (output.tensors.empty()) return v;
    const std::int64_t capacity = capacity_of(output.tensors[0]);
    if (reported >= 0 && reported <= capacity) return v;
    v.status = CaseStatus::length_over_capacity;
    v.reason = fmt::format("output {} (data-dependent length, capacity {} along dim 0){} reported {}{}", output.name,
                           capacity, when.empty() ? "" : " in " + when, describe_reported(reported),
                           reported == kWrittenLengthUnset ? ""
                           : reported < 0                  ? ": a length cannot be negative"
                                                           : ": more entries than the harness allocated");
    return v;
}

WrittenLengthVerdict judge_written_lengths(const Problem& problem, const ValueArgs<double>& candidate,
                                           const ValueArgs<double>& golden) {
    if (candidate.size() != problem.outputs.size())
        throw Error(problem.context() + fmt::format("the length judge got {} candidate outputs for {}", candidate.size(),
                                                    problem.outputs.size()),
                    ExitCode::internal);
    for (std::size_t a = 0; a < problem.outputs.size(); ++a) {
        const ArgSpec& spec = problem.outputs[a];
        if (!spec.present || !spec.variable_length || spec.tensors.empty()) continue;
        if (candidate[a].tensors.empty())
            throw Error(problem.context() + "the candidate has no tensors for output '" + spec.name + "'", ExitCode::internal);
        const std::int64_t reported = candidate[a].tensors[0].written_length;
        if (auto v = check_length_in_capacity(spec, reported); v.status != CaseStatus::pass) return v;
        const std::int64_t expected = golden_length(problem, golden, a);
        if (reported != expected) {
            WrittenLengthVerdict v;
            v.status = CaseStatus::wrong_length;
            v.reason = fmt::format("output {} (data-dependent length) has {} entries, expected {}{}", spec.name, reported,
                                   expected, reported > expected ? " (too many)" : " (too few)");
            return v;
        }
    }
    return {};
}

Problem written_prefix_problem(const Problem& problem, const ValueArgs<double>& golden) {
    Problem cut = problem;
    for (std::size_t a = 0; a < cut.outputs.size(); ++a) {
        ArgSpec& spec = cut.outputs[a];
        if (!spec.present || !spec.variable_length) continue;
        const std::int64_t length = golden_length(problem, golden, a);
        for (auto& t : spec.tensors)
            if (!t.shape.empty()) t.shape[0] = length;
    }
    return cut;
}

ValueArgs<double> cut_to_written_prefix(const Problem& problem, const ValueArgs<double>& golden, ValueArgs<double> values) {
    if (values.size() != problem.outputs.size())
        throw Error(problem.context() + fmt::format("cut_to_written_prefix got {} outputs for {}", values.size(),
                                                    problem.outputs.size()),
                    ExitCode::internal);
    for (std::size_t a = 0; a < problem.outputs.size(); ++a) {
        const ArgSpec& spec = problem.outputs[a];
        if (!spec.present || !spec.variable_length) continue;
        const std::int64_t length = golden_length(problem, golden, a);
        if (values[a].tensors.size() != spec.tensors.size())
            throw Error(problem.context() + "output '" + spec.name + "' has another number of tensors than its spec",
                        ExitCode::internal);
        for (std::size_t t = 0; t < spec.tensors.size(); ++t) {
            auto& tv = values[a].tensors[t];
            if (tv.v.empty()) continue;  // not computed (lazy same-precision reference)
            const auto expected_size = static_cast<std::size_t>(spec.tensors[t].numel());
            if (tv.v.size() != expected_size)
                throw Error(problem.context() + fmt::format("output '{}' holds {} values, its capacity {}", spec.name,
                                                            tv.v.size(), expected_size),
                            ExitCode::internal);
            // The candidate's length equals the golden's here (judged first); a reference's
            // may not differ.
            if (tv.written_length >= 0 && tv.written_length != length)
                throw Error(problem.context() + fmt::format("a reference wrote {} entries of output '{}', the golden {}: "
                                                            "both references must agree on the length",
                                                            tv.written_length, spec.name, length),
                            ExitCode::internal);
            tv.v.resize(static_cast<std::size_t>(length * entry_elements(spec.tensors[t])));
            if (!tv.spec.shape.empty()) tv.spec.shape[0] = length;
            tv.written_length = length;
        }
    }
    return values;
}

}  // namespace hb
