// .npy reading and writing: round trips of every dtype in both format versions, files
// written the way NumPy writes them, and a specific error naming the file for each kind
// of malformed file (core/npy).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/error.hpp"
#include "core/npy.hpp"

namespace hb {
namespace {

namespace fs = std::filesystem;

// Representative values of each dtype, exact in it.
std::vector<double> sample_values(DType t) {
    switch (t) {
        case DType::f16: return {0.0, -0.0, 1.5, -65504.0, 6.103515625e-05, INFINITY, -INFINITY, std::nan("")};
        case DType::bf16: return {0.0, -2.0, 1.0078125, 3.3895313892515355e38, -7.888609052210118e-31, INFINITY, -INFINITY, std::nan("")};
        case DType::f32: return {0.0, -0.0, 0.1f, -3.4028234663852886e38, 1.401298464324817e-45, INFINITY, -INFINITY, std::nan("")};
        case DType::f64: return {0.0, -0.0, 0.1, -1.7976931348623157e308, 5e-324, INFINITY, -INFINITY, std::nan("")};
        case DType::i8: return {0, -128, 127, -1, 5, 6, 7, 8};
        case DType::u8: return {0, 255, 1, 2, 3, 4, 5, 6};
        case DType::i16: return {0, -32768, 32767, -1, 5, 6, 7, 8};
        case DType::i32: return {0, -2147483648.0, 2147483647.0, -1, 5, 6, 7, 8};
        case DType::i64: return {0, -9223372036854775808.0, 9007199254740993.0 - 1, -1, 5, 6, 7, 8};
        case DType::boolean: return {0, 1, 1, 0, 0, 1, 0, 1};
    }
    return {};
}

bool same_value(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

std::span<const unsigned char> bytes_of(const std::string& s) {
    return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}

// A file as another writer would produce it: magic, version, header length, header, data.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
    std::string header = dict;
    const std::size_t prefix = major == 1 ? 10 : 12;
    while ((prefix + header.size() + 1) % 16 != 0) header += ' ';
    header += '\n';
    std::string out = "\x93NUMPY";
    out += static_cast<char>(major);
    out += '\0';
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    for (std::size_t i = 0; i < length_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
    return out + header + data;
}

std::string f32_bytes(std::initializer_list<float> values) {
    std::string s;
    for (float v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
    return s;
}

// The message of the hb::Error that decoding `file` throws ("" when none is thrown).
std::string decode_error(const std::string& file, std::optional<DType> unmarked_u2 = std::nullopt) {
    try {
        decode_npy(bytes_of(file), "bad.npy", unmarked_u2);
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::bad_input);
        return e.what();
    }
    return "";
}

#define EXPECT_NPY_ERROR(file, phrase)                                                 \
    do {                                                                               \
        const std::string message = decode_error(file);                                \
        EXPECT_EQ(message.rfind("bad.npy: ", 0), 0u) << "no file name in: " << message; \
        EXPECT_NE(message.find(phrase), std::string::npos) << message;                 \
    } while (0)

TEST(Npy, EveryDtypeRoundTripsInBothVersions) {
    for (DType t : all_dtypes) {
        const auto values = sample_values(t);
        const NpyArray array = NpyArray::from_values(values, t, {2, 4});
        for (int version : {1, 2}) {
            SCOPED_TRACE(std::string(dtype_name(t)) + " v" + std::to_string(version));
            const std::string file = encode_npy(array, version);
            EXPECT_EQ(file[6], static_cast<char>(version));
            const NpyArray back = decode_npy(bytes_of(file), "mem");
            EXPECT_EQ(back.dtype, t);
            EXPECT_EQ(back.shape, (Shape{2, 4}));
            EXPECT_EQ(back.bytes, array.bytes);
            const auto got = back.to_f64();
            ASSERT_EQ(got.size(), values.size());
            for (std::size_t i = 0; i < values.size(); ++i)
                EXPECT_TRUE(same_value(got[i], values[i])) << i << ": " << got[i] << " vs " << values[i];
        }
    }
}

TEST(Npy, FileRoundTripAndOddShapes) {
    const std::string path = (fs::temp_directory_path() / "hb_test_npy_roundtrip.npy").string();
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{7}, Shape{1, 3, 1, 2}}) {
        std::vector<double> values(static_cast<std::size_t>(numel(shape)));
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.5 * static_cast<double>(i) - 1;
        write_npy(path, NpyArray::from_values(values, DType::f32, shape));
        const NpyArray back = read_npy(path);
        EXPECT_EQ(back.shape, shape);
        EXPECT_EQ(back.to_f64(), values);
    }
    std::remove(path.c_str());
}

TEST(Npy, HeaderIsWhatNumPyAccepts) {
    const std::string file = encode_npy(NpyArray::from_values(std::vector<double>{1, 2, 3}, DType::f32, {3}));
    const std::size_t header_len = static_cast<unsigned char>(file[8]) | (static_cast<unsigned char>(file[9]) << 8);
    const std::string header = file.substr(10, header_len);
    EXPECT_EQ((10 + header_len) % 64, 0u) << "data must start 64-byte aligned";
    EXPECT_EQ(header.back(), '\n');
    EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0), 0u) << header;
}

TEST(Npy, Bfloat16IsMarkedU2WithOnlyNumPysKeysInTheDictionary) {
    const std::string file = encode_npy(NpyArray::from_values(std::vector<double>{1, -2}, DType::bf16, {2}));
    const std::string header = file.substr(10, file.find('\n') - 10);
    // np.load rejects a dictionary with keys other than descr, fortran_order and shape, so
    // the marker is a Python comment after the dictionary, which np.load ignores.
    const std::string dict = header.substr(0, header.find('}') + 1);
    EXPECT_EQ(dict, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }");
    EXPECT_NE(header.find("} # hapbench_dtype: bfloat16"), std::string::npos) << header;
    EXPECT_EQ(decode_npy(bytes_of(file), "mem").dtype, DType::bf16);
}

