#include "report/precision_reader.hpp"

namespace hb {

namespace {

DType read_dtype(const JsonField& field) {
    DType dtype{};
    if (!try_parse_dtype(field.text(), dtype)) field.fail("unknown dtype \"" + field.text() + "\"");
    return dtype;
}

CompareMode read_mode(const JsonField& field) {
    const std::string name = field.text();
    for (CompareMode m : {CompareMode::relative, CompareMode::bit_exact, CompareMode::integer, CompareMode::index_gather,
                          CompareMode::skipped})
        if (compare_mode_name(m) == name) return m;
    field.fail("unknown comparison mode \"" + name + "\" (known: relative, bit_exact, integer, index_gather, skipped)");
}

// "mode" and "tau_cz" are derived from the others (thresholds.hpp) and not read.
Thresholds read_thresholds(const JsonField& j) {
    Thresholds th;
    th.dtype = read_dtype(j["dtype"]);
    th.tau = j["tau"].real();
    th.max_rel = j["max_rel"].real();
    th.tau_sv = j["tau_sv"].real();
    th.eps_sv = j["eps_sv"].real();
    th.tau_cb = j["tau_cb"].real();
    th.default_tau = j["default_tau"].real();
    th.tau_overridden = j["tau_overridden"].flag();
    return th;
}

RegionCounts read_region_counts(const JsonField& j) {
    return {j["small_value"].integer(), j["cancellation"].integer(), j["normal"].integer()};
}

IndexGatherVerdict read_index_gather(const JsonField& j, bool output_passed) {
    IndexGatherVerdict g;
    g.passed = output_passed;  // not written on its own: the output's verdict is the gather's
    g.form = j["form"].text();
    g.dim = static_cast<int>(j["dim"].integer());
    g.checked = j["checked"].integer();
    g.out_of_range = j["out_of_range"].integer();
    g.first_out_of_range_position = j["first_out_of_range_position"].index_or_none();
    g.first_out_of_range_index = j["first_out_of_range_index"].real_or_special();
    g.mismatches = j["mismatches"].integer();
    g.first_mismatch_position = j["first_mismatch_position"].index_or_none();
    g.first_mismatch_index = j["first_mismatch_index"].real_or_special();
    g.first_mismatch_got = j["first_mismatch_got"].real_or_special();
    g.first_mismatch_expected = j["first_mismatch_expected"].real_or_special();
    return g;
}

OutputVerdict read_output_verdict(const JsonField& j) {
    OutputVerdict v;
    v.label = j["label"].text();
    v.dtype = read_dtype(j["dtype"]);
    v.mode = read_mode(j["mode"]);
    v.passed = j["passed"].flag();
    v.reason = j["reason"].text();
    v.thresholds = read_thresholds(j["thresholds"]);
    v.elements = j["elements"].integer();
    v.compared = j["compared"].integer();
    v.mean_rel_err = j["mean_rel_err"].real_or_special();
    v.max_rel_err = j["max_rel_err"].real_or_special();
    v.max_rel_err_index = j["max_rel_err_index"].index_or_none();
    v.max_rel_err_got = j["max_rel_err_got"].real_or_special();
    v.max_rel_err_expected = j["max_rel_err_expected"].real_or_special();
    const JsonField special = j["special_values"];
    v.nan_matched = special["nan_matched"].integer();
    v.nan_mismatches = special["nan_mismatches"].integer();
    v.first_nan_mismatch_index = special["first_nan_mismatch_index"].index_or_none();
    v.inf_matched = special["inf_matched"].integer();
    v.inf_sign_mismatches = special["inf_sign_mismatches"].integer();
    v.first_inf_sign_mismatch_index = special["first_inf_sign_mismatch_index"].index_or_none();
    v.inf_one_sided = special["inf_one_sided"].integer();
    v.mismatches = j["mismatches"].integer();
    v.first_mismatch_index = j["first_mismatch_index"].index_or_none();
    v.first_mismatch_got = j["first_mismatch_got"].real_or_special();
    v.first_mismatch_expected = j["first_mismatch_expected"].real_or_special();
    v.max_abs_err = j["max_abs_err"].real_or_special();
    v.screen1_passed = j["screen1_passed"].flag();
    const JsonField fallback = j["fallback"];
    v.fallback_ran = !fallback.is_null();
    if (v.fallback_ran) {
        v.candidate_errors = read_region_counts(fallback["candidate_errors"]);
        v.same_precision_errors = read_region_counts(fallback["same_precision_errors"]);
        v.same_precision_nan = fallback["same_precision_nan"].integer();
        const JsonField passed = fallback["region_passed"];
        v.region_passed = {passed["small_value"].flag(), passed["cancellation"].flag(), passed["normal"].flag()};
    }
    const JsonField gather = j["index_gather"];
    if (!gather.is_null()) v.index_gather = read_index_gather(gather, v.passed);
    return v;
}

}  // namespace

GateResult read_gate_result(const JsonField& j) {
    GateResult result;
    result.passed = j["passed"].flag();
    result.reason = j["reason"].text();
    for (const auto& output : j["outputs"].elements()) result.outputs.push_back(read_output_verdict(output));
    return result;
}

}  // namespace hb
