// Level-2 operators unsorted_segment_sum, apply_rotary_pos_emb, grid_sampler_3d and
// resize_bilinear: goldens against hand-computed values on every attribute path, output
// inference and its errors, work models, and case sampling through the generator.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/case_rules.hpp"
#include "spec/case_sampler.hpp"
#include "suite/inputs.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

// hapbench's own interface files (suite/level2/<op>/proto.yaml).
const Proto& proto_for(const std::string& op) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end())
        it = protos.emplace(op, load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op + "/proto.yaml", op, 2))
                 .first;
    return it->second;
}

const Operator& op_named(const std::string& name) {
    const Operator* op = find_operator(name);
    if (!op) throw Error("operator " + name + " is not registered");
    return *op;
}

struct In {
    DType dtype;
    Shape shape;
    std::vector<double> values = {};  // empty for shape-only checks
};

CaseSpec case_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs) {
    CaseSpec c;
    c.op = op;
    c.case_id = 1;
    c.attrs = std::move(attrs);
    for (const auto& in : inputs) {
        CaseInput ci;
        ci.shapes = {in.shape};
        ci.dtype = in.dtype;
        c.inputs.push_back(ci);
    }
    return c;
}

Problem problem_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {}) {
    return resolve_problem(proto_for(op), op_named(op), case_for(op, inputs, std::move(attrs)));
}

// Every output of the golden (or the same-precision reference).
std::vector<std::vector<double>> evaluate_all(const std::string& op_name, const std::vector<In>& inputs,
                                              AttrMap attrs = {}, bool same_precision = false) {
    const Operator& op = op_named(op_name);
    const Problem problem = problem_for(op_name, inputs, std::move(attrs));
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = problem.inputs[k].name;
        in[k].tensors.push_back({TensorSpec{inputs[k].dtype, inputs[k].shape}, inputs[k].values});
    }
    ValueArgs<double> out = values_for_specs<double>(problem.outputs);
    if (same_precision) op.same_precision(problem, in, out);
    else op.golden(problem, in, out);
    std::vector<std::vector<double>> result;
    for (const auto& o : out) result.push_back(o.one().v);
    return result;
}

std::vector<double> evaluate(const std::string& op_name, const std::vector<In>& inputs, AttrMap attrs = {},
                             bool same_precision = false) {
    return evaluate_all(op_name, inputs, std::move(attrs), same_precision).at(0);
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected, double rel = 1e-12) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        } else if (std::isinf(expected[i])) {
            EXPECT_EQ(got[i], expected[i]) << "element " << i;
        } else {
            EXPECT_NEAR(got[i], expected[i], rel * std::max(1.0, std::fabs(expected[i]))) << "element " << i;
        }
    }
}

