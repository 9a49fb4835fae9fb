// The worked attention example of docs/hap.md ("Level 4: attention"): gqa, float16, causal,
// query [2, 128, 32, 128], key and value [2, 128, 8, 128] (the reference's gqa case 1),
// recomputed from gqa's work model and the shipped hardware models under both conventions.
// If the work model, a model file or the solver changes, the document must change with it.
#include <gtest/gtest.h>

#include <cmath>

#include "hap/convention.hpp"
#include "hap/hardware_model.hpp"
#include "hap/solver.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/proto.hpp"

namespace hb {
namespace {

Problem gqa_case_1() {
    static const Proto proto = load_proto(std::string(HB_SOURCE_DIR) + "/suite/level4/gqa/proto.yaml", "gqa", 4);
    CaseSpec c;
    c.op = "gqa";
    c.case_id = 1;
    c.attrs = {{"is_causal", AttrValue::of_bool(true)}};
    for (const Shape& s : {Shape{2, 128, 32, 128}, Shape{2, 128, 8, 128}, Shape{2, 128, 8, 128}}) {
        CaseInput in;
        in.shapes = {s};
        in.dtype = DType::f16;
        c.inputs.push_back(in);
    }
    return resolve_problem(proto, *find_operator("gqa"), c);
}

// 528,384 allowed pairs (8,256 per head, 64 heads); 16 blocks of 512 rows, 64 keys each.
constexpr double allowed = 64 * 8256.0;
constexpr double macs_each = 16 * 512.0 * 64 * 128;  // QK and PV alike
constexpr double inputs_bytes = (2 * 128 * 32 * 128 + 2 * 2 * 128 * 8 * 128) * 2.0;
constexpr double y_bytes = 2 * 128 * 32 * 128 * 2.0;

TEST(HapLevel4L4a, GqaWorkModel) {
    const Problem p = gqa_case_1();
    const WorkModel w = find_operator("gqa")->work(p);
    ASSERT_EQ(w.contractions.size(), 2u);
    for (const Contraction& c : w.contractions) {
        EXPECT_EQ(c.batch, 16);
        EXPECT_EQ(c.m, 512);
        EXPECT_EQ(c.batch * static_cast<double>(c.m * c.n * c.k), macs_each);
    }
    EXPECT_EQ(w.bytes_read, inputs_bytes);
    EXPECT_EQ(w.bytes_written, y_bytes);
    EXPECT_EQ(w.parallel_items, 16384);
    EXPECT_EQ(w.cube_vector_bytes, 0);
}

TEST(HapLevel4L4a, GqaOnThe910B2IsBoundByFixPipe) {
    const HardwareModel m = load_hardware_model("ascend910b2");
    const HapResult r = t_hw_under(Convention::hapbench, gqa_case_1(), find_operator("gqa")->work(gqa_case_1()), m);
    const double share = std::ceil(16384.0 / 24) * 24 / 16384;  // the busiest core's items
    const double fixpipe_bytes = 16 * 512 * 64 * 4.0 + 16 * 512 * 128 * 4.0;  // scores and partial sums
    EXPECT_NEAR(r.unit_us.at("fixpipe"), fixpipe_bytes / (24 * 80e9) * share * 1e6, 1e-9);
    EXPECT_NEAR(r.unit_us.at("fixpipe"), 3.2784, 1e-4);
    EXPECT_NEAR(r.unit_us.at("mte2"), inputs_bytes / (24 * 80e9) * share * 1e6, 1e-9);
    EXPECT_EQ(r.unit_us.at("mte3"), 0);  // y leaves through FixPipe
    EXPECT_NEAR(r.unit_us.at("cube"), 2 * 2 * macs_each / (24 * 14.7456e12) * 1e6, 1e-3);
    EXPECT_EQ(r.bottleneck_unit, "fixpipe");
    EXPECT_EQ(r.bottleneck_group, "MTE");
    EXPECT_NEAR(r.t_hw_us, 3.2784, 1e-4);
}

TEST(HapLevel4L4a, GqaUnderCannBenchReadsEveryInputAndCountsTheFormula) {
    const HardwareModel m = load_hardware_model("ascend910b2");
    const Problem p = gqa_case_1();
    const HapResult r = t_hw_under(Convention::cann_bench, p, find_operator("gqa")->work(p), m);
    EXPECT_NEAR(r.unit_us.at("mte2"), inputs_bytes / 1.92e12 * 1e6, 1e-9);
    const double masked = 64 * 128.0 * 128 - allowed;
    EXPECT_NEAR(r.unit_us.at("vector"), (allowed * 8 + masked) / 6.0e12 * 1e6, 1e-9);
    EXPECT_NEAR(r.t_hw_us, 1.6384, 1e-4);
    EXPECT_EQ(r.bottleneck_unit, "mte2");
}

TEST(HapLevel4L4a, GqaOnTheH200IsBoundByHbm) {
    const HardwareModel m = load_hardware_model("h200");
    const Problem p = gqa_case_1();
    const HapResult r = t_hw_under(Convention::hapbench, p, find_operator("gqa")->work(p), m);
    EXPECT_NEAR(r.unit_us.at("hbm"), (inputs_bytes + y_bytes) / 4.8e12 * 1e6, 1e-9);
    EXPECT_NEAR(r.t_hw_us, 1.0923, 1e-4);
    EXPECT_EQ(r.bottleneck_group, "Memory");
    EXPECT_LT(r.unit_us.at("tensor_core"), r.unit_us.at("hbm"));
}

}  // namespace
}  // namespace hb
