// The functional correctness gate (methodology section 3): each output of a case against
// the truncated fp64 golden, with the special-value rules, screen 1 and the three-region
// fallback against the same-precision reference; index outputs by gathering.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "ops/problem.hpp"
#include "ops/values.hpp"
#include "verify/index_gather.hpp"
#include "verify/thresholds.hpp"

namespace hb {

// relative: screen 1 + fallback (floating outputs, tau > 0); bit_exact: floating outputs
// with tau == 0; integer: exact or +-k (integer and bool outputs); index_gather: indices
// checked by the values they select; skipped: proto `compare: false`.
enum class CompareMode { relative, bit_exact, integer, index_gather, skipped };
std::string_view compare_mode_name(CompareMode mode);

// Fallback regions; see region rules in methodology section 3.
struct RegionCounts {
    std::int64_t small_value = 0;
    std::int64_t cancellation = 0;
    std::int64_t normal = 0;
};
struct RegionPass {
    bool small_value = false;
    bool cancellation = false;
    bool normal = false;
};

struct OutputVerdict {
    std::string label;  // "y", or "y[2]" for a member of a tensor list
    DType dtype = DType::f32;
    CompareMode mode = CompareMode::relative;
    bool passed = false;
    std::string reason;  // one line: why it failed, or why it was skipped
    Thresholds thresholds;

    std::int64_t elements = 0;  // candidate elements
    std::int64_t compared = 0;  // elements that entered the error statistics
    double mean_rel_err = 0;
    double max_rel_err = 0;
    std::int64_t max_rel_err_index = -1;  // -1 when no element had a nonzero error
    double max_rel_err_got = 0;
    double max_rel_err_expected = 0;  // golden_truncated, after one-sided inf replacement

    // Special values (golden_truncated against candidate).
    std::int64_t nan_matched = 0;
    std::int64_t nan_mismatches = 0;
    std::int64_t first_nan_mismatch_index = -1;
    std::int64_t inf_matched = 0;        // same-sign infinity on both sides
    std::int64_t inf_sign_mismatches = 0;  // opposite-sign infinity
    std::int64_t first_inf_sign_mismatch_index = -1;
    std::int64_t inf_one_sided = 0;  // replaced by sign * dtype_max and compared

    // bit_exact and integer modes: elements outside the tolerance.
    std::int64_t mismatches = 0;
    std::int64_t first_mismatch_index = -1;
    double first_mismatch_got = 0;
    double first_mismatch_expected = 0;
    double max_abs_err = 0;  // integer mode

    // relative mode.
    bool screen1_passed = false;
    bool fallback_ran = false;
    // Both sides over the same positions, each in the region the candidate's output gives it.
    RegionCounts candidate_errors;
    RegionCounts same_precision_errors;
    std::int64_t same_precision_nan = 0;  // of those positions, where the reference is NaN (no error)
    RegionPass region_passed;

