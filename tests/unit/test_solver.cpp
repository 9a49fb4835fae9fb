// T_HW from a work model and a hand-built hardware model: the per-unit times, the bottleneck
// label, the core-count choice and the floor that every case score depends on.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "hap/hardware_model.hpp"
#include "hap/solver.hpp"

namespace hb {
namespace {

// Four cores; DRAM 10 GB/s for the chip; per core 1 GFLOP/s of vector math and matrix
// MACs sharing the same pipes; fp16 runs as fp32.
constexpr const char* toy_model_yaml = R"(
name: toy
kind: cpu
provenance: {origin: published, date: 2026-01-01, method: hand-built for tests}
floor_us: 0
cores: 4
units:
  - name: dram
    group: Memory
    per: chip
    serves: [bytes_read, bytes_written]
    bytes_per_s: {value: 1.0e10, source: test}
    source: test
  - name: vector
    group: Vector
    per: core
    serves: [vector]
    flops_per_s:
      float32: {value: 1.0e9, source: test}
      float64: {value: 5.0e8, source: test}
    runs_as: {float16: float32}
    runs_as_source: test
    vector_flops_per_element:
      add: {value: 1, source: test}
      exp: {value: 10, source: test}
    shares_with: [matrix]
    source: test
  - name: matrix
    group: Matrix
    per: core
    serves: [matrix]
    flops_per_s:
      float32: {value: 1.0e9, source: test}
    flops_per_mac: {value: 2, source: test}
    source: test
  - name: l2
    group: Memory
    per: core
    serves: []
    bytes_per_s: {value: 1.0e11, source: test}
    source: recorded only
)";

HardwareModel toy_model(double floor_us = 0) {
    HardwareModel m = parse_hardware_model(toy_model_yaml, "toy.yaml");
    m.floor_us = floor_us;
    return m;
}

// Reads and writes `bytes_per_element` per element each way.
WorkModel elementwise(double elements, OpClass cls, DType dtype, double bytes_per_element) {
    WorkModel w;
    w.bytes_read = elements * bytes_per_element;
    w.bytes_written = elements * bytes_per_element;
    w.add_vector(cls, dtype, elements);
    w.parallel_items = elements;
    return w;
}

TEST(Solver, MemoryBoundCaseIsLabelledMemoryAndTimedByDram) {
    // 4 MB moved at 10 GB/s = 400 us; 1e6 adds over 4 cores at 1 GFLOP/s = 250 us.
    const HapResult r = solve(elementwise(1e6, OpClass::add, DType::f32, 2), toy_model());
    EXPECT_DOUBLE_EQ(r.unit_us.at("dram"), 4e6 / 1e10 * 1e6);
    EXPECT_DOUBLE_EQ(r.unit_us.at("vector"), 1e6 * 1 / 1e9 / 4 * 1e6);
    EXPECT_DOUBLE_EQ(r.t_hw_us, r.unit_us.at("dram"));
    EXPECT_EQ(r.bottleneck_unit, "dram");
    EXPECT_EQ(r.bottleneck_group, "Memory");
    EXPECT_EQ(r.choice.cores_used, 4);
    EXPECT_FALSE(r.unit_us.count("l2")) << "a unit serving no work gets no time";
}

TEST(Solver, TranscendentalCaseIsComputeBoundWithItsOpCost) {
    // exp costs 10 flops per element: 1e7 flops / 4 GFLOP/s = 2500 us > 400 us of DRAM.
    const HapResult r = solve(elementwise(1e6, OpClass::exp, DType::f32, 2), toy_model());
    EXPECT_DOUBLE_EQ(r.unit_us.at("vector"), 1e6 * 10 / 1e9 / 4 * 1e6);
    EXPECT_DOUBLE_EQ(r.t_hw_us, r.unit_us.at("vector"));
    EXPECT_EQ(r.bottleneck_unit, "vector");
    EXPECT_EQ(r.bottleneck_group, "Vector");
}

TEST(Solver, HalfPrecisionMathRunsAtTheFp32RateButMovesHalfTheBytes) {
    const HapResult f16 = solve(elementwise(1e6, OpClass::exp, DType::f16, 2), toy_model());
    const HapResult f32 = solve(elementwise(1e6, OpClass::exp, DType::f32, 4), toy_model());
    EXPECT_DOUBLE_EQ(f16.unit_us.at("vector"), f32.unit_us.at("vector"));
    EXPECT_DOUBLE_EQ(f16.unit_us.at("dram"), f32.unit_us.at("dram") / 2);
    const HapResult f64 = solve(elementwise(1e6, OpClass::exp, DType::f64, 8), toy_model());
    EXPECT_DOUBLE_EQ(f64.unit_us.at("vector"), 2 * f32.unit_us.at("vector"));
}

TEST(Solver, SmallCaseCannotUseEveryCore) {
    // Three rows on four cores: three cores, one row each; the chip-wide DRAM is unchanged.
    WorkModel w = elementwise(3e6, OpClass::exp, DType::f32, 0);
    w.parallel_items = 3;
    const HapResult r = solve(w, toy_model());
    EXPECT_EQ(r.choice.cores_used, 3);
    EXPECT_EQ(r.choice.describe(), "cores=3");
    EXPECT_DOUBLE_EQ(r.unit_us.at("vector"), 3e6 * 10 / 1e9 / 3 * 1e6);

    // Five rows on four cores: the busiest core gets two of them.
    w.parallel_items = 5;
    const HapResult five = solve(w, toy_model());
    EXPECT_EQ(five.choice.cores_used, 4);
    EXPECT_DOUBLE_EQ(five.unit_us.at("vector"), 3e6 * 10 / 1e9 * (2.0 / 5.0) * 1e6);
}

TEST(Solver, FloorAppliesAndIsReported) {
    const HapResult r = solve(elementwise(10, OpClass::add, DType::f32, 4), toy_model(1.0));
    EXPECT_TRUE(r.floored);
    EXPECT_DOUBLE_EQ(r.t_hw_us, 1.0);
    EXPECT_LT(r.unfloored_us, 1.0);
    const HapResult big = solve(elementwise(1e6, OpClass::add, DType::f32, 4), toy_model(1.0));
    EXPECT_FALSE(big.floored);
    EXPECT_DOUBLE_EQ(big.t_hw_us, big.unfloored_us);
}

TEST(Solver, UnitsSharingPipesAddTheirTimes) {
    // 1e6 MACs (2e6 flops) and 1e6 exps (1e7 flops) on the same pipes, one core.
    WorkModel w;
    w.matrix.push_back({DType::f32, 4e6});
    w.add_vector(OpClass::exp, DType::f32, 1e5);
    w.parallel_items = 1;
    const HapResult r = solve(w, toy_model());
    const double matrix_us = 4e6 * 2 / 1e9 * 1e6, vector_us = 1e5 * 10 / 1e9 * 1e6;
    EXPECT_DOUBLE_EQ(r.unit_us.at("matrix"), matrix_us);
    EXPECT_DOUBLE_EQ(r.unit_us.at("vector"), vector_us);
    EXPECT_DOUBLE_EQ(r.t_hw_us, matrix_us + vector_us);
    EXPECT_EQ(r.bottleneck_unit, "matrix");
    EXPECT_EQ(r.bottleneck_group, "Matrix");
}

TEST(Solver, PerCoreUnitWithSeveralInstancesSplitsOverAll) {
    // An accelerator-style core with two vector units per core.
    HardwareModel m = toy_model();
    m.units[1].instances_per_core = 2;
    WorkModel w = elementwise(8e6, OpClass::add, DType::f32, 0);
    const HapResult r = solve(w, m);
    EXPECT_DOUBLE_EQ(r.unit_us.at("vector"), 8e6 / 1e9 / 8 * 1e6);
}

TEST(Solver, WorkNoUnitServesIsAnErrorNamingTheOpClass) {
    try {
        solve(elementwise(100, OpClass::erf, DType::f32, 4), toy_model());
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'erf'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("toy"), std::string::npos) << e.what();
    }
}

