// Outputs of data-dependent length (ArgSpec::variable_length: unique's values and counts,
// nms's kept indices): the harness allocates a capacity along dim 0 and the kernel reports,
// through hb_arg::written_length, how many leading dim-0 entries hold its result. This judge
// owns what such a report may be:
//   - a length outside [0, capacity] (negative, never set, or beyond what the harness
//     allocated) is LENGTH_OVER_CAPACITY;
//   - a length other than the golden's is WRONG_LENGTH (the result has the wrong shape);
//   - otherwise candidate, golden and same-precision reference are cut to that prefix, and
//     the ordinary precision gate judges exactly the prefix: a wrong value there is a
//     PRECISION_FAIL, an entry never written there OUTPUT_UNWRITTEN (the worker's two-poison
//     check looks at the prefix only), and nothing beyond the prefix is looked at.
// Both failures are structural (docs/results.md): the written length is the output's shape.
#pragma once

#include <cstdint>
#include <string>

#include "core/kernel_call.hpp"
#include "core/status.hpp"
#include "ops/problem.hpp"
#include "ops/values.hpp"

namespace hb {

struct WrittenLengthVerdict {
    CaseStatus status = CaseStatus::pass;  // pass, length_over_capacity or wrong_length
    std::string reason;                    // one line naming the output, set on failure
};

bool has_variable_length_outputs(const Problem& problem);

// Checks one reported length against an output's capacity (dim 0 of its spec); `when`
// says which call reported it ("", "the second correctness call", ...).
WrittenLengthVerdict check_length_in_capacity(const ArgSpec& output, std::int64_t reported, const std::string& when = "");

// Every variable-length output of the case: the candidate's reported length (its
// TensorValues::written_length) against the capacity, then against the golden's. Outputs
// are judged in proto order and the first failure is returned. A golden that did not set
// its length is a bug of the operator and throws an internal hb::Error.
WrittenLengthVerdict judge_written_lengths(const Problem& problem, const ValueArgs<double>& candidate,
                                           const ValueArgs<double>& golden);

// The problem as the precision gate sees it once the lengths passed: dim 0 of every
// variable-length output is the golden's written length.
Problem written_prefix_problem(const Problem& problem, const ValueArgs<double>& golden);

// `values` (candidate, golden or same-precision outputs) cut to the golden's written prefix
// along dim 0 of every variable-length output. A tensor with no values (a same-precision
// reference not computed yet) stays empty; a same-precision reference that wrote another
// length than the golden throws an internal hb::Error (the fallback would compare entries
// it never computed).
ValueArgs<double> cut_to_written_prefix(const Problem& problem, const ValueArgs<double>& golden,
                                        ValueArgs<double> values);

}  // namespace hb
