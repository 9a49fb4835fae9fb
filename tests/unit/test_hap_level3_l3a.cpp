// The worked contraction example of docs/hap.md ("Level 3: contractions"), recomputed from
// the operators' own work models and the shipped accelerator models, and the CPU side: a
// calibrated model's per-dtype matrix rates and the AMX overlap with vector work.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "hap/cpu_matrix_peaks.hpp"
#include "hap/cpu_op_costs.hpp"
#include "hap/hardware_model.hpp"
#include "hap/solver.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/proto.hpp"

namespace hb {
namespace {

Problem quant_problem(std::int64_t m, std::int64_t k, std::int64_t n) {
    static const Proto proto =
        load_proto(std::string(HB_SOURCE_DIR) + "/suite/level3/quant_matmul/proto.yaml", "quant_matmul", 3);
    CaseSpec c;
    c.op = "quant_matmul";
    c.case_id = 1;
    c.attrs = {{"output_dtype", AttrValue::of_string("float16")}};
    auto input = [](bool present, DType dtype, Shape shape) {
        CaseInput in;
        in.present = present;
        in.dtype = dtype;
        if (present) in.shapes = {std::move(shape)};
        return in;
    };
    c.inputs = {input(true, DType::i8, {m, k}), input(true, DType::i8, {k, n}), input(true, DType::f32, {n}),
                input(false, DType::f32, {}), input(false, DType::f32, {}), input(false, DType::f32, {})};
    return resolve_problem(proto, *find_operator("quant_matmul"), c);
}

// quant_matmul int8 [4096, 4096] x [4096, 4096], per-channel fp32 scale, fp16 out, on the
// 910B2: 6.87e10 MACs on the int8 cube (16 x 32 x 16 MACs a cycle x 2 x 1.8 GHz = 29.49 T
// flop/s per AI core), 65,536 16x16 output tiles over 24 cores (2731 on the busiest):
// 4096^3 x 2 / 29.4912e12 x 2731 / 65536 = 194.20 us. MTE2 reads x1, x2 and the scale
// (33,570,816 B) at 80 GB/s per core: 17.49 us; FixPipe writes the fp16 result (33,554,432 B):
// 17.48 us; the vector epilogue (int32 -> fp32, x scale, -> fp16: 3 slots per output) 9.11
// us. Cube-bound. The H200's int8 tensor cores (1978.9 TOPS; 497 of the 65,536 tiles on the
// busiest of 132 SMs) take 69.52 us, HBM 13.98 us.
TEST(HapLevel3L3a, QuantMatmulIsCubeBoundOnThe910B2AndTheH200) {
    const WorkModel w = find_operator("quant_matmul")->work(quant_problem(4096, 4096, 4096));
    const HapResult ascend = solve(w, load_hardware_model("ascend910b2"));
    const double macs = 4096.0 * 4096.0 * 4096.0, share = 2731.0 / 65536.0;
    EXPECT_NEAR(ascend.unit_us.at("cube"), macs * 2 / 29.4912e12 * share * 1e6, 1e-6);
    EXPECT_NEAR(ascend.unit_us.at("cube"), 194.20, 0.01);
    EXPECT_NEAR(ascend.unit_us.at("mte2"), 33570816.0 / 80e9 * share * 1e6, 1e-6);
    EXPECT_NEAR(ascend.unit_us.at("fixpipe"), 33554432.0 / 80e9 * share * 1e6, 1e-6);
    EXPECT_NEAR(ascend.unit_us.at("vector"), 3 * 16777216.0 * (1366.0 / 65536.0) / 115.2e9 * 1e6, 1e-6);
    EXPECT_EQ(ascend.bottleneck_group, "Cube");
    EXPECT_NEAR(ascend.t_hw_us, ascend.unit_us.at("cube"), 1e-9);

    const HapResult h200 = solve(w, load_hardware_model("h200"));
    // 65,536 tiles over 132 SMs: 497 on the busiest.
    EXPECT_NEAR(h200.unit_us.at("tensor_core"), macs * 2 / 1.49917e13 * (497.0 / 65536) * 1e6, 0.01);
    EXPECT_NEAR(h200.unit_us.at("hbm"), (33570816.0 + 33554432.0) / 4.8e12 * 1e6, 1e-3);
    EXPECT_EQ(h200.bottleneck_group, "Cube");
}

// The same operator decoding one token (m = 1): 16.8 MB of int8 weights for 1.68e7 MACs.
// On the 910B2 the cube pads m to its 16-row fractal; the vector path (vector_ok below 16
// rows) is searched too. Either way MTE2's weight read binds: 16,797,696 B (x1, x2, scale),
// 256 output tiles of 16 columns over 24 cores (11 on the busiest) at 80 GB/s: 9.02 us.
TEST(HapLevel3L3a, DecodingOneTokenIsBoundByTheWeightRead) {
    const WorkModel w = find_operator("quant_matmul")->work(quant_problem(1, 4096, 4096));
    EXPECT_TRUE(w.contractions.at(0).vector_ok);
    const HapResult ascend = solve(w, load_hardware_model("ascend910b2"));
    EXPECT_EQ(ascend.bottleneck_group, "MTE");
    EXPECT_NEAR(ascend.t_hw_us, (4096.0 + 4096.0 * 4096 + 4096 * 4) * (11.0 / 256) / 80e9 * 1e6, 1e-6);
}

// On a calibrated CPU model the contraction's dtype picks its matrix rate: int8 at the AMX
// rate, which runs beside the FMA pipes, so the fp32 epilogue overlaps instead of adding.
TEST(HapLevel3L3a, ACpuModelChargesInt8MacsAtTheAmxRateBesideTheVectorWork) {
    const CpuOpCosts costs = load_cpu_op_costs(default_cpu_op_costs_path());
    MatrixPeakInputs in;
    in.fma_f32 = {100e9, "fp32"};
    in.fma_f64 = {50e9, "fp64"};
    in.fma_isa = "avx512f";
    in.instructions[MatrixInstruction::amx_int8] = {1000e9, "amx int8"};  // MAC/s per core
    const CalibratedMatrixUnit matrix = cpu_matrix_unit(in, costs);
    HardwareModel model = load_hardware_model("cpu-example");
    for (auto& u : model.units) {
        if (u.name == "matrix") u = matrix.unit;
        if (u.name == "vector") u.shares_with.clear();
    }
    validate_hardware_model(model);
    const WorkModel w = find_operator("quant_matmul")->work(quant_problem(512, 1024, 1024));
    const HapResult r = solve(w, model);
    // 5.37e8 MACs at 1e12 MAC/s per core over 2 cores.
    EXPECT_NEAR(r.unit_us.at("matrix"), 512.0 * 1024 * 1024 / 1e12 / 2 * 1e6, 1e-6);
    EXPECT_LT(r.t_hw_us, r.unit_us.at("matrix") + r.unit_us.at("vector"));  // overlapped, not added
    EXPECT_EQ(r.t_hw_us, std::max({r.unit_us.at("matrix"), r.unit_us.at("vector"), r.unit_us.at("dram")}));
}

}  // namespace
}  // namespace hb