    std::optional<IndexGatherVerdict> index_gather;  // index_gather mode
};

// Compares one output tensor. `candidate` holds the candidate's values upcast to fp64 (exact
// values of `dtype`), `golden_fp64` the fp64 golden (rounded to `dtype` here), and
// `same_precision` the same-precision reference already rounded to `dtype` (used only by
// the fallback; may be empty for integer and bit-exact outputs). `label` prefixes the reason.
// A candidate of the wrong length fails; a same-precision reference of the wrong length is
// a harness bug and throws hb::Error.
OutputVerdict compare_output(std::span<const double> candidate,
                             std::span<const double> golden_fp64,
                             std::span<const double> same_precision, DType dtype,
                             const Thresholds& thresholds, const std::string& label = "");
// The same, with the same-precision values asked for only when the fallback runs (they are
// expensive: a second reference computation).
using SamePrecisionValues = std::function<std::span<const double>()>;
OutputVerdict compare_output(std::span<const double> candidate, std::span<const double> golden_fp64,
                             const SamePrecisionValues& same_precision, DType dtype, const Thresholds& thresholds,
                             const std::string& label = "");

struct GateResult {
    bool passed = false;
    std::string reason;  // the first failing output's reason, and how many others failed
    std::vector<OutputVerdict> outputs;
};

// Runs the gate on every output (and list member) of a case, in proto order. Every output
// passes on its own dtype's thresholds, with tau overrides from problem.proto. An output
// with `index_gather` is validated by gathering from `inputs` (its value_output form uses
// the candidate's own value output); one with `compare: false` and no index_gather is
// skipped. The four argument lists must have the problem's outputs (inputs: its inputs);
// an output count or shape mismatch is a structural failure that the caller detects
// first, so a mismatch here throws hb::Error.
GateResult run_precision_gate(const Problem& problem, const ValueArgs<double>& candidate_outputs,
                              const ValueArgs<double>& golden,
                              const ValueArgs<double>& same_precision,
                              const ValueArgs<double>& inputs);
// The same, with the same-precision reference computed only if some output's fallback runs
// (the caller memoizes it: it is asked for once per failing output).
using SamePrecisionReference = std::function<const ValueArgs<double>&()>;
GateResult run_precision_gate(const Problem& problem, const ValueArgs<double>& candidate_outputs,
                              const ValueArgs<double>& golden, const SamePrecisionReference& same_precision,
                              const ValueArgs<double>& inputs);

// Whether run_precision_gate reads `inputs` for this problem: only an output checked by
// gathering (index_gather) does; every other gate may be given empty inputs.
bool gate_reads_inputs(const Problem& problem);

// The verdict on a timed call's fresh inputs (eval/verify_timed_calls). The fallback's region
// counts are decided by summation order on fresh random draws that no case author looked at:
// in a cancellation-heavy range an honest kernel loses the normal region's zero rule on an
// element now and then (the reference adaptive_avg_pool_3d on [-1e30, 1e30]: one element in
// 4,096), and on a large output it makes a few more errors than the same-precision reference
// in any region (the reference adaptive_avg_pool_3d case 9, 65,024 outputs: 3 normal-region
// errors against 1, in 1 of 100 calls; the reference roi_align case 4, 2.3 million outputs:
// 9 cancellation-region errors against 0, in 1 of 100). On fresh inputs each region of an
// output that failed only by the fallback's counts may therefore have at most
// max(2 * max(same-precision errors, 1), ceil(compared / 10,000)) errors. Every other rule
// holds as on the case's own inputs (special values, integer and bit-exact outputs, gathered
// indices). A stale or reduced-precision output misses on a large share of the elements and
// still fails; the errors this lets through are at most 1 in 10,000 elements (or 2), worth
// nothing in time.
// Returns the number of errors this allowed (0 when `gate` passed as it stands), or nullopt
// when the gate fails on fresh inputs too.
inline constexpr std::int64_t kFreshInputElementsPerError = 10000;
std::int64_t fresh_input_region_limit(std::int64_t same_precision_errors, std::int64_t compared);
std::optional<std::int64_t> fresh_input_allowance(const GateResult& gate);

// JSON for the report. Non-finite numbers (got/expected values) are written as the strings
// "nan", "inf", "-inf"; an index of -1 (none) as null. OutputVerdict fields:
//   label, dtype, mode ("relative" | "bit_exact" | "integer" | "index_gather" | "skipped"),
//   passed, reason, thresholds (see to_json(Thresholds)), elements, compared,
//   mean_rel_err, max_rel_err, max_rel_err_index, max_rel_err_got, max_rel_err_expected,
//   special_values {nan_matched, nan_mismatches, first_nan_mismatch_index, inf_matched,
//                   inf_sign_mismatches, first_inf_sign_mismatch_index, inf_one_sided},
//   mismatches, first_mismatch_index, first_mismatch_got, first_mismatch_expected,
//   max_abs_err, screen1_passed,
//   fallback: null when it did not run, else {candidate_errors, same_precision_errors,
//             same_precision_nan, region_passed}, the counts and verdicts each
//             {small_value, cancellation, normal},
//   index_gather: null, or {form, dim, checked, out_of_range, first_out_of_range_position,
//                  first_out_of_range_index, mismatches, first_mismatch_position,
//                  first_mismatch_index, first_mismatch_got, first_mismatch_expected}.
// GateResult: {passed, reason, outputs: [OutputVerdict...]}.
nlohmann::json to_json(const OutputVerdict& verdict);
nlohmann::json to_json(const GateResult& result);

}  // namespace hb
