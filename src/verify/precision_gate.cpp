#include "verify/precision_gate.hpp"

#include "verify/distinct_indices.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/dtype_blocks.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"

namespace hb {

std::string_view compare_mode_name(CompareMode mode) {
    switch (mode) {
        case CompareMode::relative: return "relative";
        case CompareMode::bit_exact: return "bit_exact";
        case CompareMode::integer: return "integer";
        case CompareMode::index_gather: return "index_gather";
        case CompareMode::skipped: return "skipped";
    }
    return "unknown";
}

namespace {

// e = |out - ref| / (|ref| + 1e-7), methodology section 3.
constexpr double kRelErrFloor = 1e-7;

double relative_error(double out, double ref) {
    return std::fabs(out - ref) / (std::fabs(ref) + kRelErrFloor);
}

enum class ElementKind { compared, nan_match, inf_match, nan_mismatch, inf_sign_mismatch };

// One element pair after the special-value rules: NaN positions must match, same-sign
// infinities match and leave the statistics, opposite-sign infinities fail, and a one-sided
// infinity becomes sign * (largest finite value) and is compared like any other value.
struct Element {
    ElementKind kind = ElementKind::compared;
    double out = 0;
    double ref = 0;
    bool one_sided_inf = false;
};

Element classify(double out, double ref, double finite_max) {
    const bool out_nan = std::isnan(out), ref_nan = std::isnan(ref);
    if (out_nan || ref_nan)
        return {out_nan && ref_nan ? ElementKind::nan_match : ElementKind::nan_mismatch, out, ref};
    const bool out_inf = std::isinf(out), ref_inf = std::isinf(ref);
    if (out_inf && ref_inf)
        return {std::signbit(out) == std::signbit(ref) ? ElementKind::inf_match
                                                       : ElementKind::inf_sign_mismatch,
                out, ref};
    Element e{ElementKind::compared, out, ref, out_inf || ref_inf};
    if (out_inf) e.out = std::copysign(finite_max, out);
    if (ref_inf) e.ref = std::copysign(finite_max, ref);
    return e;
}

// The statistics pass of compare_output over elements [begin, end), merged in block order.
constexpr std::size_t kStatsBlock = 32768;

// golden_truncated (the fp64 golden rounded to the output's dtype), rounded a block at a time
// where it is read, never held whole: a whole copy was one more fp64 tensor of fresh memory in
// every comparison (180 MB on a 22.7-million-element output, each page zeroed by the kernel
// before its first write), for values that take one pass to recompute.
class Truncated {
  public:
    Truncated(std::span<const double> golden, DType dtype) : golden_(golden), dtype_(dtype) {}
    std::size_t size() const { return golden_.size(); }
    double at(std::size_t i) const {
        double y = 0;
        round_block(golden_.data() + i, 1, dtype_, &y);
        return y;
    }
    // Elements [begin, end) into out (end - begin <= kStatsBlock).
    void block(std::size_t begin, std::size_t end, double* out) const {
        round_block(golden_.data() + begin, end - begin, dtype_, out);
    }
    // f(i, y_i) for every element, in order.
    template <typename F>
    void each(F&& f) const {
        std::vector<double> y(std::min(kStatsBlock, size()));
        for (std::size_t begin = 0; begin < size(); begin += kStatsBlock) {
            const std::size_t end = std::min(size(), begin + kStatsBlock);
            block(begin, end, y.data());
            for (std::size_t i = begin; i < end; ++i) f(i, y[i - begin]);
        }
    }

