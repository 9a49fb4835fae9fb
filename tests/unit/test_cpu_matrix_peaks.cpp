// The calibrated CPU model's matrix unit: per dtype the fastest way the CPU can run a
// contraction (FMA, dot products, AMX), absent where it has no instruction of its own, and
// overlapping vector work only where the rates come from the AMX tile unit; a cached model
// of an older calibration format is measured again, never silently used.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "hap/calibrate.hpp"
#include "hap/cpu_info.hpp"
#include "hap/cpu_matrix_peaks.hpp"
#include "hap/cpu_op_costs.hpp"
#include "hap/hardware_model.hpp"
#include "hap/solver.hpp"

namespace hb {
namespace {

const CpuOpCosts& costs() {
    static const CpuOpCosts c = load_cpu_op_costs(default_cpu_op_costs_path());
    return c;
}

MatrixPeakInputs fma_only(double f32_flops = 100e9) {
    MatrixPeakInputs in;
    in.fma_f32 = {f32_flops, "fp32 chains"};
    in.fma_f64 = {f32_flops / 2, "fp64 chains"};
    in.fma_isa = "avx2+fma";
    return in;
}

TEST(CpuMatrixPeaks, AnAvx2OnlyCpuHasNoHalfRatesAndSharesTheFmaPipes) {
    const CalibratedMatrixUnit m = cpu_matrix_unit(fma_only(), costs());
    EXPECT_FALSE(m.beside_vector);
    EXPECT_EQ(m.unit.shares_with, std::vector<std::string>{"vector"});
    EXPECT_EQ(m.unit.flops_per_s.count(DType::f16), 0u);  // absent, not zero: runs as fp32
    EXPECT_EQ(m.unit.flops_per_s.count(DType::bf16), 0u);
    EXPECT_EQ(m.unit.rate_for(DType::bf16)->value, 100e9);
    EXPECT_EQ(m.unit.flops_per_s.at(DType::f32).value, 100e9);
    EXPECT_EQ(m.unit.flops_per_s.at(DType::f64).value, 50e9);
    EXPECT_EQ(m.unit.flops_per_s.at(DType::i8).value, 400e9);  // four int8 lanes per fp32 lane
    EXPECT_NE(m.unit.flops_per_s.at(DType::i8).source.find("derived"), std::string::npos);
    HardwareModel model = load_hardware_model("cpu-example");
    for (auto& u : model.units)
        if (u.name == "matrix") u = m.unit;
    EXPECT_NO_THROW(validate_hardware_model(model));
}

TEST(CpuMatrixPeaks, DotProductInstructionsRaiseTheirDtypesOnly) {
    MatrixPeakInputs in = fma_only();
    in.instructions[MatrixInstruction::avx512_bf16_dot] = {160e9 / 2, "bf16 dot"};  // MACs/s
    in.instructions[MatrixInstruction::avx512_vnni_dot] = {700e9 / 2, "vnni"};
    const CalibratedMatrixUnit m = cpu_matrix_unit(in, costs());
    EXPECT_FALSE(m.beside_vector);
    EXPECT_EQ(m.unit.flops_per_s.at(DType::bf16).value, 160e9);
    EXPECT_NE(m.unit.flops_per_s.at(DType::bf16).source.find("AVX512-BF16"), std::string::npos);
    EXPECT_EQ(m.unit.flops_per_s.at(DType::i8).value, 700e9);
    EXPECT_EQ(m.unit.flops_per_s.count(DType::f16), 0u);
    EXPECT_EQ(m.unit.flops_per_s.at(DType::f32).value, 100e9);
    // A dot-product rate below the widened fp32 rate is listed but not taken.
    in.instructions[MatrixInstruction::avx512_bf16_dot] = {30e9, "slow bf16 dot"};
    EXPECT_EQ(cpu_matrix_unit(in, costs()).unit.flops_per_s.at(DType::bf16).value, 100e9);
}

TEST(CpuMatrixPeaks, AmxSetsTheHalfAndIntRatesAndBoundsFp32ThroughTheBf16Splits) {
    MatrixPeakInputs in = fma_only();
    in.instructions[MatrixInstruction::amx_bf16] = {900e9, "amx bf16"};
    in.instructions[MatrixInstruction::amx_int8] = {1800e9, "amx int8"};
    const CalibratedMatrixUnit m = cpu_matrix_unit(in, costs());
    EXPECT_TRUE(m.beside_vector);
    EXPECT_TRUE(m.unit.shares_with.empty());
    EXPECT_EQ(m.unit.flops_per_s.at(DType::bf16).value, 1800e9);
    EXPECT_EQ(m.unit.flops_per_s.at(DType::i8).value, 3600e9);
    EXPECT_EQ(m.unit.flops_per_s.at(DType::u8).value, 3600e9);
    EXPECT_DOUBLE_EQ(m.unit.flops_per_s.at(DType::f32).value, 300e9);  // three bf16 terms, six products
    EXPECT_DOUBLE_EQ(m.unit.flops_per_s.at(DType::f16).value, 450e9);  // two bf16 terms, four products
    EXPECT_EQ(m.unit.flops_per_s.at(DType::f64).value, 50e9);
    // With a slower tile unit the FMA pipes stay the fp32 peak.
    in.instructions[MatrixInstruction::amx_bf16] = {200e9, "slow amx bf16"};
    EXPECT_EQ(cpu_matrix_unit(in, costs()).unit.flops_per_s.at(DType::f32).value, 100e9);
    in.instructions[MatrixInstruction::amx_bf16] = {900e9, "amx bf16"};
    in.instructions[MatrixInstruction::amx_fp16] = {900e9, "amx fp16"};
    EXPECT_EQ(cpu_matrix_unit(in, costs()).unit.flops_per_s.at(DType::f16).value, 1800e9);
}

TEST(CpuMatrixPeaks, TheSolverChargesContractionsAtTheirDtypesRate) {
    MatrixPeakInputs in = fma_only();
    in.instructions[MatrixInstruction::amx_int8] = {1000e9, "amx int8"};
    HardwareModel model;
    model.name = "m";
    model.kind = HardwareKind::cpu;
    model.cores = 1;
    model.units = {cpu_matrix_unit(in, costs()).unit};
    WorkModel w;
    Contraction c;
    c.dtype = DType::i8;
    c.m = 100;
    c.n = 100;
    c.k = 100;
    w.contractions.push_back(c);
    EXPECT_NEAR(solve(w, model).t_hw_us, 1e6 * 2 * 1e6 / 2000e9, 1e-9);  // 1e6 MACs at 1e12 MAC/s
    w.contractions[0].dtype = DType::f16;  // absent: the fp32 FMA rate
    EXPECT_NEAR(solve(w, model).t_hw_us, 1e6 * 2 * 1e6 / 100e9, 1e-9);
}

// A cache written by an older calibrate (no format marker) is replaced, and says so.
TEST(CpuMatrixPeaks, AnOlderCachedModelIsCalibratedAgain) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("hapbench-cache-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path path = dir / "cpu.yaml";
    HardwareModel old = load_hardware_model("cpu-example");
    const CpuInfo cpu = probe_cpu();
    old.provenance.cpu_model = cpu.model_name;
    old.cores = static_cast<int>(cpu.allowed_cpus.size());
    ASSERT_EQ(old.provenance.method.find(calibration_format), std::string::npos);
    std::ofstream(path) << to_yaml(old);

    CalibrateOptions options;  // not quick: only full calibrations are cached
    options.runs = 1;
    options.seconds_per_run = 0.002;
    options.dram_buffer_bytes = std::size_t(64) << 20;
    std::vector<std::string> lines;
    options.progress = [&](const std::string& line) { lines.push_back(line); };
    const HardwareModel fresh = load_or_calibrate(options, path.string());
    EXPECT_NE(fresh.provenance.method.find(calibration_format), std::string::npos);
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.front().find("predates"), std::string::npos) << lines.front();
    // The fresh model replaced the old one and is reused as it is.
    lines.clear();
    const HardwareModel again = load_or_calibrate(options, path.string());
    EXPECT_TRUE(lines.empty());
    EXPECT_EQ(to_yaml(again), to_yaml(load_hardware_model(path.string())));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace hb
