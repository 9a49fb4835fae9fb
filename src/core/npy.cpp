#include "core/npy.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "core/dtype_blocks.hpp"
#include "core/error.hpp"

namespace hb {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader and writer copy little-endian elements as they are in memory");

namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kAlign = 64;  // NumPy aligns the data to 64 bytes since 1.14
constexpr int kMaxRank = 64;        // NumPy's own limit
// Element counts beyond this overflow byte counts long before memory runs out.
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 62;

struct Header {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<Shape> shape;
    std::optional<std::string> marker;  // hapbench_dtype, as a key or as a trailing comment
};

// The subset of Python literal syntax that .npy headers use: a dict with string keys whose
// values are strings, True/False and tuples of non-negative integers, then padding.
class HeaderParser {
  public:
    HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

    Header parse() {
        Header h;
        skip_space();
        expect('{');
        while (true) {
            skip_space();
            if (peek() == '}') break;
            const std::string key = parse_string("a key");
            skip_space();
            expect(':');
            skip_space();
            if (key == "descr") {
                set_once(h.descr, parse_string("the descr value"), key);
            } else if (key == "fortran_order") {
                set_once(h.fortran_order, parse_bool(), key);
            } else if (key == "shape") {
                set_once(h.shape, parse_shape(), key);
            } else if (key == kNpyDtypeMarker) {
                set_once(h.marker, parse_string("the hapbench_dtype value"), key);
            } else {
                throw fail("unexpected key '" + key + "' in the header (a .npy header holds descr, fortran_order and shape)");
            }
            skip_space();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            if (peek() != '}') throw fail(at("expected ',' or '}' after the value of '" + key + "'"));
        }
        ++pos_;  // '}'
        // After the dictionary: padding, and optionally the marker as a Python comment.
        while (pos_ < s_.size()) {
            skip_space();
            if (pos_ >= s_.size()) break;
            if (s_[pos_] != '#') throw fail(at("unexpected text after the header dictionary"));
            const std::size_t end = s_.find('\n', pos_);
            std::string_view comment = s_.substr(pos_ + 1, end == std::string_view::npos ? std::string_view::npos : end - pos_ - 1);
            pos_ = end == std::string_view::npos ? s_.size() : end;
            comment = trim(comment);
            if (comment.substr(0, kNpyDtypeMarker.size()) == kNpyDtypeMarker) {
                std::string_view value = trim(comment.substr(kNpyDtypeMarker.size()));
                if (value.empty() || value[0] != ':') throw fail("malformed '# hapbench_dtype: NAME' comment in the header");
                value = trim(value.substr(1));
                if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front())
                    value = value.substr(1, value.size() - 2);
                set_once(h.marker, std::string(value), std::string(kNpyDtypeMarker));
            }
        }
        if (!h.descr) throw fail("the header has no 'descr' key");
        if (!h.fortran_order) throw fail("the header has no 'fortran_order' key");
        if (!h.shape) throw fail("the header has no 'shape' key");
        return h;
    }

  private:
    static std::string_view trim(std::string_view v) {
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '\r')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
        return v;
    }
    Error fail(const std::string& why) const { return Error(name_ + ": malformed .npy header: " + why); }
    std::string at(const std::string& why) const {
        return why + " at header byte " + std::to_string(pos_);
    }
    char peek() const {
        if (pos_ >= s_.size()) throw fail("the header ends before its dictionary closes");
        return s_[pos_];
    }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
    }
    void expect(char c) {
        if (peek() != c) throw fail(at(std::string("expected '") + c + "'"));
        ++pos_;
    }
    template <typename T>
    void set_once(std::optional<T>& slot, T value, const std::string& key) {
        if (slot) throw fail("the key '" + key + "' appears twice");
        slot = std::move(value);
    }
    std::string parse_string(const std::string& what) {
        const char quote = peek();
        if (quote != '\'' && quote != '"') throw fail(at("expected a quoted string for " + what));
        const std::size_t end = s_.find(quote, pos_ + 1);
        if (end == std::string_view::npos) throw fail(at("unterminated string"));
        std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
        if (out.find('\\') != std::string::npos) throw fail(at("escape sequences are not supported in header strings"));
        pos_ = end + 1;
        return out;
    }
    bool parse_bool() {
        if (s_.substr(pos_, 4) == "True") {
            pos_ += 4;
            return true;
        }
        if (s_.substr(pos_, 5) == "False") {
            pos_ += 5;
            return false;
        }
        throw fail(at("fortran_order must be True or False"));
    }
    std::int64_t parse_dim() {
        if (peek() == '-') throw fail(at("negative dimension in shape"));
        if (peek() < '0' || peek() > '9') throw fail(at("expected an integer dimension in shape"));
        std::int64_t v = 0;
        while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
            const int digit = s_[pos_] - '0';
            // Checked before multiplying: a long digit string must not overflow (found by fuzzing).
            if (v > (kMaxBytes - digit) / 10) throw fail(at("dimension too large in shape"));
            v = v * 10 + digit;
            ++pos_;
        }
        return v;
    }
    Shape parse_shape() {
        expect('(');
        Shape shape;
        while (true) {
            skip_space();
            if (peek() == ')') break;
            shape.push_back(parse_dim());
            if (shape.size() > static_cast<std::size_t>(kMaxRank)) throw fail("shape has more than 64 dimensions");
            skip_space();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            if (peek() != ')') throw fail(at("expected ',' or ')' in shape"));
        }
        ++pos_;
        return shape;
    }

    std::string_view s_;
    const std::string& name_;
    std::size_t pos_ = 0;
};