double vector_elements(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

// Draws `count` cases through the generator; each must resolve, and the batch must meet
// the case rules.
std::vector<CaseSpec> generated_cases(const std::string& name, int count, std::uint64_t seed = 20260101) {
    const Proto& proto = proto_for(name);
    const auto cases = generate_cases(op_named(name), proto, profile_by_name("cpu"), seed, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(proto, op_named(name), c)) << name << " " << c.case_id;
    const auto problems = check_case_rules(cases, proto, op_named(name), profile_by_name("cpu"));
    EXPECT_TRUE(problems.empty()) << problems.front();
    return cases;
}

AttrValue i(std::int64_t v) { return AttrValue::of_int(v); }
AttrValue s(const std::string& v) { return AttrValue::of_string(v); }
AttrValue b(bool v) { return AttrValue::of_bool(v); }

// ---------------------------------------------------------------- unsorted_segment_sum

TEST(OpsLevel2Spatial, SegmentSumAddsRowsAndLeavesEmptySegmentsZero) {
    // data [4, 2], ids {2, 0, 2, 4}, 5 segments: segments 1 and 3 are empty.
    const std::vector<double> data = {1, 2, 3, 4, 5, 6, 7, 8};
    for (DType ids_dtype : {DType::i32, DType::i64}) {
        const auto y = evaluate("unsorted_segment_sum", {{DType::f32, {4, 2}, data}, {ids_dtype, {4}, {2, 0, 2, 4}}},
                                {{"num_segments", i(5)}});
        expect_values(y, {3, 4, 0, 0, 6, 8, 0, 0, 7, 8});
    }
    // 1-D data: one scalar per row; one segment sums everything.
    expect_values(evaluate("unsorted_segment_sum", {{DType::f16, {3}, {1.5, -2, 4}}, {DType::i32, {3}, {0, 0, 0}}},
                           {{"num_segments", i(1)}}),
                  {3.5});
}

TEST(OpsLevel2Spatial, SegmentSumPropagatesNaNAndOpposingInfinities) {
    const auto y = evaluate("unsorted_segment_sum",
                            {{DType::f32, {4}, {NAN, 1, INFINITY, -INFINITY}}, {DType::i32, {4}, {0, 1, 2, 2}}},
                            {{"num_segments", i(3)}});
    expect_values(y, {NAN, 1, NAN});
}

TEST(OpsLevel2Spatial, SegmentSumIntegersWrapInTheirWidth) {
    const double big = 2147483647;  // int32 max: max + 1 wraps to min
    expect_values(evaluate("unsorted_segment_sum", {{DType::i32, {2}, {big, 1}}, {DType::i32, {2}, {0, 0}}},
                           {{"num_segments", i(1)}}),
                  {-2147483648.0});
    // int64 sums stay exact where int32 would wrap; the same-precision path is the golden.
    expect_values(evaluate("unsorted_segment_sum", {{DType::i64, {2}, {big, 1}}, {DType::i64, {2}, {0, 0}}},
                           {{"num_segments", i(1)}}, true),
                  {2147483648.0});
    expect_values(evaluate("unsorted_segment_sum", {{DType::i32, {3}, {16777217, 1, 5}}, {DType::i32, {3}, {0, 0, 1}}},
                           {{"num_segments", i(2)}}, true),
                  {16777218, 5});
}

TEST(OpsLevel2Spatial, SegmentSumSamePrecisionRoundsOnceToHalf) {
    // 2048 + 1 + 1 in fp32 is 2050 (an fp16 accumulator would stay at 2048).
    const auto y = evaluate("unsorted_segment_sum", {{DType::f16, {3}, {2048, 1, 1}}, {DType::i32, {3}, {0, 0, 0}}},
                            {{"num_segments", i(1)}}, true);
    EXPECT_EQ(y[0], 2050);
}

TEST(OpsLevel2Spatial, SegmentSumOutputShapeAndErrors) {
    const Problem p = problem_for("unsorted_segment_sum", {{DType::bf16, {6, 3, 5}}, {DType::i64, {6}}},
                                  {{"num_segments", i(4)}});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{4, 3, 5}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::bf16);
    EXPECT_THROW(problem_for("unsorted_segment_sum", {{DType::f32, {6, 3}}, {DType::i32, {5}}}, {{"num_segments", i(4)}}),
                 Error);
    EXPECT_THROW(problem_for("unsorted_segment_sum", {{DType::f32, {6, 3}}, {DType::i32, {6, 1}}},
                             {{"num_segments", i(4)}}),
                 Error);
    EXPECT_THROW(problem_for("unsorted_segment_sum", {{DType::f32, {6}}, {DType::i32, {6}}}, {{"num_segments", i(0)}}),
                 Error);
    EXPECT_THROW(problem_for("unsorted_segment_sum", {{DType::f32, {}}, {DType::i32, {1}}}, {{"num_segments", i(1)}}),
                 Error);
    EXPECT_THROW(problem_for("unsorted_segment_sum", {{DType::f32, {6}}, {DType::f32, {6}}}, {{"num_segments", i(2)}}),
                 Error);
    // num_segments is required.
    EXPECT_THROW(problem_for("unsorted_segment_sum", {{DType::f32, {6}}, {DType::i32, {6}}}), Error);
}

TEST(OpsLevel2Spatial, SegmentSumWorkModel) {
    const Problem p = problem_for("unsorted_segment_sum", {{DType::f16, {10, 20}}, {DType::i64, {10}}},
                                  {{"num_segments", i(3)}});
    const WorkModel w = op_named("unsorted_segment_sum").work(p);
    EXPECT_EQ(w.bytes_read, 200 * 2 + 10 * 8);
    EXPECT_EQ(w.bytes_written, 3 * 20 * 2);
    EXPECT_EQ(vector_elements(w, OpClass::add), 200);
    EXPECT_EQ(w.innermost, 20);
}

