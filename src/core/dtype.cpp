#include "core/dtype.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "hapbench/half.h"

namespace hb {

std::string_view dtype_name(DType t) {
    switch (t) {
        case DType::f16: return "float16";
        case DType::bf16: return "bfloat16";
        case DType::f32: return "float32";
        case DType::f64: return "float64";
        case DType::i8: return "int8";
        case DType::u8: return "uint8";
        case DType::i16: return "int16";
        case DType::i32: return "int32";
        case DType::i64: return "int64";
        case DType::boolean: return "bool";
    }
    return "unknown";
}

bool try_parse_dtype(std::string_view name, DType& out) {
    struct Alias {
        std::string_view name;
        DType type;
    };
    static constexpr Alias aliases[] = {
        {"float16", DType::f16}, {"fp16", DType::f16},      {"half", DType::f16},
        {"bfloat16", DType::bf16}, {"bf16", DType::bf16},   {"float32", DType::f32},
        {"fp32", DType::f32},    {"float", DType::f32},     {"float64", DType::f64},
        {"fp64", DType::f64},    {"double", DType::f64},    {"int8", DType::i8},
        {"uint8", DType::u8},    {"int16", DType::i16},     {"int32", DType::i32},
        {"int64", DType::i64},   {"bool", DType::boolean},
    };
    for (const auto& a : aliases) {
        if (a.name == name) {
            out = a.type;
            return true;
        }
    }
    return false;
}

DType parse_dtype(std::string_view name) {
    DType t{};
    if (!try_parse_dtype(name, t))
        throw Error("unknown dtype '" + std::string(name) +
                    "' (known: float16, bfloat16, float32, float64, int8, uint8, int16, int32, "
                    "int64, bool)");
    return t;
}

std::size_t dtype_size(DType t) {
    switch (t) {
        case DType::f16:
        case DType::bf16:
        case DType::i16: return 2;
        case DType::f32:
        case DType::i32: return 4;
        case DType::f64:
        case DType::i64: return 8;
        case DType::i8:
        case DType::u8:
        case DType::boolean: return 1;
    }
    return 0;
}

bool is_floating(DType t) {
    return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64;
}

bool is_integer(DType t) { return !is_floating(t); }

double dtype_max(DType t) {
    switch (t) {
        case DType::f16: return 65504.0;
        case DType::bf16: return 3.3895313892515355e38;
        case DType::f32: return std::numeric_limits<float>::max();
        case DType::f64: return std::numeric_limits<double>::max();
        case DType::i8: return 127;
        case DType::u8: return 255;
        case DType::i16: return 32767;
        case DType::i32: return 2147483647.0;
        case DType::i64: return 9223372036854775807.0;
        case DType::boolean: return 1;
    }
    return 0;
}

double dtype_lowest(DType t) {
    switch (t) {
        case DType::u8:
        case DType::boolean: return 0;
        case DType::i8: return -128;
        case DType::i16: return -32768;
        case DType::i32: return -2147483648.0;
        case DType::i64: return -9223372036854775808.0;
        default: return -dtype_max(t);
    }
}

namespace {

// fp64 -> fp32 rounding to odd: truncate toward zero and set the last bit when inexact.
// A later round-to-nearest-even to a format with at least two fewer mantissa bits then
// gives the correctly rounded result of the original fp64 value.
float f64_to_f32_round_to_odd(double value) {
    if (!std::isfinite(value)) return static_cast<float>(value);
    float f = static_cast<float>(value);
    if (static_cast<double>(f) == value) return f;
    if (std::isinf(f) || std::fabs(static_cast<double>(f)) > std::fabs(value))
        f = std::nextafter(f, 0.0f);
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    bits |= 1u;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

}  // namespace

std::uint16_t f64_to_f16_bits(double value) {
    return hb_f32_to_f16(f64_to_f32_round_to_odd(value));
}

std::uint16_t f64_to_bf16_bits(double value) {
    return hb_f32_to_bf16(f64_to_f32_round_to_odd(value));
}

void store_element(void* data, std::size_t index, DType t, double value) {
    switch (t) {
        case DType::f16: static_cast<std::uint16_t*>(data)[index] = f64_to_f16_bits(value); break;
        case DType::bf16: static_cast<std::uint16_t*>(data)[index] = f64_to_bf16_bits(value); break;
        case DType::f32: static_cast<float*>(data)[index] = static_cast<float>(value); break;
        case DType::f64: static_cast<double*>(data)[index] = value; break;
        case DType::i8: static_cast<std::int8_t*>(data)[index] = saturate_integer<std::int8_t>(value); break;
        case DType::u8: static_cast<std::uint8_t*>(data)[index] = saturate_integer<std::uint8_t>(value); break;
        case DType::i16: static_cast<std::int16_t*>(data)[index] = saturate_integer<std::int16_t>(value); break;
        case DType::i32: static_cast<std::int32_t*>(data)[index] = saturate_integer<std::int32_t>(value); break;
        case DType::i64: static_cast<std::int64_t*>(data)[index] = saturate_integer<std::int64_t>(value); break;
        case DType::boolean: static_cast<std::uint8_t*>(data)[index] = (value != 0.0 && !std::isnan(value)) ? 1 : 0; break;
    }
}

double load_element(const void* data, std::size_t index, DType t) {
    switch (t) {
        case DType::f16: return hb_f16_to_f32(static_cast<const std::uint16_t*>(data)[index]);
        case DType::bf16: return hb_bf16_to_f32(static_cast<const std::uint16_t*>(data)[index]);
        case DType::f32: return static_cast<const float*>(data)[index];
        case DType::f64: return static_cast<const double*>(data)[index];
        case DType::i8: return static_cast<const std::int8_t*>(data)[index];
        case DType::u8: return static_cast<const std::uint8_t*>(data)[index];
        case DType::i16: return static_cast<const std::int16_t*>(data)[index];
        case DType::i32: return static_cast<const std::int32_t*>(data)[index];
        case DType::i64: return static_cast<double>(static_cast<const std::int64_t*>(data)[index]);
        case DType::boolean: return static_cast<const std::uint8_t*>(data)[index] ? 1.0 : 0.0;
    }
    return 0;
}

double round_to_dtype(double value, DType t) {
    if (t == DType::f64) return value;
    alignas(8) unsigned char element[8];
    store_element(element, 0, t, value);
    return load_element(element, 0, t);
}

}  // namespace hb