TEST(Solver, DtypeWithoutARateIsAnErrorNamingUnitAndDtype) {
    try {
        solve(elementwise(100, OpClass::add, DType::i64, 8), toy_model());
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("'vector'"), std::string::npos) << e.what();
    }
}

// A recurrence: 100 steps of 2 items each on four cores. The total work alone would spread over
// every core; the chain keeps each step on two, so T_HW is the steps' time, and says so.
TEST(Solver, DependentChainBindsWhenAStepHasFewerItemsThanCores) {
    WorkModel w = elementwise(2e5, OpClass::exp, DType::f32, 0);
    w.parallel_items = 2e5;
    w.chain.steps = 100;
    w.chain.items_per_step = 2;
    w.chain.vector.push_back({OpClass::exp, DType::f32, 2e3});  // one step: a hundredth of the work
    const HapResult r = solve(w, toy_model());
    // Throughput: 2e5 exps x 10 flops / 1e9 over 4 cores = 500 us; chain: 100 steps of 2e3
    // exps on two cores (one item each): 100 x 2e3 x 10 / 1e9 / 2 = 1000 us.
    EXPECT_DOUBLE_EQ(r.unit_us.at("vector"), 2e5 * 10 / 1e9 / 4 * 1e6);
    EXPECT_DOUBLE_EQ(r.chain_us, 100 * 2e3 * 10 / 1e9 / 2 * 1e6);
    EXPECT_TRUE(r.chain_bound);
    EXPECT_DOUBLE_EQ(r.t_hw_us, r.chain_us);
    EXPECT_EQ(r.bottleneck_unit, "vector");

    // With as many items per step as cores the chain costs what the total costs: it does not bind.
    w.chain.items_per_step = 4;
    const HapResult wide = solve(w, toy_model());
    EXPECT_FALSE(wide.chain_bound);
    EXPECT_DOUBLE_EQ(wide.chain_us, 100 * 2e3 * 10 / 1e9 / 4 * 1e6);
    EXPECT_DOUBLE_EQ(wide.t_hw_us, wide.unit_us.at("vector"));

    // Three items on four cores: a step still uses only three.
    w.chain.items_per_step = 3;
    EXPECT_DOUBLE_EQ(solve(w, toy_model()).chain_us, 100 * 2e3 * 10 / 1e9 / 3 * 1e6);
}

TEST(Solver, DependentChainStepCountMustBeFinite) {
    WorkModel w = elementwise(100, OpClass::add, DType::f32, 4);
    w.chain.steps = INFINITY;
    w.chain.items_per_step = 1;
    EXPECT_THROW(solve(w, toy_model()), Error);
    w.chain.steps = 5;
    w.chain.items_per_step = 0;
    EXPECT_THROW(solve(w, toy_model()), Error);
}

TEST(Solver, ShippedCpuExampleSolvesAnElementwiseCase) {
    const HardwareModel m = load_hardware_model("cpu-example");
    const HapResult r = solve(elementwise(1 << 20, OpClass::exp, DType::f32, 4), m);
    EXPECT_GT(r.t_hw_us, 0);
    EXPECT_TRUE(std::isfinite(r.t_hw_us));
    EXPECT_FALSE(r.bottleneck_group.empty());
}

}  // namespace
}  // namespace hb