TEST(OpsLevel2Spatial, SegmentSumFixInputsKeepsIdsInRangeAndLeavesSegmentsEmpty) {
    const Problem p = problem_for("unsorted_segment_sum", {{DType::f32, {4000, 2}}, {DType::i32, {4000}}},
                                  {{"num_segments", i(16)}});
    const auto inputs = generate_inputs(p, op_named("unsorted_segment_sum"), 0);
    std::set<std::int64_t> seen;
    for (std::int64_t j = 0; j < 4000; ++j) {
        const auto id = static_cast<std::int64_t>(inputs.at(1).tensors.at(0).get(static_cast<std::size_t>(j)));
        ASSERT_GE(id, 0);
        ASSERT_LT(id, 16);
        seen.insert(id);
    }
    EXPECT_EQ(seen.size(), 14u);  // the last eighth (2 segments) stays empty
}

TEST(OpsLevel2Spatial, SegmentSumCasesCoverIdDtypesAndSegmentCounts) {
    std::set<DType> ids_dtypes, data_dtypes;
    bool one = false, sparse = false;
    for (const auto& c : generated_cases("unsorted_segment_sum", 20)) {
        ids_dtypes.insert(c.inputs.at(1).dtype);
        data_dtypes.insert(c.inputs.at(0).dtype);
        const auto n = c.inputs.at(0).shapes.at(0).at(0);
        EXPECT_EQ(c.inputs.at(1).shapes.at(0), (Shape{n}));
        const auto segments = c.attrs.at("num_segments").i;
        one = one || segments == 1;
        sparse = sparse || segments > n;
    }
    EXPECT_EQ(ids_dtypes.size(), 2u);
    EXPECT_EQ(data_dtypes.size(), 5u);
    EXPECT_TRUE(one);
    EXPECT_TRUE(sparse);
}


// ---------------------------------------------------------------- apply_rotary_pos_emb

// x = [1, 2, 3, 4] (D = 4), cos = [c0, c1], sin = [s0, s1].
// half: pairs (0, 2) and (1, 3): out = [1c0 - 3s0, 2c1 - 4s1, 3c0 + 1s0, 4c1 + 2s1].
// interleaved: pairs (0, 1) and (2, 3): out = [1c0 - 2s0, 2c0 + 1s0, 3c1 - 4s1, 4c1 + 3s1].
TEST(OpsLevel2Spatial, RopeRotatesHalvesAndInterleavedPairs) {
    const double c0 = 0.5, c1 = -0.25, s0 = 0.75, s1 = 2;
    const std::vector<double> x = {1, 2, 3, 4};
    for (std::int64_t layout : {0, 1}) {
        const std::vector<In> in = {{DType::f32, {1, 1, 1, 4}, x}, {DType::f32, {1, 1, 1, 4}, {-1, 0, 0, 1}},
                                    {DType::f32, {1, 2}, {c0, c1}}, {DType::f32, {1, 2}, {s0, s1}}};
        const auto half = evaluate_all("apply_rotary_pos_emb", in, {{"layout", i(layout)}, {"rotaryMode", s("half")}});
        expect_values(half.at(0), {1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1});
        expect_values(half.at(1), {-1 * c0, 1 * c1 * 0 - 1 * s1, -1 * s0, 1 * c1});
        const auto inter =
            evaluate_all("apply_rotary_pos_emb", in, {{"layout", i(layout)}, {"rotaryMode", s("interleaved")}});
        expect_values(inter.at(0), {1 * c0 - 2 * s0, 2 * c0 + 1 * s0, 3 * c1 - 4 * s1, 4 * c1 + 3 * s1});
        expect_values(inter.at(1), {-1 * c0, -1 * s0, -1 * s1, 1 * c1});
    }
    // The defaults are layout 0 and "half".
    expect_values(evaluate("apply_rotary_pos_emb",
                           {{DType::f32, {1, 1, 1, 4}, x}, {DType::f32, {1, 1, 1, 4}, x},
                            {DType::f32, {1, 2}, {c0, c1}}, {DType::f32, {1, 2}, {s0, s1}}}),
                  {1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1});
}

