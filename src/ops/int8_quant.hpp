// Per-row symmetric int8 quantization as the level-3 quantizing operators define it
// (operators-l3-l4.md, hazard 3): round half to even, clamp to [-128, 127], and a NaN quotient
// quantized to 0 (what x86 torch's float->int8 cast produced; the comparator demands it).
// The goldens (fp64) and same-precision references (fp32) of add_rms_norm_dynamic_quant and
// dequant_swiglu_quant share these, so the special-value rules are written once.
#pragma once

#include <algorithm>
#include <cmath>

namespace hb {

// A max that propagates NaN whatever the argument order (std::max and fmax drop it).
template <typename T>
T nan_max(T a, T b) {
    return (std::isnan(a) || a > b) ? a : b;
}

// The int8 value of a quotient x / scale, as a T: NaN -> 0, else round half to even
// (nearbyint in the default rounding mode) clamped to [-128, 127].
template <typename T>
T quantize_to_int8(T quotient) {
    if (std::isnan(quotient)) return T(0);
    return std::clamp(std::nearbyint(quotient), T(-128), T(127));
}

// The per-row scale is defined as an fp32 value: the fp64 golden rounds its scale to fp32
// before dividing by it, as the operator's definition fixes that step's precision
// (operators-l3-l4.md: "except where the operator's definition itself fixes a step's
// precision"); the fp32 reference is unchanged by it.
template <typename T>
T as_fp32_scale(T scale) {
    return static_cast<T>(static_cast<float>(scale));
}

}  // namespace hb