TEST(Npy, ReadsFilesOfOtherWriters) {
    // The marker as an extra dictionary key, double-quoted strings, no trailing comma,
    // 16-byte alignment as old NumPy wrote it, and format 2.0.
    const std::string bf16_bits = std::string("\x80\x3f\x00\xc0", 4);  // 1.0, -2.0
    for (const std::string dict : {"{'descr': '<u2', 'fortran_order': False, 'shape': (2,), 'hapbench_dtype': 'bfloat16', }",
                                   "{\"descr\": \"<u2\", \"fortran_order\": False, \"shape\": (2,), \"hapbench_dtype\": \"bfloat16\"}"}) {
        for (int major : {1, 2}) {
            const NpyArray a = decode_npy(bytes_of(make_npy(dict, bf16_bits, major)), "mem");
            EXPECT_EQ(a.dtype, DType::bf16);
            EXPECT_EQ(a.to_f64(), (std::vector<double>{1.0, -2.0}));
        }
    }
    const NpyArray f = decode_npy(bytes_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2)}", f32_bytes({1.5f, 2.5f}))), "mem");
    EXPECT_EQ(f.shape, (Shape{1, 2}));
    EXPECT_EQ(f.to_f64(), (std::vector<double>{1.5, 2.5}));
    // One-byte types have no byte order.
    EXPECT_EQ(decode_npy(bytes_of(make_npy("{'descr': '<i1', 'fortran_order': False, 'shape': (1,), }", "\xff")), "mem").to_f64(),
              std::vector<double>{-1});
}

TEST(Npy, UnmarkedU2IsBfloat16OnlyWhereTheCallerSaysSo) {
    const std::string file = make_npy("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", std::string("\x80\x3f", 2));
    EXPECT_NPY_ERROR(file, "without the hapbench_dtype marker");
    EXPECT_EQ(decode_npy(bytes_of(file), "mem", DType::bf16).to_f64(), std::vector<double>{1.0});
}

TEST(Npy, MalformedFilesGetSpecificErrorsNamingTheFile) {
    const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    const std::string data = f32_bytes({1, 2});
    const std::string ok = make_npy(ok_dict, data);
    ASSERT_EQ(decode_error(ok), "");

    EXPECT_NPY_ERROR("", "bad magic");
    EXPECT_NPY_ERROR("PK\x03\x04 zip file", "bad magic");
    EXPECT_NPY_ERROR(std::string("\x93NUMPY\x01", 7), "truncated header");
    EXPECT_NPY_ERROR(std::string("\x93NUMPY\x01\x00\x10", 9), "truncated header");
    EXPECT_NPY_ERROR(ok.substr(0, 30), "truncated header");
    {
        std::string v3 = ok;
        v3[6] = 3;
        EXPECT_NPY_ERROR(v3, "unsupported .npy format version 3.0");
    }
    EXPECT_NPY_ERROR(ok.substr(0, ok.size() - 1), "truncated data");
    EXPECT_NPY_ERROR(ok + "x", "shape/size mismatch");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data), "truncated data");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", data), "Fortran-order");
    EXPECT_NPY_ERROR(make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", data), "big-endian");
    EXPECT_NPY_ERROR(make_npy("{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }", data), "big-endian");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", data), "unsupported dtype descr '<c8'");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", data), "unsupported dtype descr");
    EXPECT_NPY_ERROR(make_npy("{'fortran_order': False, 'shape': (2,), }", data), "no 'descr'");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'shape': (2,), }", data), "no 'fortran_order'");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': False, }", data), "no 'shape'");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data), "unexpected key 'x'");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data), "appears twice");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data), "negative dimension");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", data), "True or False");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk", data), "unexpected text after");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", data), "before its dictionary closes");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (44444444444444444444,), }", data), "dimension too large");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }", data),
                     "too large");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } # hapbench_dtype: bfloat16", data),
                     "needs descr '<u2'");
    EXPECT_NPY_ERROR(make_npy("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), } # hapbench_dtype: float8", data),
                     "unknown hapbench_dtype 'float8'");
}

TEST(Npy, ReadErrorsNameThePath) {
    const std::string path = (fs::temp_directory_path() / "hb_test_npy_truncated.npy").string();
    std::ofstream(path, std::ios::binary) << make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", "abc");
    try {
        read_npy(path);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path + ": truncated data"), std::string::npos) << e.what();
    }
    std::remove(path.c_str());
    EXPECT_THROW(read_npy(path), Error);
}

// Inputs the fuzzer (tests/fuzz/fuzz_npy.sh) found or that exercise its corners: each must
// end in a clean hb::Error or a valid array, never a crash.
TEST(Npy, FuzzRegressionInputs) {
    const fs::path dir = fs::path(HB_TEST_DATA_DIR) / "npy";
    ASSERT_TRUE(fs::is_directory(dir)) << dir << " is part of the repository";
    int files = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (!entry.is_regular_file()) continue;
        ++files;
        try {
            const NpyArray a = read_npy(entry.path().string());
            EXPECT_EQ(a.bytes.size(), static_cast<std::size_t>(a.numel()) * dtype_size(a.dtype));
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(entry.path().string()), std::string::npos) << e.what();
        }
    }
    EXPECT_GT(files, 0);
}

}  // namespace
}  // namespace hb