// Two sequence positions, two heads, D = 2: cos = [1, 0] at s = 0 and [0, 1] at s = 1
// (tables [S, D/2] = [[1], [0]] and [[0], [1]]). Position 0 keeps x, position 1 maps
// (a, b) to (-b, a). Layout 0 orders rows (s, n), layout 1 (n, s).
TEST(OpsLevel2Spatial, RopeFindsTheSequencePositionInBothLayouts) {
    const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<In> base = {{DType::f32, {1, 2, 2, 2}, x}, {DType::f32, {1, 2, 2, 2}, x},
                                  {DType::f32, {2, 1}, {1, 0}}, {DType::f32, {2, 1}, {0, 1}}};
    // layout 0: rows (s0,n0) (s0,n1) (s1,n0) (s1,n1).
    expect_values(evaluate("apply_rotary_pos_emb", base, {{"layout", i(0)}}), {1, 2, 3, 4, -6, 5, -8, 7});
    // layout 1: rows (n0,s0) (n0,s1) (n1,s0) (n1,s1).
    expect_values(evaluate("apply_rotary_pos_emb", base, {{"layout", i(1)}}), {1, 2, -4, 3, 5, 6, -8, 7});
    // Per-batch tables [B, S, D/2]: batch 1 uses its own rows (here the reverse).
    const std::vector<In> batched = {{DType::f32, {2, 2, 1, 2}, x}, {DType::f32, {2, 2, 1, 2}, x},
                                     {DType::f32, {2, 2, 1}, {1, 0, 0, 1}}, {DType::f32, {2, 2, 1}, {0, 1, 1, 0}}};
    expect_values(evaluate("apply_rotary_pos_emb", batched), {1, 2, -4, 3, -6, 5, 7, 8});
}

TEST(OpsLevel2Spatial, RopeKeyMayHaveFewerHeads) {
    const Problem p = problem_for("apply_rotary_pos_emb",
                                  {{DType::bf16, {2, 5, 8, 64}}, {DType::bf16, {2, 5, 2, 64}},
                                   {DType::bf16, {5, 32}}, {DType::bf16, {5, 32}}});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{2, 5, 8, 64}));
    EXPECT_EQ(p.outputs.at(1).tensors.at(0).shape, (Shape{2, 5, 2, 64}));
    EXPECT_EQ(p.outputs.at(1).tensors.at(0).dtype, DType::bf16);
    const WorkModel w = op_named("apply_rotary_pos_emb").work(p);
    EXPECT_EQ(w.bytes_read, (2 * 5 * 8 * 64 + 2 * 5 * 2 * 64 + 2 * 5 * 32) * 2);
    EXPECT_EQ(w.bytes_written, (2 * 5 * 8 * 64 + 2 * 5 * 2 * 64) * 2);
    EXPECT_EQ(vector_elements(w, OpClass::fma), 2 * 5 * 10 * 64);
    EXPECT_EQ(w.innermost, 64);
}

TEST(OpsLevel2Spatial, RopeRejectsBadShapesAndAttributes) {
    auto make = [](Shape q, Shape k, Shape table, AttrMap attrs = {}, DType table_dtype = DType::f32) {
        return problem_for("apply_rotary_pos_emb",
                           {{DType::f32, q}, {DType::f32, k}, {table_dtype, table}, {table_dtype, table}},
                           std::move(attrs));
    };
    EXPECT_NO_THROW(make({2, 5, 3, 8}, {2, 5, 3, 8}, {5, 4}));
    EXPECT_NO_THROW(make({2, 3, 5, 8}, {2, 3, 5, 8}, {2, 5, 4}, {{"layout", i(1)}}));
    EXPECT_THROW(make({2, 5, 3, 7}, {2, 5, 3, 7}, {5, 3}), Error);                       // odd D
    EXPECT_THROW(make({2, 5, 3, 8}, {2, 4, 3, 8}, {5, 4}), Error);                       // key's S differs
    EXPECT_THROW(make({2, 5, 3, 8}, {2, 5, 3, 8}, {5, 8}), Error);                       // table not D/2
    EXPECT_THROW(make({2, 5, 3, 8}, {2, 5, 3, 8}, {5, 4}, {{"layout", i(1)}}), Error);   // S is dim 2 in layout 1
    EXPECT_THROW(make({5, 3, 8}, {5, 3, 8}, {5, 4}), Error);                             // not 4-D
    EXPECT_THROW(make({2, 5, 3, 8}, {2, 5, 3, 8}, {5, 4}, {{"layout", i(2)}}), Error);
    EXPECT_THROW(make({2, 5, 3, 8}, {2, 5, 3, 8}, {5, 4}, {{"rotaryMode", s("quarter")}}), Error);
    EXPECT_THROW(make({2, 5, 3, 8}, {2, 5, 3, 8}, {5, 4}, {}, DType::f16), Error);      // mixed dtypes
}

