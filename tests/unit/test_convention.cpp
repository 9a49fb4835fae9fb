// The cann-bench convention's machinery (docs/hap.md, "The two conventions"): its one cost
// table and what a malformed table earns, convention names and the refusal of unknown ones,
// the rates a hardware model gives it, and the convention's T_HW on hand-built work models.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "hap/convention.hpp"
#include "hap/hardware_model.hpp"

namespace hb {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() / "hb_test_convention";
    std::filesystem::create_directories(dir);
    const auto path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
}

std::string shipped_table_text() {
    std::ifstream f(default_cann_bench_costs_path());
    return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::string costs_error(const std::string& name, const std::string& text) {
    try {
        load_convention_costs(write_temp(name, text));
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::bad_input);
        return e.what();
    }
    return {};
}

// The table of issue 15: an elementary operation or a cast 1, exp 2, ln 1, tanh 2, erf 2,
// division 4; and the two it implies (fma, a multiply and an add; pow, ln + mul + exp).
TEST(ConventionCosts, ShippedTableIsTheIssuesTable) {
    const ConventionCosts& c = cann_bench_costs();
    EXPECT_EQ(c.name, "cann-bench");
    for (OpClass e : {OpClass::add, OpClass::mul, OpClass::cmp, OpClass::select, OpClass::abs, OpClass::cast})
        EXPECT_EQ(c.cost.at(e).value, 1) << op_class_name(e);
    EXPECT_EQ(c.cost.at(OpClass::exp).value, 2);
    EXPECT_EQ(c.cost.at(OpClass::log).value, 1);
    EXPECT_EQ(c.cost.at(OpClass::tanh).value, 2);
    EXPECT_EQ(c.cost.at(OpClass::erf).value, 2);
    EXPECT_EQ(c.cost.at(OpClass::div).value, 4);
    EXPECT_EQ(c.cost.at(OpClass::fma).value, 2);
    EXPECT_EQ(c.cost.at(OpClass::pow).value, 4);
    EXPECT_EQ(c.cost.at(OpClass::sqrt).value, 1);
    for (OpClass e : all_op_classes) EXPECT_FALSE(c.cost.at(e).source.empty()) << op_class_name(e);
}

TEST(ConventionCosts, MalformedTablesNameFileAndField) {
    const std::string text = shipped_table_text();
    const std::string missing = costs_error("missing.yaml", replace(text, "  erf:\n", "  erf_typo:\n"));
    EXPECT_NE(missing.find("missing.yaml:"), std::string::npos) << missing;
    EXPECT_NE(missing.find("unknown op class 'erf_typo'"), std::string::npos) << missing;
    const std::string zero = costs_error("zero.yaml", replace(text, "    value: 4\n", "    value: 0\n"));
    EXPECT_NE(zero.find("costs.div: must be a positive finite number"), std::string::npos) << zero;
    const std::string name = costs_error("name.yaml", replace(text, "name: cann-bench", "name: cannbench"));
    EXPECT_NE(name.find("unknown T_HW convention 'cannbench'"), std::string::npos) << name;
    const std::string extra = costs_error("extra.yaml", text + "rates: {}\n");
    EXPECT_NE(extra.find("rates"), std::string::npos) << extra;
    // A table without some class: an operator counting it would have no time.
    std::string no_pow = text.substr(0, text.find("  pow:"));
    const std::string absent = costs_error("absent.yaml", no_pow);
    EXPECT_NE(absent.find("missing op class 'pow'"), std::string::npos) << absent;
}

TEST(ConventionName, KnownNamesRoundTripAndOthersAreRefused) {
    EXPECT_EQ(parse_convention("hapbench"), Convention::hapbench);
    EXPECT_EQ(parse_convention("cann-bench"), Convention::cann_bench);
    EXPECT_EQ(convention_name(Convention::cann_bench), "cann-bench");
    for (const char* bad : {"cann", "CANN-bench", "", "hapbench "}) {
        try {
            parse_convention(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ExitCode::bad_input);
            const std::string msg = e.what();
            EXPECT_NE(msg.find("unknown T_HW convention '" + std::string(bad) + "'"), std::string::npos) << msg;
            EXPECT_NE(msg.find("known: hapbench, cann-bench"), std::string::npos) << msg;
        }
    }
}

