// NumPy .npy files (format versions 1.0 and 2.0, little-endian, C order): how case data
// leaves and enters hapbench (docs/case-files.md). Dtypes: <f2 <f4 <f8 |i1 |u1 <i2 <i4 <i8
// |b1, and bfloat16, which NumPy lacks, stored as <u2 with a hapbench_dtype marker.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace hb {

// One array as stored: raw little-endian elements of `dtype` in C order.
struct NpyArray {
    DType dtype = DType::f64;
    Shape shape;
    std::vector<unsigned char> bytes;

    std::int64_t numel() const { return hb::numel(shape); }
    // Exact fp64 values of the elements (the way the precision gate takes outputs).
    std::vector<double> to_f64() const;
    // Rounds each value to `dtype` (nearest even; integers saturate) and stores it.
    static NpyArray from_values(std::span<const double> values, DType dtype, Shape shape);
    // Copies `bytes` raw elements of `dtype` (e.g. a tensor's buffer).
    static NpyArray from_raw(const void* data, DType dtype, Shape shape);
};

// The bfloat16 marker. NumPy's np.load accepts only the keys descr, fortran_order and shape
// in the header dictionary, so the writer puts the marker after the dictionary as a Python
// comment, "# hapbench_dtype: bfloat16", which np.load ignores; the reader also accepts it
// as an extra dictionary key, 'hapbench_dtype': 'bfloat16'.
inline constexpr std::string_view kNpyDtypeMarker = "hapbench_dtype";

// Parses a whole .npy file held in memory. `name` (usually the path) starts every error
// message. `unmarked_u2` says what a <u2 array without the marker holds: hapbench has no
// uint16 type, so by default such a file is an error; pass DType::bf16 where bfloat16 bits
// are expected (a file written by `np.save(path, x.view(np.uint16))`).
NpyArray decode_npy(std::span<const unsigned char> file, const std::string& name,
                    std::optional<DType> unmarked_u2 = std::nullopt);
NpyArray read_npy(const std::string& path, std::optional<DType> unmarked_u2 = std::nullopt);

// Serializes with format 1.0 unless the header needs more than 65535 bytes (then 2.0), or
// with `version` 1 or 2 when given. The header is padded so the data starts 64-byte aligned.
std::string encode_npy(const NpyArray& array, int version = 0);
void write_npy(const std::string& path, const NpyArray& array, int version = 0);

// The descr string for a dtype ("<f4"; bfloat16: "<u2").
std::string_view npy_descr(DType dtype);

}  // namespace hb