TEST(OpsLevel2Spatial, RopeSamePrecisionRoundsToHalf) {
    const auto out = evaluate_all("apply_rotary_pos_emb",
                                  {{DType::f16, {1, 1, 1, 2}, {1, 3}}, {DType::f16, {1, 1, 1, 2}, {1, 3}},
                                   {DType::f16, {1, 1}, {0.1}}, {DType::f16, {1, 1}, {0.7}}},
                                  {}, true);
    EXPECT_EQ(out.at(0).at(0), round_to_dtype(float(0.1) * 1 - float(0.7) * 3, DType::f16));
}

TEST(OpsLevel2Spatial, RopeCasesCoverEveryLayoutAndMode) {
    std::set<std::pair<std::int64_t, std::string>> seen;
    for (const auto& c : generated_cases("apply_rotary_pos_emb", 20)) {
        seen.insert({c.attrs.at("layout").i, c.attrs.at("rotaryMode").s});
        EXPECT_EQ(*c.inputs.at(2).range, (ValueRange{-1, 1}));
        for (std::size_t k = 1; k < 4; ++k) EXPECT_EQ(c.inputs.at(k).dtype, c.inputs.at(0).dtype);
    }
    EXPECT_EQ(seen.size(), 4u);
}


// ---------------------------------------------------------------- grid_sampler_3d

// x is [1, 1, 1, 1, 4] = {1, 2, 3, 4} along W; the grid's y and z are 0, which on a size-1
// dim is voxel 0 in both align modes. Each point's x coordinate g unnormalizes to
// 2g + 1.5 (align_corners=false) or 1.5 (g + 1) (true).
std::vector<double> sample_w(const std::vector<double>& gx, const std::string& interp, const std::string& pad,
                             bool align, const std::vector<double>& x = {1, 2, 3, 4}) {
    std::vector<double> grid;
    for (double g : gx) grid.insert(grid.end(), {g, 0, 0});
    const auto n = static_cast<std::int64_t>(gx.size());
    return evaluate("grid_sampler_3d",
                    {{DType::f32, {1, 1, 1, 1, static_cast<std::int64_t>(x.size())}, x}, {DType::f32, {1, 1, 1, n, 3}, grid}},
                    {{"interpolation_mode", s(interp)}, {"padding_mode", s(pad)}, {"align_corners", b(align)}});
}

TEST(OpsLevel2Spatial, GridSamplerBilinearInEveryPaddingMode) {
    // align_corners=false: g = 0, -1, 1.25, 0.6, -1.75 -> 1.5, -0.5, 4, 2.7, -2.
    const std::vector<double> g = {0, -1, 1.25, 0.6, -1.75};
    expect_values(sample_w(g, "bilinear", "zeros", false), {2.5, 0.5, 0, 3.7, 0});
    expect_values(sample_w(g, "bilinear", "border", false), {2.5, 1, 4, 3.7, 1});
    // Reflection about the outer edges (-0.5 and 3.5): 4 -> 3, -2 -> 1.
    expect_values(sample_w(g, "bilinear", "reflection", false), {2.5, 1, 4, 3.7, 2});
    // align_corners=true: g = 0, -1, 1.5, -2 -> 1.5, 0, 3.75, -1.5.
    const std::vector<double> ga = {0, -1, 1.5, -2};
    expect_values(sample_w(ga, "bilinear", "zeros", true), {2.5, 1, 1, 0});
    expect_values(sample_w(ga, "bilinear", "border", true), {2.5, 1, 4, 1});
    // Reflection about the corner centers (0 and 3): 3.75 -> 2.25, -1.5 -> 1.5.
    expect_values(sample_w(ga, "bilinear", "reflection", true), {2.5, 1, 3.25, 2.5});
}