// The 910B2 states the rates its published values imply; a model without them prices
// formula work at its vector unit's rate over an add's cost; the read bandwidth is the chip's.
TEST(ConventionRates, StatedOnThe910B2AndDerivedElsewhere) {
    const HardwareModel b2 = load_hardware_model("ascend910b2");
    EXPECT_DOUBLE_EQ(cann_bench_vector_ops_per_s(b2, DType::f32), 6.0e12);
    EXPECT_DOUBLE_EQ(cann_bench_vector_ops_per_s(b2, DType::f16), 1.2e13);
    EXPECT_DOUBLE_EQ(cann_bench_vector_ops_per_s(b2, DType::i16), 1.2e13);
    EXPECT_DOUBLE_EQ(cann_bench_vector_ops_per_s(b2, DType::i64), 3.0e12);
    const ConventionRates r = cann_bench_rates(b2);
    EXPECT_DOUBLE_EQ(r.read_bytes_per_s, 1.92e12);  // 24 AI cores x 80 GB/s of MTE2
    EXPECT_EQ(r.read_unit, "mte2");
    EXPECT_EQ(r.read_group, "MTE");
    EXPECT_EQ(r.vector_group, "Vector");
    // 910B3: 20 AI cores x 2 vector cores x 64 fp32 lanes x 1.8 GHz, an add one slot.
    const HardwareModel b3 = load_hardware_model("ascend910b3");
    EXPECT_NEAR(cann_bench_vector_ops_per_s(b3, DType::f32), 20 * 2 * 64 * 1.8e9, 1e3);
    // H100: the FP32 pipe's flops (an FMA is two) over an add's two flops.
    const HardwareModel h = load_hardware_model("h100-sxm");
    const ExecutionUnit* pipe = h.find_unit("fp32_pipe");
    ASSERT_NE(pipe, nullptr);
    EXPECT_NEAR(cann_bench_vector_ops_per_s(h, DType::f32),
                pipe->flops_per_s.at(DType::f32).value * 132 / pipe->vector_flops_per_element.at(OpClass::add).value, 1e3);
    EXPECT_EQ(cann_bench_rates(h).read_group, "Memory");
}

