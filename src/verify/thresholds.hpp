// Precision thresholds of the correctness gate per output dtype (methodology section 3).
#pragma once

#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"

namespace hb {

// The effective thresholds for one output. Floating outputs: screen 1 passes when
// mean(e) < tau and max(e) < max_rel (= 10 * tau); the fallback regions use tau_sv, eps_sv
// and tau_cb (= tau_cz). A tau of 0 on a floating output means bit-exact comparison.
// Integer and bool outputs: tau is an absolute tolerance k (0: exact).
struct Thresholds {
    DType dtype = DType::f32;
    double tau = 0;
    double max_rel = 0;
    double tau_sv = 0;  // small-value region: |y| < tau_sv
    double eps_sv = 0;  // small-value error: |out - y| > eps_sv
    double tau_cb = 0;  // cancellation region: |out| < tau_cz and tau_sv <= |y| < tau_cb
    double default_tau = 0;       // the dtype's tau before any operator override
    bool tau_overridden = false;  // tau comes from the proto's precision_thresholds

    double tau_cz() const { return tau_cb; }
    bool bit_exact() const { return is_floating(dtype) && tau == 0; }
    bool integer() const { return !is_floating(dtype); }
    double abs_tolerance() const { return integer() ? tau : 0; }
};

// Thresholds for an output of `output_dtype`; an override for that dtype replaces tau (and
// with it max_rel) only, the region thresholds stay the dtype's.
Thresholds thresholds_for(DType output_dtype, const std::map<DType, double>& tau_overrides = {});

// {"dtype", "tau", "max_rel", "tau_sv", "eps_sv", "tau_cb", "tau_cz", "default_tau",
//  "tau_overridden", "mode"}; mode is "relative", "bit_exact", "exact" or "abs_tolerance".
nlohmann::json to_json(const Thresholds& thresholds);

// The bit pattern of `value` (an exact value of `t`, as outputs upcast to fp64 are) in `t`,
// for bit-exact comparison: it tells +0 from -0 and NaN payloads apart. Integers: the value.
// Payloads survive the fp64 upcast except the quiet bit, which the upcast sets.
std::uint64_t dtype_bit_pattern(double value, DType t);

}  // namespace hb