// The descr of the file, with the marker and the caller's reading of an unmarked <u2.
DType dtype_of(const Header& h, const std::string& name, std::optional<DType> unmarked_u2) {
    const std::string& d = *h.descr;
    auto fail = [&](const std::string& why) { return Error(name + ": " + why); };
    if (h.marker) {
        if (*h.marker != "bfloat16")
            throw fail("unknown hapbench_dtype '" + *h.marker + "' in the header (only bfloat16 is defined)");
        if (d != "<u2") throw fail("hapbench_dtype bfloat16 needs descr '<u2', not '" + d + "'");
        return DType::bf16;
    }
    if (d.size() == 3) {
        const char order = d[0];
        const std::string code = d.substr(1);
        struct Known {
            const char* code;
            DType dtype;
        };
        static constexpr Known one_byte[] = {{"i1", DType::i8}, {"u1", DType::u8}, {"b1", DType::boolean}};
        static constexpr Known multi_byte[] = {{"f2", DType::f16}, {"f4", DType::f32}, {"f8", DType::f64},
                                               {"i2", DType::i16}, {"i4", DType::i32}, {"i8", DType::i64}};
        // A single byte has no byte order: NumPy writes '|', and '<' or '>' mean the same.
        if (order == '|' || order == '<' || order == '>')
            for (const auto& k : one_byte)
                if (code == k.code) return k.dtype;
        for (const auto& k : multi_byte) {
            if (code != k.code) continue;
            if (order == '<') return k.dtype;
            if (order == '>')
                throw fail("big-endian data (descr '" + d + "') is not supported; save it little-endian, e.g. "
                           "arr.astype(arr.dtype.newbyteorder('<'))");
        }
        if (code == "u2" && order == '<') {
            if (unmarked_u2) return *unmarked_u2;
            throw fail("uint16 data (descr '<u2') without the hapbench_dtype marker: hapbench has no uint16 "
                       "type, and a bfloat16 array needs '# hapbench_dtype: bfloat16' in its header");
        }
        if (code == "u2" && order == '>') throw fail("big-endian data (descr '>u2') is not supported");
    }
    throw fail("unsupported dtype descr '" + d +
               "' (hapbench reads <f2, <f4, <f8, |i1, |u1, <i2, <i4, <i8, |b1, and <u2 marked as bfloat16)");
}

std::int64_t checked_bytes(const Shape& shape, std::size_t element_size, const std::string& name) {
    std::int64_t bytes = static_cast<std::int64_t>(element_size);
    for (const auto d : shape) {
        if (d != 0 && bytes > kMaxBytes / d)
            throw Error(name + ": the header's shape " + shape_to_string(shape) + " is too large to hold");
        bytes *= d;
    }
    return bytes;
}

std::uint32_t read_le(const unsigned char* p, std::size_t n) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
    return v;
}

}  // namespace

std::string_view npy_descr(DType dtype) {
    switch (dtype) {
        case DType::f16: return "<f2";
        case DType::bf16: return "<u2";
        case DType::f32: return "<f4";
        case DType::f64: return "<f8";
        case DType::i8: return "|i1";
        case DType::u8: return "|u1";
        case DType::i16: return "<i2";
        case DType::i32: return "<i4";
        case DType::i64: return "<i8";
        case DType::boolean: return "|b1";
    }
    return "";
}

std::vector<double> NpyArray::to_f64() const {
    std::vector<double> out(static_cast<std::size_t>(numel()));
    widen_block(bytes.data(), out.size(), dtype, out.data());
    return out;
}

NpyArray NpyArray::from_values(std::span<const double> values, DType dtype, Shape shape) {
    NpyArray a;
    a.dtype = dtype;
    a.shape = std::move(shape);
    if (static_cast<std::int64_t>(values.size()) != a.numel())
        throw Error("NpyArray::from_values: " + std::to_string(values.size()) + " values for shape " +
                        shape_to_string(a.shape),
                    ExitCode::internal);
    a.bytes.resize(values.size() * dtype_size(dtype));
    for (std::size_t i = 0; i < values.size(); ++i) store_element(a.bytes.data(), i, dtype, values[i]);
    return a;
}

