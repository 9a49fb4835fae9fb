// Element types, their names in case files, and exact conversions to and from fp64.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "hapbench/kernel.h"

namespace hb {

enum class DType : int {
    f16 = HB_FLOAT16,
    bf16 = HB_BFLOAT16,
    f32 = HB_FLOAT32,
    f64 = HB_FLOAT64,
    i8 = HB_INT8,
    u8 = HB_UINT8,
    i16 = HB_INT16,
    i32 = HB_INT32,
    i64 = HB_INT64,
    boolean = HB_BOOL,
};

inline constexpr DType all_dtypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64,
                                       DType::i8,  DType::u8,   DType::i16, DType::i32,
                                       DType::i64, DType::boolean};

// Canonical name as in case files: float16, bfloat16, float32, ..., bool.
std::string_view dtype_name(DType t);
// Accepts canonical names and the short forms fp16, bf16, fp32, fp64, half, float, double.
DType parse_dtype(std::string_view name);
bool try_parse_dtype(std::string_view name, DType& out);

std::size_t dtype_size(DType t);
bool is_floating(DType t);
bool is_integer(DType t);  // bool counts as integer for comparison purposes

// Largest finite value and lowest value of the type (for clamping and one-sided infinity).
double dtype_max(DType t);
double dtype_lowest(DType t);

// Round an fp64 value to the nearest value of `t` (ties to even for floats, saturating
// for integers, NaN -> 0 for integers) and back to fp64.
double round_to_dtype(double value, DType t);

// Store `value` (already in range) into element `index` of a buffer of type `t`, with
// round-to-nearest-even for floating types.
// The integer an fp64 value stores as in integer type I: rounded to nearest (ties to even),
// saturated to I's range, NaN as 0.
template <typename I>
I saturate_integer(double value) {
    if (std::isnan(value)) return 0;
    const double r = std::nearbyint(value);
    if (r <= static_cast<double>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
    return static_cast<I>(r);
}
void store_element(void* data, std::size_t index, DType t, double value);
double load_element(const void* data, std::size_t index, DType t);

// fp64 -> fp16/bf16 with a single rounding (no double rounding through fp32).
std::uint16_t f64_to_f16_bits(double value);
std::uint16_t f64_to_bf16_bits(double value);

}  // namespace hb
