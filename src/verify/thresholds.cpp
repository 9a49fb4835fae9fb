#include "verify/thresholds.hpp"

#include <bit>
#include <cmath>
#include <string>

namespace hb {

namespace {

struct FloatThresholds {
    double tau, tau_sv, eps_sv, tau_cb;
};

// The two tables of methodology section 3. hif32 and fp8 have rows there but are not
// hapbench dtypes yet; add them here when DType gains them.
FloatThresholds float_thresholds(DType t) {
    switch (t) {
        case DType::f16: return {std::ldexp(1.0, -10), std::ldexp(1.0, -11), std::ldexp(1.0, -16), std::ldexp(1.0, -5)};
        case DType::bf16: return {std::ldexp(1.0, -7), std::ldexp(1.0, -8), std::ldexp(1.0, -16), std::ldexp(1.0, -3)};
        // fp64 outputs have no row of their own; they get fp32's, which an fp64 kernel meets
        // easily and which keeps a float64 case from demanding more than the golden gives.
        case DType::f32:
        case DType::f64: return {std::ldexp(1.0, -13), std::ldexp(1.0, -14), std::ldexp(1.0, -30), std::ldexp(1.0, -8)};
        default: return {0, 0, 0, 0};
    }
}

}  // namespace

Thresholds thresholds_for(DType output_dtype, const std::map<DType, double>& tau_overrides) {
    Thresholds th;
    th.dtype = output_dtype;
    if (is_floating(output_dtype)) {
        const FloatThresholds f = float_thresholds(output_dtype);
        th.tau = f.tau;
        th.tau_sv = f.tau_sv;
        th.eps_sv = f.eps_sv;
        th.tau_cb = f.tau_cb;
    }
    th.default_tau = th.tau;
    if (auto it = tau_overrides.find(output_dtype); it != tau_overrides.end()) {
        th.tau = it->second;
        th.tau_overridden = true;
    }
    th.max_rel = is_floating(output_dtype) ? 10 * th.tau : 0;
    return th;
}

nlohmann::json to_json(const Thresholds& th) {
    std::string mode;
    if (th.integer())
        mode = th.tau == 0 ? "exact" : "abs_tolerance";
    else
        mode = th.bit_exact() ? "bit_exact" : "relative";
    return nlohmann::json{
        {"dtype", std::string(dtype_name(th.dtype))},
        {"mode", mode},
        {"tau", th.tau},
        {"max_rel", th.max_rel},
        {"tau_sv", th.tau_sv},
        {"eps_sv", th.eps_sv},
        {"tau_cb", th.tau_cb},
        {"tau_cz", th.tau_cz()},
        {"default_tau", th.default_tau},
        {"tau_overridden", th.tau_overridden},
    };
}

std::uint64_t dtype_bit_pattern(double value, DType t) {
    switch (t) {
        case DType::f16: return f64_to_f16_bits(value);
        case DType::bf16: return f64_to_bf16_bits(value);
        case DType::f32: return std::bit_cast<std::uint32_t>(static_cast<float>(value));
        case DType::f64: return std::bit_cast<std::uint64_t>(value);
        default: return static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
    }
}

}  // namespace hb
