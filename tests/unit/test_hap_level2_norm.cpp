// Work models of the level-2 normalization operators on the accelerator model, by hand
// (docs/hap.md, "For operator authors"): softmax and group_norm of small half cases.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/proto.hpp"

namespace hb {
namespace {

Problem problem_for(const std::string& op, const std::vector<std::pair<Shape, DType>>& inputs, AttrMap attrs) {
    const Proto proto = load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op + "/proto.yaml", op, 2);
    CaseSpec c;
    c.op = op;
    c.case_id = 1;
    c.attrs = std::move(attrs);
    for (const auto& [shape, dtype] : inputs) {
        CaseInput ci;
        ci.shapes = {shape};
        ci.dtype = dtype;
        c.inputs.push_back(ci);
    }
    return resolve_problem(proto, *find_operator(op), c);
}

double elements(const WorkModel& w, OpClass c, DType t) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c && v.dtype == t) n += v.elements;
    return n;
}

// softmax fp16 [3, 4], dim -1: 3 slices of 4. The max runs in fp16 (exact there): 3 x 3
// compares; the rest in fp32: 12 subtracts, 12 exps, 3 x 3 adds for the sums, 3
// reciprocals, 12 multiplies, 24 casts (in and out). Flat: no row_elements; 3 items.
TEST(HapLevel2Norm, SoftmaxHalfRunsInFp32WithTheMaxInFp16) {
    const WorkModel w =
        find_operator("softmax")->work(problem_for("softmax", {{{3, 4}, DType::f16}}, {{"dim", AttrValue::of_int(-1)}}));
    EXPECT_EQ(w.bytes_read, 24);
    EXPECT_EQ(w.bytes_written, 24);
    EXPECT_EQ(elements(w, OpClass::cmp, DType::f16), 9);
    EXPECT_EQ(elements(w, OpClass::add, DType::f32), 12 + 9);
    EXPECT_EQ(elements(w, OpClass::exp, DType::f32), 12);
    EXPECT_EQ(elements(w, OpClass::div, DType::f32), 3);
    EXPECT_EQ(elements(w, OpClass::mul, DType::f32), 12);
    EXPECT_EQ(elements(w, OpClass::cast, DType::f32), 24);
    EXPECT_EQ(w.row_elements, 0);
    EXPECT_EQ(w.parallel_items, 3);
}

// group_norm bf16 x [2, 4, 3], 2 groups, gamma and beta [4]: 24 elements, 4 groups of 6,
// 8 (sample, channel) pairs. fp32: 24 adds, 24 + 24 + 16 fmas (sum of squares, normalize,
// per-channel fold), 4 sqrt, 4 div; casts 2 x 24 + 4 + 4. Reads 48 + 8 + 8 bytes, writes 48;
// the groups split over cores, so the 24 elements are the parallel items.
TEST(HapLevel2Norm, GroupNormHalfRunsInFp32AndSplitsGroups) {
    const WorkModel w = find_operator("group_norm")
                            ->work(problem_for("group_norm",
                                               {{{2, 4, 3}, DType::bf16}, {{4}, DType::bf16}, {{4}, DType::bf16}},
                                               {{"num_groups", AttrValue::of_int(2)}}));
    EXPECT_EQ(w.bytes_read, 64);
    EXPECT_EQ(w.bytes_written, 48);
    EXPECT_EQ(elements(w, OpClass::add, DType::f32), 24);
    EXPECT_EQ(elements(w, OpClass::fma, DType::f32), 64);
    EXPECT_EQ(elements(w, OpClass::sqrt, DType::f32), 4);
    EXPECT_EQ(elements(w, OpClass::div, DType::f32), 4);
    EXPECT_EQ(elements(w, OpClass::cast, DType::f32), 56);
    EXPECT_EQ(w.parallel_items, 24);
}

}  // namespace
}  // namespace hb