TEST(OpsLevel2Spatial, GridSamplerNearestRoundsHalfToEven) {
    // align_corners=false: g = 0, 0.5, -1, 1.25, -1.75 -> 1.5, 2.5, -0.5, 4, -2: ties go to the
    // even voxel (2, 2, -0 = 0), not away from zero (2, 3, -1).
    const std::vector<double> g = {0, 0.5, -1, 1.25, -1.75};
    expect_values(sample_w(g, "nearest", "zeros", false), {3, 3, 1, 0, 0});
    expect_values(sample_w(g, "nearest", "border", false), {3, 3, 1, 4, 1});
    expect_values(sample_w(g, "nearest", "reflection", false), {3, 3, 1, 4, 2});
    // align_corners=true: g = 0, 1.5, -2 -> 1.5, 3.75, -1.5 (reflected: 2.25 and 1.5).
    const std::vector<double> ga = {0, 1.5, -2};
    expect_values(sample_w(ga, "nearest", "zeros", true), {3, 0, 0});
    expect_values(sample_w(ga, "nearest", "border", true), {3, 4, 1});
    expect_values(sample_w(ga, "nearest", "reflection", true), {3, 3, 3});
}

TEST(OpsLevel2Spatial, GridSamplerAxesAreWHDAndCornersWeighTrilinearly) {
    // x [1, 1, 2, 2, 2] = z*4 + y*2 + x; align_corners: -1 and 1 are voxel centers 0 and 1.
    const std::vector<double> x = {0, 1, 2, 3, 4, 5, 6, 7};
    const auto y = evaluate("grid_sampler_3d",
                            {{DType::f32, {1, 1, 2, 2, 2}, x}, {DType::f32, {1, 1, 1, 3, 3}, {0, 0, 0, 1, -1, 0, -1, 1, 0.5}}},
                            {{"align_corners", b(true)}});
    // (0.5, 0.5, 0.5) -> the mean 3.5; (x 1, y 0, z 0.5) -> (1 + 5) / 2; (x 0, y 1, z 0.75) -> 2*0.25 + 6*0.75.
    expect_values(y, {3.5, 3, 5});
}

TEST(OpsLevel2Spatial, GridSamplerInfiniteValueAtAZeroWeightCornerIsNaN) {
    // Border, align_corners: g = -1 is voxel 0 exactly; voxel 1 is inside with weight 0.
    expect_values(sample_w({-1}, "bilinear", "border", true, {1, INFINITY}), {NAN});
    expect_values(sample_w({1}, "bilinear", "border", true, {1, INFINITY}), {INFINITY});
}

TEST(OpsLevel2Spatial, GridSamplerOutputShapeAndErrors) {
    const Problem p = problem_for("grid_sampler_3d", {{DType::f16, {2, 5, 4, 6, 7}}, {DType::f16, {2, 3, 8, 9, 3}}});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{2, 5, 3, 8, 9}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::f16);
    const WorkModel w = op_named("grid_sampler_3d").work(p);
    EXPECT_EQ(w.bytes_written, 2 * 5 * 3 * 8 * 9 * 2);
    EXPECT_EQ(w.bytes_read, 2 * 3 * 8 * 9 * 3 * 2 + 2 * 5 * 4 * 6 * 7 * 2);  // all of x: fewer than 8 reads per output
    EXPECT_EQ(vector_elements(w, OpClass::fma), 3 * 2 * 216 + 8 * 2 * 5 * 216);
    EXPECT_EQ(vector_elements(w, OpClass::select), 8 * 2 * 5 * 216);  // the corner fetches
    auto bad = [](std::vector<In> in, AttrMap attrs = {}) { return problem_for("grid_sampler_3d", std::move(in), std::move(attrs)); };
    EXPECT_THROW(bad({{DType::f32, {2, 5, 4, 6}}, {DType::f32, {2, 3, 8, 3}}}), Error);                 // 4-D
    EXPECT_THROW(bad({{DType::f32, {2, 5, 4, 6, 7}}, {DType::f32, {2, 3, 8, 9, 2}}}), Error);           // not xyz
    EXPECT_THROW(bad({{DType::f32, {2, 5, 4, 6, 7}}, {DType::f32, {1, 3, 8, 9, 3}}}), Error);           // batch
    EXPECT_THROW(bad({{DType::f32, {2, 5, 4, 6, 7}}, {DType::f16, {2, 3, 8, 9, 3}}}), Error);           // dtypes
    EXPECT_THROW(bad({{DType::f32, {2, 5, 4, 6, 7}}, {DType::f32, {2, 3, 8, 9, 3}}}, {{"interpolation_mode", s("bicubic")}}),
                 Error);
    EXPECT_THROW(bad({{DType::f32, {2, 5, 4, 6, 7}}, {DType::f32, {2, 3, 8, 9, 3}}}, {{"padding_mode", s("wrap")}}), Error);
}