  private:
    std::span<const double> golden_;
    DType dtype_;
};

struct BlockStats {
    std::int64_t nan_matched = 0, inf_matched = 0, nan_mismatches = 0, inf_sign_mismatches = 0, inf_one_sided = 0,
                 compared = 0;
    std::int64_t first_nan_mismatch_index = -1, first_inf_sign_mismatch_index = -1, max_rel_err_index = -1;
    double sum = 0, max_rel_err = 0, max_rel_err_got = 0, max_rel_err_expected = 0;
};

// The common block: every value finite on both sides, so no special-value rule applies. The
// errors are computed eight at a time (GCC vector types: one AVX-512 register, or two or four
// narrower ones, with the same lane-wise operations and so the same bits on every instruction
// set; nothing here can be contracted), summed in eight fixed lanes, and each lane keeps its
// maximum and where it first reached it. A NaN or infinity on either side makes that
// element's error NaN or infinite, which the lane sums carry to the end: then (or when finite
// errors overflow the sum) it returns false, and the caller walks the block element by element.
__attribute__((target_clones("avx512f", "avx2", "default"))) bool finite_block_stats(const double* c, const double* y,
                                                                                      std::size_t count, BlockStats& s) {
    using Doubles = double __attribute__((vector_size(64)));
    using Indices = std::int64_t __attribute__((vector_size(64)));
    constexpr std::size_t kLanes = 8;
    const Indices magnitude = Indices{} + std::numeric_limits<std::int64_t>::max();  // clears the sign bit
    const Doubles floor = Doubles{} + kRelErrFloor;
    Doubles sum{}, max{};
    Indices first = Indices{} - 1, index = {0, 1, 2, 3, 4, 5, 6, 7};
    std::size_t i = 0;
    for (; i + kLanes <= count; i += kLanes, index += static_cast<std::int64_t>(kLanes)) {
        Doubles cv, yv;
        std::memcpy(&cv, c + i, sizeof cv);
        std::memcpy(&yv, y + i, sizeof yv);
        // relative_error, lane by lane: |c - y| / (|y| + floor), the absolute values by masking
        const Doubles diff = reinterpret_cast<Doubles>(reinterpret_cast<Indices>(cv - yv) & magnitude);
        const Doubles ref = reinterpret_cast<Doubles>(reinterpret_cast<Indices>(yv) & magnitude);
        const Doubles e = diff / (ref + floor);
        sum += e;
        const Indices larger = e > max;
        max = larger ? e : max;
        first = larger ? index : first;
    }
    double total = ((sum[0] + sum[1]) + (sum[2] + sum[3])) + ((sum[4] + sum[5]) + (sum[6] + sum[7]));
    double largest = 0;
    std::int64_t at = -1;
    for (std::size_t l = 0; l < kLanes; ++l)
        if (max[l] > largest || (max[l] == largest && first[l] >= 0 && first[l] < at)) {
            largest = max[l];
            at = first[l];
        }
    for (; i < count; ++i) {
        const double e = relative_error(c[i], y[i]);
        total += e;
        if (e > largest) {
            largest = e;
            at = static_cast<std::int64_t>(i);
        }
    }
    if (!std::isfinite(total)) return false;
    s.compared = static_cast<std::int64_t>(count);
    s.sum = total;
    if (at >= 0) {
        s.max_rel_err = largest;
        s.max_rel_err_index = at;
        s.max_rel_err_got = c[at];
        s.max_rel_err_expected = y[at];
    }
    return true;
}

// Elements [begin, end), y holding golden_truncated of exactly those.
BlockStats block_stats(std::span<const double> candidate, const double* y, std::size_t begin, std::size_t end,
                       double finite_max) {
    BlockStats s;
    if (finite_block_stats(candidate.data() + begin, y, end - begin, s)) {
        s.max_rel_err_index += s.max_rel_err_index >= 0 ? static_cast<std::int64_t>(begin) : 0;
        return s;
    }
    s = BlockStats{};
    for (std::size_t i = begin; i < end; ++i) {
        const Element el = classify(candidate[i], y[i - begin], finite_max);
        const auto index = static_cast<std::int64_t>(i);
        switch (el.kind) {
            case ElementKind::nan_match: ++s.nan_matched; continue;
            case ElementKind::inf_match: ++s.inf_matched; continue;
            case ElementKind::nan_mismatch:
                if (s.nan_mismatches++ == 0) s.first_nan_mismatch_index = index;
                continue;
            case ElementKind::inf_sign_mismatch:
                if (s.inf_sign_mismatches++ == 0) s.first_inf_sign_mismatch_index = index;
                continue;
            case ElementKind::compared: break;
        }
        if (el.one_sided_inf) ++s.inf_one_sided;
        ++s.compared;
        const double e = relative_error(el.out, el.ref);
        s.sum += e;
        if (e > s.max_rel_err) {
            s.max_rel_err = e;
            s.max_rel_err_index = index;
            s.max_rel_err_got = el.out;
            s.max_rel_err_expected = el.ref;
        }
    }
    return s;
}

enum class Region { small_value, cancellation, normal };

// A position's region comes from y and the candidate's output (the cancellation region
// describes a result that cancelled to near zero); both sides are counted in that region.
Region region_of(double out, double y, const Thresholds& th) {
    const double abs_y = std::fabs(y);
    if (abs_y < th.tau_sv) return Region::small_value;
    if (std::fabs(out) < th.tau_cz() && abs_y < th.tau_cb) return Region::cancellation;
    return Region::normal;
}

void add_error(RegionCounts& counts, Region region) {
    switch (region) {
        case Region::small_value: ++counts.small_value; break;
        case Region::cancellation: ++counts.cancellation; break;
        case Region::normal: ++counts.normal; break;
    }
}

// The region's error rule for one compared value `out` against y (after the one-sided
// infinity replacement): absolute in the small-value region, relative elsewhere.
bool region_error(Region region, double out, double y, const Thresholds& th) {
    return region == Region::small_value ? std::fabs(out - y) > th.eps_sv
                                         : relative_error(out, y) > th.max_rel;
}

// Whether the same-precision reference errs at a position of `region`. Its NaN is no error:
// a NaN says nothing about how hard the operation is in this precision, and counting it would
// buy the candidate errors. Its opposite-sign infinity is one; a one-sided infinity is
// compared as sign * (largest finite value), as for the candidate.
bool same_precision_error(double out, double y, Region region, double finite_max, const Thresholds& th) {
    const Element el = classify(out, y, finite_max);
    switch (el.kind) {
        case ElementKind::nan_match:
        case ElementKind::inf_match:
        case ElementKind::nan_mismatch: return false;  // y is not NaN at a fallback position
        case ElementKind::inf_sign_mismatch: return true;
        case ElementKind::compared: break;
    }
    return region_error(region, el.out, el.ref, th);
}

struct FallbackCounts {
    RegionCounts candidate, same_precision;
    std::int64_t same_precision_nan = 0;  // fallback positions where the reference is NaN
};

// Both sides are counted over the same positions, the elements of the candidate's statistics
// (where it matched a NaN or a same-sign infinity neither side is counted), each position in
// the region the candidate's output gives it. Runs only when the candidate has no
// special-value failure, so every position here has a non-NaN y.
FallbackCounts fallback_errors(std::span<const double> candidate, std::span<const double> same_precision,
                               const Truncated& y, double finite_max, const Thresholds& th) {
    FallbackCounts counts;
    y.each([&](std::size_t i, double y_i) {
        const Element el = classify(candidate[i], y_i, finite_max);
        if (el.kind != ElementKind::compared) return;
        const Region region = region_of(el.out, el.ref, th);
        if (region_error(region, el.out, el.ref, th)) add_error(counts.candidate, region);
        if (std::isnan(same_precision[i])) ++counts.same_precision_nan;
        if (same_precision_error(same_precision[i], y_i, region, finite_max, th))
            add_error(counts.same_precision, region);
    });
    return counts;
}

// count_candidate / max(count_same_precision, 1) <= 2, in integers so that exactly 2 passes.
bool ratio_passes(std::int64_t candidate, std::int64_t same_precision) {
    return candidate <= 2 * std::max<std::int64_t>(same_precision, 1);
}

// The normal region may not introduce errors where the same-precision reference has none.
bool normal_region_passes(std::int64_t candidate, std::int64_t same_precision) {
    if (candidate == 0) return true;
    if (same_precision == 0) return false;
    return candidate <= 2 * same_precision;
}

std::string region_failures(const OutputVerdict& v) {
    std::string parts;
    auto add = [&](bool passed, const char* name, std::int64_t cand, std::int64_t sp) {
        if (passed) return;
        if (!parts.empty()) parts += ", ";
        parts += fmt::format("{} region {} errors vs {} in same-precision reference", name, cand, sp);
    };
    add(v.region_passed.small_value, "small-value", v.candidate_errors.small_value,
        v.same_precision_errors.small_value);
    add(v.region_passed.cancellation, "cancellation", v.candidate_errors.cancellation,
        v.same_precision_errors.cancellation);
    add(v.region_passed.normal, "normal", v.candidate_errors.normal, v.same_precision_errors.normal);
    if (v.same_precision_nan > 0)
        parts += fmt::format(" (the reference is NaN at {} positions, which count as no error)",
                             v.same_precision_nan);
    return parts;
}

void join_reason(std::string& reason, const std::string& part) {
    if (!reason.empty()) reason += "; ";
    reason += part;
}

// Integer and bool outputs: exact, or within the operator's +-k.
void decide_integer(OutputVerdict& v, std::span<const double> candidate, const Truncated& y) {
    const double k = v.thresholds.abs_tolerance();
    y.each([&](std::size_t i, double y_i) {
        const double diff = std::fabs(candidate[i] - y_i);
        v.max_abs_err = std::max(v.max_abs_err, diff);
        if (diff > k && v.mismatches++ == 0) {
            v.first_mismatch_index = static_cast<std::int64_t>(i);
            v.first_mismatch_got = candidate[i];
            v.first_mismatch_expected = y_i;
        }
    });
    v.passed = v.mismatches == 0;
    if (!v.passed)
        v.reason = fmt::format(
            "{} of {} elements {} (max abs err {:g}), first at index {} (got {:g}, expected {:g})",
            v.mismatches, v.elements,
            k == 0 ? std::string("differ (exact comparison)") : fmt::format("differ by more than {:g}", k),
            v.max_abs_err, v.first_mismatch_index, v.first_mismatch_got, v.first_mismatch_expected);
}

// Threshold 0 on a floating output: the bit patterns of the output dtype must be identical.
void decide_bit_exact(OutputVerdict& v, std::span<const double> candidate, const Truncated& y) {
    y.each([&](std::size_t i, double y_i) {
        if (dtype_bit_pattern(candidate[i], v.dtype) != dtype_bit_pattern(y_i, v.dtype) &&
            v.mismatches++ == 0) {
            v.first_mismatch_index = static_cast<std::int64_t>(i);
            v.first_mismatch_got = candidate[i];
            v.first_mismatch_expected = y_i;
        }
    });
    v.passed = v.mismatches == 0;
    if (!v.passed)
        v.reason = fmt::format(
            "{} of {} elements differ bit for bit (threshold 0), first at index {} (got {:g}, "
            "expected {:g})",
            v.mismatches, v.elements, v.first_mismatch_index, v.first_mismatch_got,
            v.first_mismatch_expected);
}

void decide_relative(OutputVerdict& v, std::span<const double> candidate, const SamePrecisionValues& same_precision_of,
                     const Truncated& y) {
    const Thresholds& th = v.thresholds;
    const bool specials_ok = v.nan_mismatches == 0 && v.inf_sign_mismatches == 0;
    v.screen1_passed = v.mean_rel_err < th.tau && v.max_rel_err < th.max_rel;

    if (v.nan_mismatches > 0)
        join_reason(v.reason, fmt::format("NaN positions differ at {} elements, first at index {} "
                                          "(got {:g}, expected {:g})",
                                          v.nan_mismatches, v.first_nan_mismatch_index,
                                          candidate[v.first_nan_mismatch_index],
                                          y.at(v.first_nan_mismatch_index)));
    if (v.inf_sign_mismatches > 0)
        join_reason(v.reason, fmt::format("opposite-sign infinity at {} elements, first at index {} "
                                          "(got {:g}, expected {:g})",
                                          v.inf_sign_mismatches, v.first_inf_sign_mismatch_index,
                                          candidate[v.first_inf_sign_mismatch_index],
                                          y.at(v.first_inf_sign_mismatch_index)));
    // Special-value failures are final: the fallback weighs error counts, not NaN placement.
    if (!specials_ok) {
        v.passed = false;
        return;
    }
    if (v.screen1_passed) {
        v.passed = true;
        return;
    }

    std::string screen;
    if (!(v.max_rel_err < th.max_rel))
        screen = fmt::format("max rel err {:.3g} >= 10*tau {:.3g} at index {} (got {:.6g}, expected {:.6g})",
                             v.max_rel_err, th.max_rel, v.max_rel_err_index, v.max_rel_err_got,
                             v.max_rel_err_expected);
    if (!(v.mean_rel_err < th.tau)) {
        if (!screen.empty()) screen += ", ";
        screen += fmt::format("mean rel err {:.3g} >= tau {:.3g}", v.mean_rel_err, th.tau);
    }

    // Only now is the same-precision reference needed: it is computed on this request.
    const std::span<const double> same_precision = same_precision_of();
    if (same_precision.size() != y.size())
        throw Error(fmt::format("precision gate: output {} failed screen 1 and its fallback needs {} same-precision "
                                "values, but {} were given",
                                v.label, y.size(), same_precision.size()),
                    ExitCode::internal);
    const double finite_max = dtype_max(v.dtype);
    v.fallback_ran = true;
    const FallbackCounts counts = fallback_errors(candidate, same_precision, y, finite_max, th);
    v.candidate_errors = counts.candidate;
    v.same_precision_errors = counts.same_precision;
    v.same_precision_nan = counts.same_precision_nan;
    v.region_passed.small_value =
        ratio_passes(v.candidate_errors.small_value, v.same_precision_errors.small_value);
    v.region_passed.cancellation =
        ratio_passes(v.candidate_errors.cancellation, v.same_precision_errors.cancellation);
    v.region_passed.normal =
        normal_region_passes(v.candidate_errors.normal, v.same_precision_errors.normal);
    v.passed = v.region_passed.small_value && v.region_passed.cancellation && v.region_passed.normal;
    if (!v.passed) v.reason = screen + "; fallback: " + region_failures(v);
}

}  // namespace

std::int64_t fresh_input_region_limit(std::int64_t same_precision_errors, std::int64_t compared) {
    return std::max<std::int64_t>(2 * std::max<std::int64_t>(same_precision_errors, 1),
                                  (compared + kFreshInputElementsPerError - 1) / kFreshInputElementsPerError);
}

std::optional<std::int64_t> fresh_input_allowance(const GateResult& gate) {
    if (gate.passed) return 0;
    std::int64_t allowed = 0;
    for (const OutputVerdict& v : gate.outputs) {
        if (v.passed) continue;
        // Only a verdict of the fallback's counts is reconsidered: special values and every
        // other mode stay final.
        if (v.mode != CompareMode::relative || !v.fallback_ran || v.index_gather || v.nan_mismatches > 0 ||
            v.inf_sign_mismatches > 0)
            return std::nullopt;
        // A failed region within the fresh-input limit adds its errors to `allowed`.
        auto within = [&](bool passed, std::int64_t candidate, std::int64_t same_precision) {
            if (passed) return true;
            allowed += candidate;
            return candidate <= fresh_input_region_limit(same_precision, v.compared);
        };
        if (!within(v.region_passed.small_value, v.candidate_errors.small_value, v.same_precision_errors.small_value) ||
            !within(v.region_passed.cancellation, v.candidate_errors.cancellation,
                    v.same_precision_errors.cancellation) ||
            !within(v.region_passed.normal, v.candidate_errors.normal, v.same_precision_errors.normal))
            return std::nullopt;
    }
    return allowed;
}

OutputVerdict compare_output(std::span<const double> candidate, std::span<const double> golden_fp64,
                             std::span<const double> same_precision, DType dtype,
                             const Thresholds& thresholds, const std::string& label) {
    return compare_output(candidate, golden_fp64, [same_precision] { return same_precision; }, dtype, thresholds, label);
}

OutputVerdict compare_output(std::span<const double> candidate, std::span<const double> golden_fp64,
                             const SamePrecisionValues& same_precision, DType dtype, const Thresholds& thresholds,
                             const std::string& label) {
    if (thresholds.dtype != dtype)
        throw Error(fmt::format("precision gate: output {} is {} but its thresholds are for {}", label,
                                dtype_name(dtype), dtype_name(thresholds.dtype)),
                    ExitCode::internal);

    OutputVerdict v;
    v.label = label;
    v.dtype = dtype;
    v.thresholds = thresholds;
    v.mode = thresholds.integer()     ? CompareMode::integer
             : thresholds.bit_exact() ? CompareMode::bit_exact
                                      : CompareMode::relative;
    v.elements = static_cast<std::int64_t>(candidate.size());
    const std::string prefix = label.empty() ? "" : "output " + label + ": ";
    if (candidate.size() != golden_fp64.size()) {
        v.passed = false;
        v.reason = prefix + fmt::format("has {} elements, expected {}", candidate.size(), golden_fp64.size());
        return v;
    }

    // golden_truncated, and the statistics and special values (recorded in every mode), block
    // by block on every thread, each thread rounding its block into its own buffer; the blocks
    // are merged in order, so the result does not depend on the thread count (the first
    // maximum, the first index of each mismatch, one sum order).
    const Truncated y(golden_fp64, dtype);
    const std::size_t blocks = (y.size() + kStatsBlock - 1) / kStatsBlock;
    std::vector<BlockStats> stats(blocks);
    const double finite_max = dtype_max(dtype);
#pragma omp parallel if (blocks > 1)
    {
        std::vector<double> y_block(std::min(kStatsBlock, y.size()));
#pragma omp for schedule(static)
        for (std::size_t b = 0; b < blocks; ++b) {
            const std::size_t begin = b * kStatsBlock, end = std::min(y.size(), begin + kStatsBlock);
            y.block(begin, end, y_block.data());
            stats[b] = block_stats(candidate, y_block.data(), begin, end, finite_max);
        }
    }
    double sum = 0;
    for (const BlockStats& b : stats) {
        v.nan_matched += b.nan_matched;
        v.inf_matched += b.inf_matched;
        if (v.nan_mismatches == 0 && b.nan_mismatches > 0) v.first_nan_mismatch_index = b.first_nan_mismatch_index;
        v.nan_mismatches += b.nan_mismatches;
        if (v.inf_sign_mismatches == 0 && b.inf_sign_mismatches > 0)
            v.first_inf_sign_mismatch_index = b.first_inf_sign_mismatch_index;
        v.inf_sign_mismatches += b.inf_sign_mismatches;
        v.inf_one_sided += b.inf_one_sided;
        v.compared += b.compared;
        sum += b.sum;
        if (b.max_rel_err > v.max_rel_err) {
            v.max_rel_err = b.max_rel_err;
            v.max_rel_err_index = b.max_rel_err_index;
            v.max_rel_err_got = b.max_rel_err_got;
            v.max_rel_err_expected = b.max_rel_err_expected;
        }
    }
    v.mean_rel_err = v.compared > 0 ? sum / static_cast<double>(v.compared) : 0.0;

    switch (v.mode) {
        case CompareMode::integer: decide_integer(v, candidate, y); break;
        case CompareMode::bit_exact: decide_bit_exact(v, candidate, y); break;
        default: decide_relative(v, candidate, same_precision, y); break;
    }
    if (!v.passed) v.reason = prefix + v.reason;
    return v;
}

namespace {

const OutputDef* find_output_def(const Problem& problem, std::size_t arg) {
    if (!problem.proto) return nullptr;
    const auto& defs = problem.proto->outputs;
    for (const auto& d : defs)
        if (d.name == problem.outputs[arg].name) return &d;
    return nullptr;
}

std::size_t find_arg_index(const std::vector<ArgSpec>& specs, const std::string& name,
                           const std::string& what, const Problem& problem) {
    for (std::size_t a = 0; a < specs.size(); ++a)
        if (specs[a].name == name) return a;
    throw Error(problem.context() + what + " names '" + name + "', which the case does not have");
}

OutputVerdict gather_output(const Problem& problem, const IndexGather& ig,
                            const ValueArgs<double>& candidate_outputs, const ValueArgs<double>& inputs,
                            std::size_t arg, std::size_t member, const std::string& label,
                            const Thresholds& th) {
    const std::string what = "output '" + problem.outputs[arg].name + "' index_gather";
    const std::size_t in_arg = find_arg_index(problem.inputs, ig.input, what + ".input", problem);
    if (in_arg >= inputs.size() || !inputs[in_arg].present || inputs[in_arg].tensors.empty())
        throw Error(problem.context() + what + ": input '" + ig.input + "' has no values",
                    ExitCode::internal);
    if (ig.dim_attr.empty()) throw Error(problem.context() + what + ": dim_attr is required");
    const auto& in_tensors = inputs[in_arg].tensors;
    const auto& input = in_tensors[member < in_tensors.size() ? member : 0];

    IndexGatherOperands ops;
    ops.input = input.v;
    ops.input_shape = input.spec.shape;
    ops.input_dtype = input.spec.dtype;
    ops.indices = candidate_outputs[arg].tensors[member].v;
    ops.index_shape = problem.outputs[arg].tensors[member].shape;
    ops.dim = problem.attr_int(ig.dim_attr);
    ops.keepdim = ig.keepdim_attr.empty() || problem.attr_bool(ig.keepdim_attr);

    IndexGatherVerdict g;
    try {
        if (!ig.value_output.empty()) {
            const std::size_t value_arg =
                find_arg_index(problem.outputs, ig.value_output, what + ".value_output", problem);
            const auto& value_spec = problem.outputs[value_arg].tensors.at(member);
            g = check_index_gather(ops, candidate_outputs[value_arg].tensors.at(member).v, value_spec.dtype);
        } else if (!ig.value_reduce.empty()) {
            g = check_index_gather(ops, parse_gather_reduce(ig.value_reduce));
        } else {
            throw Error("needs value_output or value_reduce");
        }
    } catch (const Error& e) {
        throw Error(problem.context() + what + ": " + e.what(), e.code());
    }

    OutputVerdict v;
    v.label = label;
    v.dtype = problem.outputs[arg].tensors[member].dtype;
    v.mode = CompareMode::index_gather;
    v.thresholds = th;
    v.elements = static_cast<std::int64_t>(ops.indices.size());
    v.compared = g.checked;
    v.passed = g.passed;
    v.mismatches = g.out_of_range + g.mismatches;
    if (!g.passed) v.reason = "output " + label + ": " + g.reason;
    v.index_gather = std::move(g);
    return v;
}

}  // namespace

bool gate_reads_inputs(const Problem& problem) {
    for (std::size_t a = 0; a < problem.outputs.size(); ++a)
        if (const OutputDef* def = find_output_def(problem, a); def && def->index_gather) return true;
    return false;
}

GateResult run_precision_gate(const Problem& problem, const ValueArgs<double>& candidate_outputs,
                              const ValueArgs<double>& golden, const ValueArgs<double>& same_precision,
                              const ValueArgs<double>& inputs) {
    return run_precision_gate(problem, candidate_outputs, golden, SamePrecisionReference([&]() -> const ValueArgs<double>& {
                                  return same_precision;
                              }),
                              inputs);
}

GateResult run_precision_gate(const Problem& problem, const ValueArgs<double>& candidate_outputs,
                              const ValueArgs<double>& golden, const SamePrecisionReference& same_precision,
                              const ValueArgs<double>& inputs) {
    const auto& specs = problem.outputs;
    if (candidate_outputs.size() != specs.size() || golden.size() != specs.size())
        throw Error(problem.context() +
                        fmt::format("the precision gate got {} candidate and {} golden outputs for {} outputs",
                                    candidate_outputs.size(), golden.size(), specs.size()),
                    ExitCode::internal);
    // The reference of output `a`, member `t`, made on the first request (a failing output's fallback).
    auto reference_of = [&](std::size_t a, std::size_t t) {
        return [&same_precision, &problem, a, t]() -> std::span<const double> {
            const ValueArgs<double>& all = same_precision();
            if (all.size() != problem.outputs.size() || all[a].tensors.size() <= t)
                throw Error(problem.context() + fmt::format("the same-precision reference has {} outputs for {}",
                                                            all.size(), problem.outputs.size()),
                            ExitCode::internal);
            return all[a].tensors[t].v;
        };
    };
    static const std::map<DType, double> no_overrides;
    const auto& overrides = problem.proto ? problem.proto->tau_overrides : no_overrides;

    GateResult result;
    for (std::size_t a = 0; a < specs.size(); ++a) {
        const ArgSpec& spec = specs[a];
        const OutputDef* def = find_output_def(problem, a);
        if (!spec.present) {
            OutputVerdict v;
            v.label = spec.name;
            v.mode = CompareMode::skipped;
            v.passed = true;
            v.reason = "absent in this case";
            result.outputs.push_back(std::move(v));
            continue;
        }
        const std::size_t members = spec.tensors.size();
        if (candidate_outputs[a].tensors.size() != members || golden[a].tensors.size() != members)
            throw Error(problem.context() +
                            fmt::format("output '{}' has {} tensors but the precision gate got {} "
                                        "candidate and {} golden tensors",
                                        spec.name, members, candidate_outputs[a].tensors.size(),
                                        golden[a].tensors.size()),
                        ExitCode::internal);

        for (std::size_t t = 0; t < members; ++t) {
            const std::string label = spec.is_list ? fmt::format("{}[{}]", spec.name, t) : spec.name;
            const DType dtype = spec.tensors[t].dtype;
            const Thresholds th = thresholds_for(dtype, overrides);
            if (def && def->index_gather) {
                result.outputs.push_back(
                    gather_output(problem, *def->index_gather, candidate_outputs, inputs, a, t, label, th));
            } else if (def && !def->compare) {
                OutputVerdict v;
                v.label = label;
                v.dtype = dtype;
                v.mode = CompareMode::skipped;
                v.passed = true;
                v.thresholds = th;
                v.elements = static_cast<std::int64_t>(candidate_outputs[a].tensors[t].v.size());
                v.reason = "not compared (compare: false in the proto)";
                result.outputs.push_back(std::move(v));
            } else {
                result.outputs.push_back(compare_output(candidate_outputs[a].tensors[t].v,
                                                        golden[a].tensors[t].v, reference_of(a, t), dtype, th,
                                                        label));
            }
        }
    }

    // Selections take each element once (proto index_gather `distinct`, top_k).
    apply_distinct_index_rule(problem, candidate_outputs, result);

    const auto failing = std::count_if(result.outputs.begin(), result.outputs.end(),
                                       [](const OutputVerdict& v) { return !v.passed; });
    result.passed = failing == 0;
    if (!result.passed) {
        const auto first = std::find_if(result.outputs.begin(), result.outputs.end(),
                                        [](const OutputVerdict& v) { return !v.passed; });
        result.reason = first->reason;
        if (failing > 1) result.reason += fmt::format(" (and {} more failing outputs)", failing - 1);
    }
    return result;
}

namespace {

nlohmann::json json_number(double x) {
    if (std::isfinite(x)) return x;
    if (std::isnan(x)) return "nan";
    return x > 0 ? "inf" : "-inf";
}

nlohmann::json json_index(std::int64_t i) { return i < 0 ? nlohmann::json(nullptr) : nlohmann::json(i); }

nlohmann::json json_regions(const RegionCounts& c) {
    return {{"small_value", c.small_value}, {"cancellation", c.cancellation}, {"normal", c.normal}};
}

}  // namespace

nlohmann::json to_json(const OutputVerdict& v) {
    nlohmann::json j{
        {"label", v.label},
        {"dtype", std::string(dtype_name(v.dtype))},
        {"mode", std::string(compare_mode_name(v.mode))},
        {"passed", v.passed},
        {"reason", v.reason},
        {"thresholds", to_json(v.thresholds)},
        {"elements", v.elements},
        {"compared", v.compared},
        {"mean_rel_err", json_number(v.mean_rel_err)},
        {"max_rel_err", json_number(v.max_rel_err)},
        {"max_rel_err_index", json_index(v.max_rel_err_index)},
        {"max_rel_err_got", json_number(v.max_rel_err_got)},
        {"max_rel_err_expected", json_number(v.max_rel_err_expected)},
        {"special_values",
         {{"nan_matched", v.nan_matched},
          {"nan_mismatches", v.nan_mismatches},
          {"first_nan_mismatch_index", json_index(v.first_nan_mismatch_index)},
          {"inf_matched", v.inf_matched},
          {"inf_sign_mismatches", v.inf_sign_mismatches},
          {"first_inf_sign_mismatch_index", json_index(v.first_inf_sign_mismatch_index)},
          {"inf_one_sided", v.inf_one_sided}}},
        {"mismatches", v.mismatches},
        {"first_mismatch_index", json_index(v.first_mismatch_index)},
        {"first_mismatch_got", json_number(v.first_mismatch_got)},
        {"first_mismatch_expected", json_number(v.first_mismatch_expected)},
        {"max_abs_err", json_number(v.max_abs_err)},
        {"screen1_passed", v.screen1_passed},
        {"fallback", nullptr},
        {"index_gather", nullptr},
    };
    if (v.fallback_ran)
        j["fallback"] = {
            {"candidate_errors", json_regions(v.candidate_errors)},
            {"same_precision_errors", json_regions(v.same_precision_errors)},
            {"same_precision_nan", v.same_precision_nan},
            {"region_passed",
             {{"small_value", v.region_passed.small_value},
              {"cancellation", v.region_passed.cancellation},
              {"normal", v.region_passed.normal}}},
        };
    if (v.index_gather) {
        const IndexGatherVerdict& g = *v.index_gather;
        j["index_gather"] = {
            {"form", g.form},
            {"dim", g.dim},
            {"checked", g.checked},
            {"out_of_range", g.out_of_range},
            {"first_out_of_range_position", json_index(g.first_out_of_range_position)},
            {"first_out_of_range_index", json_number(g.first_out_of_range_index)},
            {"mismatches", g.mismatches},
            {"first_mismatch_position", json_index(g.first_mismatch_position)},
            {"first_mismatch_index", json_number(g.first_mismatch_index)},
            {"first_mismatch_got", json_number(g.first_mismatch_got)},
            {"first_mismatch_expected", json_number(g.first_mismatch_expected)},
        };
    }
    return j;
}

nlohmann::json to_json(const GateResult& result) {
    nlohmann::json outputs = nlohmann::json::array();
    for (const auto& v : result.outputs) outputs.push_back(to_json(v));
    return {{"passed", result.passed}, {"reason", result.reason}, {"outputs", outputs}};
}

}  // namespace hb