NpyArray NpyArray::from_raw(const void* data, DType dtype, Shape shape) {
    NpyArray a;
    a.dtype = dtype;
    a.shape = std::move(shape);
    a.bytes.resize(static_cast<std::size_t>(a.numel()) * dtype_size(dtype));
    if (!a.bytes.empty()) std::memcpy(a.bytes.data(), data, a.bytes.size());
    return a;
}

NpyArray decode_npy(std::span<const unsigned char> file, const std::string& name,
                    std::optional<DType> unmarked_u2) {
    auto fail = [&](const std::string& why) { return Error(name + ": " + why); };
    if (file.size() < sizeof kMagic || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0)
        throw fail("not a .npy file (bad magic: a .npy file starts with the bytes \\x93NUMPY)");
    if (file.size() < 8) throw fail("truncated header: the file ends inside the format version");
    const int major = file[6], minor = file[7];
    if ((major != 1 && major != 2) || minor != 0)
        throw fail("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (hapbench reads 1.0 and 2.0)");
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    if (file.size() < 8 + length_bytes) throw fail("truncated header: the file ends inside the header length");
    const std::size_t header_bytes = read_le(file.data() + 8, length_bytes);
    const std::size_t header_start = 8 + length_bytes;
    if (header_bytes > file.size() - header_start)
        throw fail("truncated header: it declares " + std::to_string(header_bytes) + " bytes but the file holds " +
                   std::to_string(file.size() - header_start) + " after the length field");
    const std::string_view text(reinterpret_cast<const char*>(file.data() + header_start), header_bytes);
    const Header header = HeaderParser(text, name).parse();
    if (*header.fortran_order)
        throw fail("Fortran-order array (fortran_order: True); save a C-order array, e.g. np.ascontiguousarray(arr)");

    NpyArray a;
    a.dtype = dtype_of(header, name, unmarked_u2);
    a.shape = *header.shape;
    const std::int64_t want = checked_bytes(a.shape, dtype_size(a.dtype), name);
    const std::size_t have = file.size() - header_start - header_bytes;
    if (static_cast<std::uint64_t>(want) != have) {
        const std::string what = "the header's shape " + shape_to_string(a.shape) + " of " + *header.descr +
                                 " needs " + std::to_string(want) + " data bytes but the file holds " +
                                 std::to_string(have);
        throw fail(static_cast<std::uint64_t>(want) > have ? "truncated data: " + what
                                                           : "shape/size mismatch: " + what + " (trailing bytes)");
    }
    a.bytes.assign(file.begin() + static_cast<std::ptrdiff_t>(header_start + header_bytes), file.end());
    return a;
}

NpyArray read_npy(const std::string& path, std::optional<DType> unmarked_u2) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot open " + path);
    const std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw Error("cannot read " + path);
    return decode_npy(file, path, unmarked_u2);
}

std::string encode_npy(const NpyArray& array, int version) {
    if (static_cast<std::int64_t>(array.bytes.size()) != array.numel() * static_cast<std::int64_t>(dtype_size(array.dtype)))
        throw Error("encode_npy: " + std::to_string(array.bytes.size()) + " bytes for shape " +
                        shape_to_string(array.shape) + " of " + std::string(dtype_name(array.dtype)),
                    ExitCode::internal);
    if (version != 0 && version != 1 && version != 2)
        throw Error("encode_npy: format version must be 1 or 2, not " + std::to_string(version), ExitCode::internal);
    std::string shape = "(";
    for (std::size_t i = 0; i < array.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(array.shape[i]);
    if (array.shape.size() == 1) shape += ",";
    shape += ")";
    std::string dict = "{'descr': '" + std::string(npy_descr(array.dtype)) + "', 'fortran_order': False, 'shape': " +
                       shape + ", }";
    if (array.dtype == DType::bf16) dict += " # " + std::string(kNpyDtypeMarker) + ": bfloat16";

    auto header_for = [&](std::size_t length_bytes) {
        const std::size_t unpadded = 8 + length_bytes + dict.size() + 1;  // + '\n'
        std::string header = dict;
        header.append((kAlign - unpadded % kAlign) % kAlign, ' ');
        header += '\n';
        return header;
    };
    std::string header = header_for(2);
    if (version == 0) version = header.size() <= 65535 ? 1 : 2;
    if (version == 2) header = header_for(4);
    if (version == 1 && header.size() > 65535)
        throw Error("encode_npy: a header of " + std::to_string(header.size()) + " bytes needs format 2.0",
                    ExitCode::internal);

    std::string out(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
    out += static_cast<char>(version);
    out += '\0';
    const std::size_t length_bytes = version == 1 ? 2 : 4;
    for (std::size_t i = 0; i < length_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
    out += header;
    out.append(reinterpret_cast<const char*>(array.bytes.data()), array.bytes.size());
    return out;
}

void write_npy(const std::string& path, const NpyArray& array, int version) {
    const std::string encoded = encode_npy(array, version);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + path);
    out.write(encoded.data(), static_cast<std::streamsize>(encoded.size()));
    if (!out) throw Error("cannot write " + path + " (disk full?)");
}

}  // namespace hb