TEST(OpsLevel2Spatial, GridSamplerFixInputsMovesFloat32NearTiesOnAllAxes) {
    // x [1, 1, 1, 1, 4], nearest, align_corners=false: a value g maps to 2g + 1.5 along W and
    // g / 2 along the size-1 dims; g = 0.0002 (1.5004 along W), g = 0 (an exact tie at 1.5)
    // and g = 0.5 (a tie along W) are all redrawn for a float32 grid, since a timed call may
    // move any of them to any axis. A float16 grid keeps them (exact in fp32), but not
    // g = 2^-24: fp32 rounds g + 1 to 1, so its coordinate is 1.5 there and 1.5 + 2^-23 in fp64.
    auto fixed = [](DType dtype, const std::string& interp) {
        const Problem p = problem_for("grid_sampler_3d", {{dtype, {1, 1, 1, 1, 4}}, {dtype, {1, 1, 1, 2, 3}}},
                                      {{"interpolation_mode", s(interp)}});
        std::vector<Arg> inputs = allocate_args(p.inputs, false);
        Tensor& grid = inputs.at(1).tensors.at(0);
        const double values[6] = {0.0002, 0, std::ldexp(1.0, -24), 0.5, 0, 0.7};
        for (std::size_t k = 0; k < 6; ++k) grid.set(k, values[k]);
        Rng rng(5);
        op_named("grid_sampler_3d").fix_inputs(p, inputs, rng);
        std::vector<double> out;
        for (std::size_t k = 0; k < 6; ++k) out.push_back(grid.get(k));
        return out;
    };
    const auto f32 = fixed(DType::f32, "nearest");
    for (double g : f32)
        for (double c : {2 * g + 1.5, g / 2}) EXPECT_GE(std::fabs(c - std::floor(c) - 0.5), 1e-3) << g;
    EXPECT_EQ(f32[5], round_to_dtype(0.7, DType::f32));  // 2.9 and 0.35: no tie anywhere
    const auto f16 = fixed(DType::f16, "nearest");
    EXPECT_EQ(f16[3], 0.5);
    EXPECT_EQ(f16[1], 0);
    EXPECT_NE(f16[2], std::ldexp(1.0, -24));
    for (double g : f16) {
        const auto gf = static_cast<float>(g);
        EXPECT_EQ(static_cast<double>(((gf + 1) * 4 - 1) / 2), ((g + 1) * 4 - 1) / 2) << g;  // the W coordinate, fp32 and fp64
        EXPECT_EQ(static_cast<double>((gf + 1) * 1 - 1) / 2, ((g + 1) * 1 - 1) / 2) << g;  // size-1 dims
    }
    // Trilinear sampling of finite x (no range given here) is continuous: nothing moves.
    EXPECT_EQ(fixed(DType::f32, "bilinear")[1], 0);
}

TEST(OpsLevel2Spatial, GridSamplerCasesCoverEveryModeAndReachPastTheEdges) {
    std::set<std::string> seen;
    for (const auto& c : generated_cases("grid_sampler_3d", 20)) {
        seen.insert(c.attrs.at("interpolation_mode").s + "/" + c.attrs.at("padding_mode").s + "/" +
                    (c.attrs.at("align_corners").b ? "true" : "false"));
        ASSERT_TRUE(c.inputs.at(1).range.has_value());
        EXPECT_GT(c.inputs.at(1).range->hi, 1);
        EXPECT_LT(c.inputs.at(1).range->lo, -1);
        EXPECT_EQ(c.inputs.at(1).shapes.at(0).back(), 3);
    }
    EXPECT_EQ(seen.size(), 12u);
}

}  // namespace
}  // namespace hb
