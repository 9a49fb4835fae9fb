// `hapbench export` and `hapbench compare` run like a user runs them: a case exported as
// .npy files, output files written from it, and the verdicts, statistics and exit codes of
// compare (0 pass, 1 fail, 2 bad input).
//
// This binary does not link hapbench's library, so candidate files are made from the
// exported same_precision_<out>.npy (written by hapbench's .npy writer, in the output
// dtype): its header is kept and elements of its payload are edited. The reader and
// writer themselves are tested in tests/unit/test_npy.cpp.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run_hapbench.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;

// A .npy file as header bytes plus payload, enough to edit elements of a float32 or
// float64 array in place.
struct NpyFile {
    std::string header;  // magic through the padded header dictionary
    std::string data;

    static NpyFile read(const fs::path& path) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string all = ss.str();
        EXPECT_GT(all.size(), 10u) << path;
        EXPECT_EQ(all[6], 1) << path << ": the exporter writes format 1.0";
        const std::size_t header_len = static_cast<unsigned char>(all[8]) | (static_cast<unsigned char>(all[9]) << 8);
        return {all.substr(0, 10 + header_len), all.substr(10 + header_len)};
    }
    void write(const fs::path& path) const { std::ofstream(path, std::ios::binary) << header << data; }
    bool has_descr(const std::string& descr) const { return header.find("'descr': '" + descr + "'") != std::string::npos; }

    std::size_t f32_count() const { return data.size() / 4; }
    float f32(std::size_t i) const {
        float v;
        std::memcpy(&v, data.data() + 4 * i, 4);
        return v;
    }
    void set_f32(std::size_t i, float v) { std::memcpy(data.data() + 4 * i, &v, 4); }
    double f64(std::size_t i) const {
        double v;
        std::memcpy(&v, data.data() + 8 * i, 8);
        return v;
    }
};

std::string temp_root() {
    static const std::string root = (fs::temp_directory_path() / ("hb_test_export_compare_" + std::to_string(getpid()))).string();
    return root;
}

std::string export_case(const std::string& op, int case_id, const std::string& name) {
    const std::string dir = temp_root() + "/" + name;
    const CommandResult r = run_hapbench("export --op " + op + " --case " + std::to_string(case_id) + " --dir " + dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir;
}

// The region each element's golden value (truncated to float32) falls in, as the fallback
// sees it for a candidate that equals the golden.
std::vector<std::size_t> indices_where(const NpyFile& golden, std::size_t count, double lo, double hi) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < golden.data.size() / 8 && out.size() < count; ++i) {
        const double y = std::fabs(static_cast<double>(static_cast<float>(golden.f64(i))));
        if (y >= lo && y < hi) out.push_back(i);
    }
    EXPECT_EQ(out.size(), count) << "the case has too few elements with |y| in [" << lo << ", " << hi << ")";
    return out;
}

const double kTauSv = std::ldexp(1.0, -14);  // float32 small-value region: |y| < 2^-14
const double kTauCb = std::ldexp(1.0, -8);   // float32 cancellation region: |y| < 2^-8

// sigmoid case 13: float32, 31K elements, values in [-100, 100], so the outputs cover the
// small-value, cancellation and normal regions.
class ExportCompare : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        fs::create_directories(temp_root());
        dir_ = new std::string(export_case("sigmoid", 13, "sigmoid13"));
    }
    static void TearDownTestSuite() {
        fs::remove_all(temp_root());
        delete dir_;
    }
    static fs::path file(const std::string& name) { return fs::path(*dir_) / name; }

    // Writes `candidate` and runs compare on it (JSON), against `case_dir`.
    static CommandResult compare(const NpyFile& candidate, const std::string& name,
                                 const std::string& case_dir = *dir_) {
        const fs::path path = fs::path(temp_root()) / (name + ".npy");
        candidate.write(path);
        return run_hapbench("compare --case-dir " + case_dir + " --output y=" + path.string() + " --format json");
    }
    static const nlohmann::json& output_of(const nlohmann::json& j) { return j.at("outputs").at(0); }

    static std::string* dir_;
};
std::string* ExportCompare::dir_ = nullptr;