TEST(ConventionRates, ModelFileMistakesAreRefused) {
    const std::string base = R"(name: tiny
kind: ascend
provenance: {origin: published, date: 2026-01-01, method: tests}
floor_us: 1
cores: 1
CONVENTIONS
units:
  - name: vector
    group: Vector
    per: chip
    serves: [vector, bytes_read]
    bytes_per_s: {value: 1.0e12, source: x}
    flops_per_s: {float32: {value: 1.0e12, source: x}}
    vector_flops_per_element: {add: {value: 1, source: x}}
    source: x
)";
    auto error_of = [&](const std::string& name, const std::string& conventions) {
        try {
            load_hardware_model(write_temp(name, replace(base, "CONVENTIONS", conventions)));
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    const std::string ok = error_of("ok.yaml", "conventions: {cann-bench: {vector_ops_per_s: {float32: {value: 2.0e12, source: x}}}}");
    EXPECT_EQ(ok, "");
    const std::string unknown = error_of("unknown.yaml", "conventions: {cann: {vector_ops_per_s: {}}}");
    EXPECT_NE(unknown.find("unknown.yaml:"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("unknown T_HW convention 'cann'"), std::string::npos) << unknown;
    const std::string own = error_of("own.yaml", "conventions: {hapbench: {vector_ops_per_s: {float32: {value: 1, source: x}}}}");
    EXPECT_NE(own.find("conventions.hapbench"), std::string::npos) << own;
    const std::string typo = error_of("typo.yaml", "conventions: {cann-bench: {vector_ops: {}}}");
    EXPECT_NE(typo.find("vector_ops"), std::string::npos) << typo;
    const std::string negative =
        error_of("negative.yaml", "conventions: {cann-bench: {vector_ops_per_s: {float32: {value: -1, source: x}}}}");
    EXPECT_NE(negative.find("negative.yaml:"), std::string::npos) << negative;
    EXPECT_NE(negative.find("conventions.cann-bench.vector_ops_per_s.float32"), std::string::npos) << negative;
    // A dtype the stated rates leave out is named when formula work needs it.
    const HardwareModel m = load_hardware_model(write_temp(
        "partial.yaml",
        replace(base, "CONVENTIONS", "conventions: {cann-bench: {vector_ops_per_s: {float32: {value: 2.0e12, source: x}}}}")));
    EXPECT_DOUBLE_EQ(cann_bench_vector_ops_per_s(m, DType::f32), 2.0e12);
    try {
        cann_bench_vector_ops_per_s(m, DType::i64);
        ADD_FAILURE() << "no int64 rate, yet priced";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("not for int64"), std::string::npos) << e.what();
    }
}

WorkModel formula_only(std::initializer_list<VectorWork> terms) {
    WorkModel w;
    w.formula = terms;
    return w;
}

// T_HW = max(floor, input bytes / read bandwidth, formula ops / rate, MACs / matrix rate).
TEST(SolveCannBench, TheLargestTermBindsAboveTheFloor) {
    const HardwareModel b2 = load_hardware_model("ascend910b2");
    const ConventionCosts& costs = cann_bench_costs();
    // sigmoid bf16 [4096, 4096]: 10 operations per element (8 + 2 casts) at 6.0e12 = 27.96 us
    // against 32 MiB / 1.92 TB/s = 17.48 us read: Vector. (Published 27.96.)
    const double n = 4096.0 * 4096;
    const HapResult s = solve_cann_bench(
        formula_only({{OpClass::add, DType::f32, 2 * n}, {OpClass::exp, DType::f32, n}, {OpClass::div, DType::f32, n},
                      {OpClass::cast, DType::f32, 2 * n}}),
        2 * n, b2, costs);
    EXPECT_NEAR(s.t_hw_us, 10 * n / 6.0e12 * 1e6, 1e-9);
    EXPECT_NEAR(s.t_hw_us, 27.96, 0.01);
    EXPECT_EQ(s.bottleneck_group, "Vector");
    EXPECT_NEAR(s.unit_us.at("mte2"), 2 * n / 1.92e12 * 1e6, 1e-9);
    EXPECT_FALSE(s.floored);
    // The same work on fp32 data read at 4 bytes an element: the read binds (MTE).
    const HapResult m = solve_cann_bench(formula_only({{OpClass::add, DType::f32, n}}), 4 * n, b2, costs);
    EXPECT_EQ(m.bottleneck_group, "MTE");
    EXPECT_NEAR(m.t_hw_us, 4 * n / 1.92e12 * 1e6, 1e-9);
    // A tiny case sits at the 1 us floor and says so.
    const HapResult f = solve_cann_bench(formula_only({{OpClass::add, DType::f32, 100}}), 400, b2, costs);
    EXPECT_TRUE(f.floored);
    EXPECT_EQ(f.t_hw_us, 1.0);
    EXPECT_LT(f.unfloored_us, 1.0);
}

TEST(SolveCannBench, MatrixWorkIsPricedAsMacsAtTheMatrixUnitsRate) {
    const HardwareModel b2 = load_hardware_model("ascend910b2");
    WorkModel w;
    w.contractions.push_back({DType::f16, DType::f16, 1, 4096, 4096, 4096, false});
    w.formula.push_back({OpClass::add, DType::f16, 4096.0 * 4096});
    const HapResult r = solve_cann_bench(w, 2 * 2 * 4096.0 * 4096, b2, cann_bench_costs());
    // 4096^3 MACs x 2 flops / (24 x 14.7456 TFLOPS) = 388.4 us, unpadded (the formula's MACs).
    EXPECT_NEAR(r.t_hw_us, 4096.0 * 4096 * 4096 * 2 / (24 * 16 * 16 * 16 * 2 * 1.8e9) * 1e6, 1e-6);
    EXPECT_EQ(r.bottleneck_group, "Cube");
    EXPECT_EQ(r.bottleneck_unit, "cube");
}

TEST(SolveCannBench, AWorkModelWithoutAFormulaCountIsAnError) {
    const HardwareModel b2 = load_hardware_model("ascend910b2");
    WorkModel w;
    w.bytes_read = 1e6;
    w.add_vector(OpClass::add, DType::f32, 1e6);  // hapbench's work alone
    try {
        solve_cann_bench(w, 1e6, b2, cann_bench_costs());
        FAIL() << "a work model without a formula count was priced";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("WorkModel::formula"), std::string::npos) << msg;
        EXPECT_NE(msg.find("Adding an operator under both conventions"), std::string::npos) << msg;
    }
}

}  // namespace
}  // namespace hb
