// The worked examples of docs/hap.md, recomputed from the shipped hardware models. Each
// test states the arithmetic the document shows; if a model file or the solver changes, the
// document must change with it.
#include <gtest/gtest.h>

#include <cmath>

#include "hap/hardware_model.hpp"
#include "hap/solver.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/proto.hpp"

namespace hb {
namespace {

const HardwareModel& ascend() {
    static const HardwareModel m = load_hardware_model("ascend910b2");
    return m;
}

// Ascend 910B2 rates the examples use (hardware/ascend910b2.yaml).
constexpr double ghz = 1.8e9;
constexpr double mte_per_core = 80e9;          // MTE2 reads, MTE3 writes, each per AI core
constexpr double cores = 24;
constexpr double vec_f32_slots = 64 * ghz;     // per vector core, 2 per AI core
constexpr double cube_f16_flops = 16 * 16 * 16 * 2 * ghz;  // per AI core

// Example 1: exp, fp16 [1024, 1024], base=-1, scale=1, shift=0 (the reference's exp case 1,
// published 1.09 us). 2 MiB read by MTE2 and 2 MiB written by MTE3, concurrently, each at
// 24 x 80 GB/s = 1.92 TB/s: 2097152 B / 1.92e12 B/s = 1.092 us. The exp runs natively in
// fp16 (128 lanes): 3 slots x 1048576 / (48 x 230.4e9) = 0.28 us.
TEST(HapExamples, ExpFp16MemoryBound) {
    const double n = 1024.0 * 1024.0;
    WorkModel w;
    w.bytes_read = 2 * n;
    w.bytes_written = 2 * n;
    w.add_vector(OpClass::exp, DType::f16, n);
    w.add_vector_io(DType::f16, 2 * n);
    w.parallel_items = n;
    const HapResult r = solve(w, ascend());
    // The busiest of 24 cores gets ceil(n / 24) = 43691 of the n elements.
    const double share = std::ceil(n / cores) / n;
    EXPECT_NEAR(r.unit_us.at("mte2"), 2 * n / mte_per_core * share * 1e6, 1e-9);
    EXPECT_NEAR(r.unit_us.at("mte2"), 1.0923, 1e-3);
    EXPECT_NEAR(r.unit_us.at("mte3"), r.unit_us.at("mte2"), 1e-12);
    const double vec_f16 = 128 * ghz;
    EXPECT_NEAR(r.unit_us.at("vector"), 3 * std::ceil(n / 48) / vec_f16 * 1e6, 1e-9);
    EXPECT_NEAR(r.t_hw_us, 1.0923, 1e-3);
    EXPECT_EQ(r.bottleneck_group, "MTE");
    EXPECT_EQ(r.bottleneck_unit, "mte2");
    EXPECT_EQ(r.choice.cores_used, 24);
    EXPECT_FALSE(r.floored);
}

// Example 2: softmax over a non-aligned last dimension, fp16 [1009, 1021], dim=-1 (the
// reference's softmax case 10, published 1.55 us). The kernel keeps each row whole in UB
// and computes in fp32: per element cast in, max, subtract, exp (3), sum, multiply by the
// reciprocal, cast out = 9 slots. A 1021-element fp32 row occupies 4084 bytes, padded to
// 4096 (32-byte blocks): x 1024/1021. Vector: 1009 rows over 48 vector cores -> 22 rows on
// the busiest; 22 x (1021 x 9 + 3) x (1024/1021) / 115.2e9 = 1.761 us. MTE2: 2 x 1021 x 1009 bytes,
// 1009 rows over 24 cores -> 43 rows: 43 x 2042 / 80e9 = 1.10 us.
TEST(HapExamples, SoftmaxNonAlignedRows) {
    const double rows = 1009, row = 1021, n = rows * row;
    WorkModel w;
    w.bytes_read = 2 * n;
    w.bytes_written = 2 * n;
    w.add_vector(OpClass::cast, DType::f32, 2 * n);
    w.add_vector(OpClass::cmp, DType::f32, n);
    w.add_vector(OpClass::add, DType::f32, n);  // x - max
    w.add_vector(OpClass::exp, DType::f32, n);
    w.add_vector(OpClass::add, DType::f32, n);  // sum
    w.add_vector(OpClass::mul, DType::f32, n);  // * 1/sum
    w.add_vector(OpClass::div, DType::f32, rows);
    w.parallel_items = rows;
    w.row_elements = static_cast<std::int64_t>(row);
    w.innermost = static_cast<std::int64_t>(row);
    const HapResult r = solve(w, ascend());
    const double pad = 1024.0 / 1021.0;
    const double busiest_rows = std::ceil(rows / 48);  // 22
    // The per-row div is padded with the rest (the solver pads every vector item of a
    // row-constrained case).
    const double expect_vec = (busiest_rows * row * 9 * pad + busiest_rows * 3 * pad) / vec_f32_slots * 1e6;
    EXPECT_NEAR(r.unit_us.at("vector"), expect_vec, 1e-9);
    EXPECT_NEAR(r.unit_us.at("vector"), 1.7606, 1e-3);
    EXPECT_NEAR(r.unit_us.at("mte2"), std::ceil(rows / cores) * 2 * row / mte_per_core * 1e6, 1e-9);
    EXPECT_EQ(r.bottleneck_group, "Vector");
    EXPECT_NEAR(r.t_hw_us, expect_vec, 1e-9);
    // Without the row constraint the same work is 2.3% cheaper: flat processing needs no
    // padding, and 1030189 elements spread over 48 cores more evenly than 1009 rows.
    WorkModel flat = w;
    flat.row_elements = 0;
    flat.parallel_items = n;
    const double flat_busiest = std::ceil(n / 48);
    EXPECT_NEAR(solve(flat, ascend()).t_hw_us, flat_busiest * (9 + 3 * rows / n) / vec_f32_slots * 1e6, 1e-9);
    EXPECT_NEAR(solve(flat, ascend()).t_hw_us, 1.6773, 1e-3);
}

// Example 3: a matmul where Cube binds: fp16 [4096, 4096] x [4096, 4096] -> fp16. MACs:
// 4096^3 = 6.87e10, x 2 flops / (24 x 14.7456e12) = 388.4 us. MTE2 reads A and B once
// (64 MiB / 1.92 TB/s = 35 us); FixPipe writes C (32 MiB / 1.92 TB/s = 17.5 us); MTE1 with
// the 128 x 256 L0C tile (128 x 256 x 4 B = 128 KiB) re-sends A 16 times and B 32 times:
// 16 x 32 MiB / 921.6 GB/s + 32 x 32 MiB / 460.8 GB/s per core, / 24 = 121.4 us.
TEST(HapExamples, MatmulCubeBound) {
    const double s = 4096;
    WorkModel w;
    w.bytes_read = 2 * s * s * 2;
    w.bytes_written = s * s * 2;
    Contraction c;
    c.dtype = DType::f16;
    c.out_dtype = DType::f16;
    c.m = c.n = c.k = 4096;
    w.contractions.push_back(c);
    w.parallel_items = (s / 16) * (s / 16);  // 16x16 output fractals
    const HapResult r = solve(w, ascend());
    const double share = std::ceil(w.parallel_items / cores) / w.parallel_items;
    EXPECT_NEAR(r.unit_us.at("cube"), s * s * s * 2 / cube_f16_flops * share * 1e6, 1e-6);
    EXPECT_NEAR(r.unit_us.at("cube"), 388.4, 0.1);
    EXPECT_EQ(r.bottleneck_group, "Cube");
    EXPECT_EQ(r.bottleneck_unit, "cube");
    EXPECT_EQ(r.choice.path, "cube");
    // C leaves through FixPipe, not MTE3.
    EXPECT_NEAR(r.unit_us.at("fixpipe"), s * s * 2 / mte_per_core * share * 1e6, 1e-6);
    EXPECT_DOUBLE_EQ(r.unit_us.at("mte3"), 0);
    // The reported tile is the largest that fits L0C (ties go to the fewest re-reads).
    ImplementationChoice tile = r.choice;
    EXPECT_EQ(tile.tile_m * tile.tile_n, 32768);
    const HapResult fixed = solve_for_choice(w, ascend(), {24, "cube", 128, 256, true});
    const double a = s * s * 2 * (s / 256) / (512 * ghz), b = s * s * 2 * (s / 128) / (256 * ghz);
    EXPECT_NEAR(fixed.unit_us.at("mte1"), (a + b) * share * 1e6, 1e-6);
    EXPECT_NEAR(fixed.unit_us.at("mte1"), 121.4, 0.1);
    // A small tile re-reads more: 16 x 16 makes MTE1 the bottleneck.
    const HapResult tiny = solve_for_choice(w, ascend(), {24, "cube", 16, 16, true});
    EXPECT_EQ(tiny.bottleneck_unit, "mte1");
    EXPECT_GT(tiny.unfloored_us, r.unfloored_us);
}

// Cube versus vector: a batch of 4096 skinny products [1, 4] x [4, 8192] pads m and k to
// the 16 x 16 fractal on the cube (64x the MACs); on the vector unit each MAC is one fma
// slot at 128 fp16 lanes. The cube path's MACs take 48.6 us, the vector path's 12.2 us;
// the solver searches both and keeps the faster.
TEST(HapExamples, CubeOrVectorPathIsSearched) {
    WorkModel w;
    Contraction c;
    c.dtype = DType::f16;
    c.out_dtype = DType::f16;
    c.m = 1;
    c.n = 8192;
    c.k = 4;  // k pads to 16 on the cube: 64x the MACs
    c.batch = 4096;
    c.vector_ok = true;
    w.contractions.push_back(c);
    w.bytes_read = c.batch * (c.m * c.k + c.k * c.n) * 2;
    w.bytes_written = c.batch * c.m * c.n * 2;
    w.parallel_items = c.batch;
    const HapResult r = solve(w, ascend());
    const HapResult cube = solve_for_choice(w, ascend(), {24, "cube", 16, 8192, true});
    const HapResult vec = solve_for_choice(w, ascend(), {24, "vector", 0, 0, true});
    // 4096 batch items: the busiest of 24 AI cores gets 171, of 48 vector cores 86.
    EXPECT_NEAR(cube.unit_us.at("cube"), 171 * 16.0 * 8192 * 16 * 2 / cube_f16_flops * 1e6, 1e-6);
    EXPECT_NEAR(vec.unit_us.at("vector"), 86 * 1.0 * 8192 * 4 / (128 * ghz) * 1e6, 1e-6);
    EXPECT_GT(cube.unit_us.at("cube"), vec.unit_us.at("vector"));
    EXPECT_LE(r.unfloored_us, std::min(cube.unfloored_us, vec.unfloored_us) + 1e-12);
}

// Example 4: a small grid cannot fill the cores. foreach_norm-like reduction of 5 rows of
// 1M fp32 each, where each row must be reduced by one core (parallel_items = 5): 5 cores
// read 20 MiB at 5 x 80 GB/s = 52.4 us, against 10.9 us if all 24 cores could share it.
TEST(HapExamples, SmallGridCannotFillTheCores) {
    const double rows = 5, row = 1 << 20;
    WorkModel w;
    w.bytes_read = rows * row * 4;
    w.bytes_written = rows * 4;
    w.add_vector(OpClass::fma, DType::f32, rows * row);
    w.parallel_items = rows;
    const HapResult r = solve(w, ascend());
    EXPECT_EQ(r.choice.cores_used, 5);
    EXPECT_NEAR(r.unit_us.at("mte2"), row * 4 / mte_per_core * 1e6, 1e-6);
    EXPECT_NEAR(r.t_hw_us, 52.43, 0.01);
    WorkModel spread = w;
    spread.parallel_items = rows * row;
    EXPECT_NEAR(solve(spread, ascend()).t_hw_us, rows * row * 4 / (cores * mte_per_core) * 1e6, 0.01);
}

// The floor: a tiny case is charged the 1 us launch floor and says so.
TEST(HapExamples, SubMicrosecondCaseFloorsToOneMicrosecond) {
    WorkModel w;
    w.bytes_read = 4096;
    w.bytes_written = 4096;
    w.add_vector(OpClass::add, DType::f32, 1024);
    w.parallel_items = 1024;
    const HapResult r = solve(w, ascend());
    EXPECT_DOUBLE_EQ(r.t_hw_us, 1.0);
    EXPECT_TRUE(r.floored);
}

// bf16 has no vector arithmetic on the 910B: each element loaded or stored costs a cast.
// sigmoid bf16 [4096, 4096] (reference case 3, published 27.96 us): exp 3 + add 1 + div 3 +
// 2 casts = 9 slots x 16777216 / (48 x 115.2e9) = 27.31 us (-2.3%); memory 17.48 us.
TEST(HapExamples, Bf16ConvertsThroughFp32) {
    const double n = 4096.0 * 4096.0;
    WorkModel w;
    w.bytes_read = 2 * n;
    w.bytes_written = 2 * n;
    w.add_vector(OpClass::exp, DType::bf16, n);
    w.add_vector(OpClass::add, DType::bf16, n);
    w.add_vector(OpClass::div, DType::bf16, n);
    w.add_vector_io(DType::bf16, 2 * n);
    w.parallel_items = n;
    const HapResult r = solve(w, ascend());
    EXPECT_NEAR(r.unit_us.at("vector"), 9 * std::ceil(n / 48) / vec_f32_slots * 1e6, 1e-6);
    EXPECT_NEAR(r.t_hw_us, 27.31, 0.01);
    EXPECT_EQ(r.bottleneck_group, "Vector");
}

// Fused versus unfused across cube and vector cores: on the 910B both pay the crossing
// through global memory; on an H100 (on-chip exchange) only the unfused pair does.
TEST(HapExamples, CubeVectorCrossingGoesThroughGlobalMemoryOn910B) {
    WorkModel w;
    Contraction c;
    c.dtype = DType::f16;
    c.out_dtype = DType::f16;
    c.m = c.n = 2048;
    c.k = 128;
    w.contractions.push_back(c);
    w.bytes_read = 2 * 2048.0 * 128 * 2;
    w.bytes_written = 2048.0 * 2048 * 2;
    w.cube_vector_bytes = 2048.0 * 2048 * 4;  // fp32 scores to the vector cores
    w.add_vector(OpClass::exp, DType::f32, 2048.0 * 2048);
    w.parallel_items = 2048;
    const HapResult a = solve(w, ascend());
    EXPECT_TRUE(a.choice.fused);
    const HapResult none = [&] {
        WorkModel x = w;
        x.cube_vector_bytes = 0;
        return solve(x, ascend());
    }();
    EXPECT_GT(a.unit_us.at("mte2"), none.unit_us.at("mte2"));
    const HardwareModel h100 = load_hardware_model("h100-sxm");
    const HapResult g = solve(w, h100);
    EXPECT_TRUE(g.choice.fused);
    WorkModel x = w;
    x.cube_vector_bytes = 0;
    EXPECT_DOUBLE_EQ(g.unit_us.at("hbm"), solve(x, h100).unit_us.at("hbm"));
}

// Example 5: a recurrence whose steps bind (docs/hap.md, "Dependent chains"). lstm fp16,
// S = 339, B = 31, I = 32, H = 48, one layer, one direction, with biases, on the H200. The SFU
// binds: per hidden unit and step 3 exp (the sigmoids' e^-x), 3 div (their reciprocals) and
// 2 tanh = 8 special-function results, at 16 lanes x 1.98 GHz = 3.168e10 per SM. Over the whole
// case 339 x 31 x 48 = 504,432 units spread over 132 SMs, 3822 on the busiest: 3822 x 8 /
// 3.168e10 = 0.9652 us. But a step can only spread its own 31 x 48 = 1488 units, 12 on the
// busiest SM, and the 339 steps run one after another: 339 x 12 x 8 / 3.168e10 = 1.0273 us,
// which is T_HW (above the 1 us floor), bottleneck sfu.
TEST(HapExamples, RecurrenceChainBindsOnTheH200) {
    const Operator* op = find_operator("lstm");
    ASSERT_NE(op, nullptr);
    static const Proto proto = load_proto(std::string(HB_SOURCE_DIR) + "/suite/level4/lstm/proto.yaml", "lstm", 4);
    CaseSpec c;
    c.op = "lstm";
    c.case_id = 1;
    c.attrs = {{"inputSize", AttrValue::of_int(32)}, {"hiddenSize", AttrValue::of_int(48)}};
    auto input = [](std::vector<Shape> shapes, bool list, bool present = true) {
        CaseInput in;
        in.shapes = std::move(shapes);
        in.dtype = DType::f16;
        in.is_list = list;
        in.present = present;
        return in;
    };
    c.inputs = {input({{339, 31, 32}}, false), input({{192, 32}}, true), input({{192, 48}}, true), input({{192}}, true),
                input({{192}}, true),          input({}, true, false),     input({}, false, false),   input({}, false, false)};
    const Problem p = resolve_problem(proto, *op, c);
    const WorkModel w = op->work(p);
    EXPECT_DOUBLE_EQ(w.chain.steps, 339);
    EXPECT_DOUBLE_EQ(w.chain.items_per_step, 31 * 48);
    const HardwareModel h200 = load_hardware_model("h200");
    const HapResult r = solve(w, h200);
    const double sfu_per_sm = 16 * 1.98e9;
    EXPECT_NEAR(r.unit_us.at("sfu"), 3822 * 8 / sfu_per_sm * 1e6, 1e-9);
    EXPECT_NEAR(r.unit_us.at("sfu"), 0.9652, 1e-4);
    EXPECT_NEAR(r.chain_us, 339 * 12 * 8 / sfu_per_sm * 1e6, 1e-9);
    EXPECT_NEAR(r.chain_us, 1.0273, 1e-4);
    EXPECT_TRUE(r.chain_bound);
    EXPECT_DOUBLE_EQ(r.t_hw_us, r.chain_us);
    EXPECT_EQ(r.bottleneck_unit, "sfu");
    EXPECT_FALSE(r.floored);
}

// Every shipped model loads and solves the same work (issue 3: NVIDIA and CPU parity).
TEST(HapExamples, EveryShippedModelSolvesTheSameCase) {
    const double n = 1 << 24;
    WorkModel w;
    w.bytes_read = 2 * n;
    w.bytes_written = 2 * n;
    w.add_vector(OpClass::exp, DType::bf16, n);
    w.add_vector(OpClass::div, DType::bf16, n);
    w.add_vector_io(DType::bf16, 2 * n);
    Contraction c;
    c.dtype = DType::bf16;
    c.m = c.n = c.k = 256;
    w.contractions.push_back(c);
    w.parallel_items = n;
    for (const auto& name : known_hardware_models()) {
        SCOPED_TRACE(name);
        const HardwareModel m = load_hardware_model(name);
        const HapResult r = solve(w, m);
        EXPECT_GT(r.t_hw_us, 0);
        EXPECT_FALSE(r.bottleneck_group.empty());
    }
}

}  // namespace
}  // namespace hb