TEST_F(ExportCompare, ExportWritesInputsReferencesAndCaseJson) {
    for (const char* f : {"in_x.npy", "golden_y.npy", "same_precision_y.npy", "proto.yaml", "case.json"})
        EXPECT_TRUE(fs::exists(file(f))) << f;
    std::ifstream in(file("case.json"));
    const auto meta = nlohmann::json::parse(in);
    EXPECT_EQ(meta.at("operator"), "sigmoid");
    EXPECT_EQ(meta.at("case_id"), 13);
    EXPECT_EQ(meta.at("split"), "public");
    EXPECT_EQ(meta.at("eval_seed"), 0);
    EXPECT_TRUE(meta.at("case_seed").is_number_integer());
    EXPECT_EQ(meta.at("suite_hash").get<std::string>().size(), 64u);
    const auto& out = meta.at("outputs").at(0).at("tensors").at(0);
    EXPECT_EQ(out.at("dtype"), "float32");
    EXPECT_EQ(out.at("compare"), "relative");
    EXPECT_DOUBLE_EQ(out.at("thresholds").at("tau").get<double>(), std::ldexp(1.0, -13));
    EXPECT_DOUBLE_EQ(out.at("thresholds").at("max_rel").get<double>(), 10 * std::ldexp(1.0, -13));

    const NpyFile golden = NpyFile::read(file("golden_y.npy"));
    const NpyFile same = NpyFile::read(file("same_precision_y.npy"));
    const NpyFile x = NpyFile::read(file("in_x.npy"));
    EXPECT_TRUE(golden.has_descr("<f8"));
    EXPECT_TRUE(same.has_descr("<f4"));
    EXPECT_TRUE(x.has_descr("<f4"));
    EXPECT_EQ(golden.data.size(), 2 * same.data.size());
    // The golden is sigmoid of the exported input, in fp64.
    for (std::size_t i : {std::size_t{0}, std::size_t{1000}, x.f32_count() - 1})
        EXPECT_NEAR(golden.f64(i), 1 / (1 + std::exp(-static_cast<double>(x.f32(i)))), 1e-15);
}

TEST_F(ExportCompare, ExportIsDeterministic) {
    const std::string again = export_case("sigmoid", 13, "sigmoid13_again");
    for (const char* f : {"in_x.npy", "golden_y.npy", "same_precision_y.npy"})
        EXPECT_EQ(NpyFile::read(file(f)).data, NpyFile::read(fs::path(again) / f).data) << f;
}

TEST_F(ExportCompare, SamePrecisionReferencePassesScreenOne) {
    const CommandResult r = compare(NpyFile::read(file("same_precision_y.npy")), "same");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto j = r.json();
    EXPECT_TRUE(j.at("passed"));
    EXPECT_TRUE(output_of(j).at("screen1_passed"));
    EXPECT_TRUE(output_of(j).at("fallback").is_null());
    EXPECT_EQ(output_of(j).at("mode"), "relative");

    const CommandResult table = run_hapbench("compare --case-dir " + *dir_ + " --output y=" + file("same_precision_y.npy").string());
    EXPECT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("mean rel err"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("verdict: PASS"), std::string::npos) << table.out;
}

TEST_F(ExportCompare, SmallValueErrorsAreRescuedUpToTwice) {
    const NpyFile golden = NpyFile::read(file("golden_y.npy"));
    const auto small = indices_where(golden, 3, 1e-7, kTauSv / 2);
    NpyFile candidate = NpyFile::read(file("same_precision_y.npy"));
    for (std::size_t k = 0; k < 2; ++k) candidate.set_f32(small[k], 2 * candidate.f32(small[k]));

    CommandResult r = compare(candidate, "small_rescued");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    auto v = output_of(r.json());
    EXPECT_FALSE(v.at("screen1_passed"));
    EXPECT_EQ(v.at("fallback").at("candidate_errors").at("small_value"), 2);
    EXPECT_TRUE(v.at("fallback").at("region_passed").at("small_value"));

    candidate.set_f32(small[2], 2 * candidate.f32(small[2]));
    r = compare(candidate, "small_failed");
    ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
    v = output_of(r.json());
    EXPECT_EQ(v.at("fallback").at("candidate_errors").at("small_value"), 3);
    EXPECT_FALSE(v.at("fallback").at("region_passed").at("small_value"));
    EXPECT_NE(v.at("reason").get<std::string>().find("small-value region 3 errors"), std::string::npos) << v.at("reason");
}

