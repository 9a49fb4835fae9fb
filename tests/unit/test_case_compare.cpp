// Comparing output files against a case directory (eval/case_compare) on a hand-made case
// with an integer output and a +-1 tolerance: no level-1 operator has an integer output,
// and compare needs no operator code, only case.json, the proto copy and the arrays.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "eval/case_compare.hpp"
#include "eval/case_export.hpp"

namespace hb {
namespace {

namespace fs = std::filesystem;

class IntegerOutputCase : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("hb_test_case_compare_" + std::to_string(::getpid()));
        fs::create_directories(dir_);
        std::ofstream(dir_ / "proto.yaml") << "operator:\n"
                                              "  name: IntProbe\n"
                                              "  attrs:\n"
                                              "  - name: shift\n"
                                              "    type: int\n"
                                              "    default: 0\n"
                                              "  inputs:\n"
                                              "  - name: x\n"
                                              "    dtype: [int8]\n"
                                              "  outputs:\n"
                                              "  - name: y\n"
                                              "    dtype: [int8]\n"
                                              "  precision_thresholds:\n"
                                              "    int8: 1.0\n"
                                              "  schema: 'int_probe(Tensor x, int shift=0) -> Tensor y'\n";
        write_npy(path("in_x.npy"), NpyArray::from_values(std::vector<double>{1, 2, 3, 4, 5, 6}, DType::i8, {2, 3}));
        write_npy(path("golden_y.npy"), NpyArray::from_values(golden_, DType::f64, {2, 3}));
        write_npy(path("same_precision_y.npy"), NpyArray::from_values(golden_, DType::i8, {2, 3}));
        const nlohmann::json meta = {
            {"format", "hapbench-case"}, {"format_version", kCaseFormatVersion}, {"operator", "int_probe"},
            {"level", 1}, {"case_id", 1}, {"split", "public"}, {"eval_seed", 0}, {"case_seed", 0},
            {"proto", "proto.yaml"}, {"attrs", {{"shift", 0}}},
            {"inputs", {{{"name", "x"}, {"is_list", false}, {"present", true},
                         {"tensors", {{{"dtype", "int8"}, {"shape", {2, 3}}, {"file", "in_x.npy"}}}}}}},
            {"outputs", {{{"name", "y"}, {"is_list", false}, {"present", true},
                          {"tensors", {{{"dtype", "int8"}, {"shape", {2, 3}}, {"golden", "golden_y.npy"},
                                        {"same_precision", "same_precision_y.npy"}}}}}}},
        };
        std::ofstream(dir_ / "case.json") << meta.dump(2);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string path(const std::string& file) const { return (dir_ / file).string(); }
    std::string candidate(const std::vector<double>& values, DType dtype = DType::i8, Shape shape = {2, 3}) {
        const std::string p = path("candidate.npy");
        write_npy(p, NpyArray::from_values(values, dtype, shape));
        return p;
    }
    std::string error_of(const std::vector<CandidateFile>& files) {
        try {
            compare_case(load_case_dir(dir_.string()), files);
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ExitCode::bad_input);
            return e.what();
        }
        return "";
    }

    fs::path dir_;
    std::vector<double> golden_{-3, 0, 7, 100, -128, 127};
};

TEST_F(IntegerOutputCase, WithinPlusMinusOnePasses) {
    const ExportedCase c = load_case_dir(dir_.string());
    const GateResult gate = compare_case(c, {{"y", candidate({-2, -1, 7, 99, -127, 126})}});
    ASSERT_EQ(gate.outputs.size(), 1u);
    const OutputVerdict& v = gate.outputs[0];
    EXPECT_TRUE(gate.passed) << gate.reason;
    EXPECT_EQ(v.mode, CompareMode::integer);
    EXPECT_EQ(v.thresholds.abs_tolerance(), 1.0);
    EXPECT_TRUE(v.thresholds.tau_overridden);
    EXPECT_EQ(v.max_abs_err, 1.0);
    EXPECT_EQ(v.mismatches, 0);
}

TEST_F(IntegerOutputCase, OffByTwoFailsAtItsIndex) {
    const GateResult gate = compare_case(load_case_dir(dir_.string()), {{"y", candidate({-3, 0, 9, 100, -128, 127})}});
    EXPECT_FALSE(gate.passed);
    const OutputVerdict& v = gate.outputs.at(0);
    EXPECT_EQ(v.mismatches, 1);
    EXPECT_EQ(v.first_mismatch_index, 2);
    EXPECT_EQ(v.first_mismatch_got, 9);
    EXPECT_NE(gate.reason.find("differ by more than 1"), std::string::npos) << gate.reason;
}

// The same verdicts through the command line, as a user runs it.
int compare_exit_code(const std::string& case_dir, const std::string& candidate_file) {
    const std::string cmd = std::string(HB_HAPBENCH_BIN) + " compare --case-dir " + case_dir + " --output y=" +
                            candidate_file + " >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(IntegerOutputCase, CommandLinePassesWithinPlusMinusOne) {
    EXPECT_EQ(compare_exit_code(dir_.string(), candidate({-2, -1, 7, 99, -127, 126})), 0);
}

TEST_F(IntegerOutputCase, CommandLineFailsOffByTwo) {
    EXPECT_EQ(compare_exit_code(dir_.string(), candidate({-3, 0, 9, 100, -128, 127})), 1);
}

TEST_F(IntegerOutputCase, StructuralMismatchesAreBadInput) {
    EXPECT_NE(error_of({{"y", candidate({-3, 0, 7, 100, -128, 127}, DType::i16)}}).find("holds int16"), std::string::npos);
    EXPECT_NE(error_of({{"y", candidate({-3, 0, 7, 100, -128, 127}, DType::i8, {3, 2})}}).find("has shape [3, 2]"),
              std::string::npos);
    EXPECT_NE(error_of({}).find("no file was given for y"), std::string::npos);
    const std::string ok = candidate(golden_);
    EXPECT_NE(error_of({{"y", ok}, {"z", ok}}).find("'z'"), std::string::npos);
    EXPECT_NE(error_of({{"y", ok}, {"y", ok}}).find("given twice"), std::string::npos);
}

TEST_F(IntegerOutputCase, InconsistentCaseDirectoryNamesTheFile) {
    write_npy(path("golden_y.npy"), NpyArray::from_values(std::vector<double>{1, 2}, DType::f64, {2}));
    const std::string message = error_of({{"y", candidate(golden_)}});
    EXPECT_NE(message.find("golden_y.npy: has shape [2]"), std::string::npos) << message;
}

TEST(CandidateArg, ParsesNameEqualsFile) {
    const CandidateFile f = parse_candidate_arg("ys[1]=/tmp/a=b.npy");
    EXPECT_EQ(f.output, "ys[1]");
    EXPECT_EQ(f.path, "/tmp/a=b.npy");
    EXPECT_THROW(parse_candidate_arg("y.npy"), Error);
    EXPECT_THROW(parse_candidate_arg("y="), Error);
}

}  // namespace
}  // namespace hb