TEST_F(ExportCompare, CancellationErrorsAreRescuedUpToTwice) {
    const NpyFile golden = NpyFile::read(file("golden_y.npy"));
    const auto cancel = indices_where(golden, 3, 2 * kTauSv, kTauCb / 2);
    NpyFile candidate = NpyFile::read(file("same_precision_y.npy"));
    for (std::size_t k = 0; k < 2; ++k) candidate.set_f32(cancel[k], 1.5f * candidate.f32(cancel[k]));

    CommandResult r = compare(candidate, "cancel_rescued");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    auto v = output_of(r.json());
    EXPECT_FALSE(v.at("screen1_passed"));
    EXPECT_EQ(v.at("fallback").at("candidate_errors").at("cancellation"), 2);
    EXPECT_TRUE(v.at("fallback").at("region_passed").at("cancellation"));

    candidate.set_f32(cancel[2], 1.5f * candidate.f32(cancel[2]));
    r = compare(candidate, "cancel_failed");
    ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
    v = output_of(r.json());
    EXPECT_FALSE(v.at("fallback").at("region_passed").at("cancellation"));
    EXPECT_NE(v.at("reason").get<std::string>().find("cancellation region 3 errors"), std::string::npos) << v.at("reason");

    const CommandResult table = run_hapbench("compare --case-dir " + *dir_ + " --output y=" + temp_root() + "/cancel_failed.npy");
    EXPECT_EQ(table.exit_code, 1);
    EXPECT_NE(table.out.find("cancellation"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("3 <= 2 * max(0, 1)"), std::string::npos) << table.out;
}

TEST_F(ExportCompare, NormalRegionErrorFailsWhenTheReferenceHasNone) {
    const NpyFile golden = NpyFile::read(file("golden_y.npy"));
    const auto normal = indices_where(golden, 1, 0.1, 1.0);
    NpyFile candidate = NpyFile::read(file("same_precision_y.npy"));
    candidate.set_f32(normal[0], 1.01f * candidate.f32(normal[0]));
    const CommandResult r = compare(candidate, "normal_failed");
    ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
    const auto v = output_of(r.json());
    EXPECT_EQ(v.at("max_rel_err_index"), normal[0]);
    EXPECT_EQ(v.at("fallback").at("candidate_errors").at("normal"), 1);
    EXPECT_EQ(v.at("fallback").at("same_precision_errors").at("normal"), 0);
    EXPECT_FALSE(v.at("fallback").at("region_passed").at("normal"));
}

// The ratio rule of the normal region needs a same-precision reference with errors there,
// which float32 sigmoid never has; compare reads the reference from the case directory, so
// a copy of the case with two such errors planted in it exercises the rule. The copy also
// shows that a case directory compares wherever it is moved.
TEST_F(ExportCompare, NormalErrorsAreRescuedWhenTheReferenceHasThemToo) {
    const std::string copy = temp_root() + "/sigmoid13_copy";
    fs::copy(*dir_, copy, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    const NpyFile golden = NpyFile::read(file("golden_y.npy"));
    const auto normal = indices_where(golden, 7, 0.1, 1.0);
    NpyFile reference = NpyFile::read(file("same_precision_y.npy"));
    NpyFile candidate = reference;
    for (std::size_t k = 0; k < 2; ++k) reference.set_f32(normal[k], 1.01f * reference.f32(normal[k]));
    reference.write(fs::path(copy) / "same_precision_y.npy");
    for (std::size_t k = 2; k < 6; ++k) candidate.set_f32(normal[k], 1.01f * candidate.f32(normal[k]));

    CommandResult r = compare(candidate, "normal_rescued", copy);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    auto v = output_of(r.json());
    EXPECT_FALSE(v.at("screen1_passed"));
    EXPECT_EQ(v.at("fallback").at("candidate_errors").at("normal"), 4);
    EXPECT_EQ(v.at("fallback").at("same_precision_errors").at("normal"), 2);

    candidate.set_f32(normal[6], 1.01f * candidate.f32(normal[6]));
    r = compare(candidate, "normal_ratio_failed", copy);
    ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
    v = output_of(r.json());
    EXPECT_EQ(v.at("fallback").at("candidate_errors").at("normal"), 5);
    EXPECT_FALSE(v.at("fallback").at("region_passed").at("normal"));
}

TEST_F(ExportCompare, NaNWhereTheGoldenIsFiniteFails) {
    NpyFile candidate = NpyFile::read(file("same_precision_y.npy"));
    candidate.set_f32(123, std::nanf(""));
    const CommandResult r = compare(candidate, "nan");
    ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
    const auto v = output_of(r.json());
    EXPECT_EQ(v.at("special_values").at("nan_mismatches"), 1);
    EXPECT_EQ(v.at("special_values").at("first_nan_mismatch_index"), 123);
    EXPECT_NE(v.at("reason").get<std::string>().find("NaN positions differ"), std::string::npos) << v.at("reason");
}

// exp case 14: float32 with +-inf inputs, so the golden holds infinities and zeros.
TEST_F(ExportCompare, InfinityPositionsAndSigns) {
    const std::string dir = export_case("exp", 14, "exp14");
    const NpyFile golden = NpyFile::read(fs::path(dir) / "golden_y.npy");
    std::size_t inf_index = SIZE_MAX;
    for (std::size_t i = 0; i < golden.data.size() / 8 && inf_index == SIZE_MAX; ++i)
        if (std::isinf(golden.f64(i))) inf_index = i;
    ASSERT_NE(inf_index, SIZE_MAX) << "exp case 14 has no infinite golden value";
    const NpyFile same = NpyFile::read(fs::path(dir) / "same_precision_y.npy");

    CommandResult r = compare(same, "exp_same", dir);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_GT(output_of(r.json()).at("special_values").at("inf_matched").get<int>(), 0);

    NpyFile flipped = same;
    flipped.set_f32(inf_index, -flipped.f32(inf_index));
    r = compare(flipped, "exp_flipped", dir);
    ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
    auto v = output_of(r.json());
    EXPECT_EQ(v.at("special_values").at("inf_sign_mismatches"), 1);
    EXPECT_EQ(v.at("special_values").at("first_inf_sign_mismatch_index"), inf_index);
    EXPECT_NE(v.at("reason").get<std::string>().find("opposite-sign infinity"), std::string::npos);

    // Infinity on one side only is compared as the largest finite value: a failure here.
    NpyFile finite = same;
    finite.set_f32(inf_index, 1.0f);
    r = compare(finite, "exp_one_sided", dir);
    ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
    v = output_of(r.json());
    EXPECT_EQ(v.at("special_values").at("inf_one_sided"), 1);
    EXPECT_EQ(v.at("max_rel_err_index"), inf_index);
}

TEST_F(ExportCompare, BadInputExitsTwoWithAClearMessage) {
    const std::string golden = file("golden_y.npy").string();
    CommandResult r = run_hapbench("compare --case-dir " + *dir_ + " --output y=" + golden);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("holds float64, but sigmoid case 13 produces float32"), std::string::npos) << r.err;

    r = run_hapbench("compare --case-dir " + *dir_ + " --output z=" + golden);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("'z'"), std::string::npos) << r.err;

    r = run_hapbench("compare --case-dir " + *dir_ + " --output y=" + file("in_x.npy").string() + " --format yaml");
    EXPECT_EQ(r.exit_code, 2);

    const std::string truncated = temp_root() + "/truncated.npy";
    NpyFile t = NpyFile::read(file("same_precision_y.npy"));
    t.data.resize(t.data.size() - 4);
    t.write(truncated);
    r = run_hapbench("compare --case-dir " + *dir_ + " --output y=" + truncated);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(truncated + ": truncated data"), std::string::npos) << r.err;

    r = run_hapbench("compare --case-dir " + temp_root() + "/nowhere --output y=" + golden);
    EXPECT_EQ(r.exit_code, 2);

    r = run_hapbench("export --op sigmoid --case 999 --dir " + temp_root() + "/none");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("no case 999"), std::string::npos) << r.err;

    r = run_hapbench("export --op sigmoid --case 1 --split hidden --dir " + temp_root() + "/none");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--hidden-seed"), std::string::npos) << r.err;
}

// bfloat16 outputs travel as <u2 with the hapbench_dtype marker, and compare accepts them.
TEST_F(ExportCompare, Bfloat16CaseRoundTrips) {
    const std::string dir = export_case("sigmoid", 4, "sigmoid4");
    const NpyFile same = NpyFile::read(fs::path(dir) / "same_precision_y.npy");
    EXPECT_TRUE(same.has_descr("<u2"));
    EXPECT_NE(same.header.find("# hapbench_dtype: bfloat16"), std::string::npos) << same.header;
    const CommandResult r = run_hapbench("compare --case-dir " + dir + " --output y=" + (fs::path(dir) / "same_precision_y.npy").string());
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
}

}  // namespace
}  // namespace hb::test
