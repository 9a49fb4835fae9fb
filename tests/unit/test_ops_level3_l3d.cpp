// Level-3 operators of group l3d (moe_re_routing, nms, strided_slice, top_k, transpose,
// unique): goldens against hand-computed values on every attribute path, the order and tie
// rules (stable expert order, NMS visiting order and IoU == threshold, top_k's free tie order
// with distinct indices, unique's first-occurrence representative), output inference and its
// errors, outputs of data-dependent length, the input hooks, the work models (bytes only for
// the data movement) and case sampling through the generator with hapbench's own protos.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/case_rules.hpp"
#include "suite/inputs.hpp"
#include "spec/profile.hpp"
#include "suite/split.hpp"
#include "verify/distinct_indices.hpp"
#include "verify/precision_gate.hpp"

namespace hb {
namespace {

const double nan_value = std::nan("");
const double inf = INFINITY;

const Proto& suite_proto(const std::string& op) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end())
        it = protos.emplace(op, load_proto(std::string(HB_SOURCE_DIR) + "/suite/level3/" + op + "/proto.yaml", op, 3)).first;
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
    std::vector<double> values;
    bool present = true;
    std::optional<ValueRange> range = std::nullopt;
};

In absent(DType dtype) { return In{dtype, {}, {}, false}; }

CaseSpec case_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs) {
    CaseSpec c;
    c.op = op;
    c.case_id = 1;
    c.attrs = std::move(attrs);
    for (const auto& in : inputs) {
        CaseInput ci;
        ci.present = in.present;
        if (in.present) ci.shapes = {in.shape};
        ci.dtype = in.dtype;
        ci.range = in.range;
        c.inputs.push_back(ci);
    }
    return c;
}

Problem problem_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {}) {
    return resolve_problem(suite_proto(op), op_named(op), case_for(op, inputs, std::move(attrs)));
}

ValueArgs<double> input_values(const Problem& p, const std::vector<In>& inputs) {
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = p.inputs[k].name;
        in[k].present = inputs[k].present;
        if (inputs[k].present) in[k].tensors.push_back({TensorSpec{inputs[k].dtype, inputs[k].shape}, inputs[k].values});
    }
    return in;
}

// Every output of the golden (or the same-precision reference), in proto order.
ValueArgs<double> evaluate(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {}, bool same_precision = false) {
    const Problem p = problem_for(op, inputs, std::move(attrs));
    ValueArgs<double> out = values_for_specs<double>(p.outputs);
    if (same_precision) op_named(op).same_precision(p, input_values(p, inputs), out);
    else op_named(op).golden(p, input_values(p, inputs), out);
    return out;
}

// Equal element for element (NaN equals NaN); `prefix` compares only the leading entries.
void expect_same(const std::vector<double>& got, const std::vector<double>& expected, std::size_t prefix = 0) {
    const std::size_t n = prefix ? prefix : got.size();
    ASSERT_GE(got.size(), n);
    ASSERT_EQ(n, expected.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        else EXPECT_EQ(got[i], expected[i]) << "element " << i;
    }
}

AttrValue ints(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

std::vector<double> iota(std::size_t n, double start = 0) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
    return v;
}

std::vector<CaseSpec> generated_cases(const std::string& op, int count = 20, std::uint64_t seed = 20260101) {
    const auto cases = generate_cases(op_named(op), suite_proto(op), profile_by_name("cpu"), seed, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(suite_proto(op), op_named(op), c)) << op << " case " << c.case_id;
    const auto problems = check_case_rules(cases, suite_proto(op), op_named(op), profile_by_name("cpu"));
    EXPECT_TRUE(problems.empty()) << op << ": " << (problems.empty() ? "" : problems.front());
    return cases;
}

std::set<DType> first_input_dtypes(const std::vector<CaseSpec>& cases) {
    std::set<DType> seen;
    for (const auto& c : cases) seen.insert(c.inputs.at(0).dtype);
    return seen;
}

std::set<DType> proto_dtypes(const std::string& op) {
    const auto& d = suite_proto(op).inputs.at(0).dtypes;
    return {d.begin(), d.end()};
}

// The message of the hb::Error `body` throws ("" when it does not throw).
template <typename Body>
std::string error_of(Body body) {
    try {
        body();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

// ------------------------------------------------------------------------------- transpose

TEST(OpsLevel3L3d, TransposeSwapsAMatrix) {
    const auto y = evaluate("transpose", {{DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}}}, {{"perm", ints({1, 0})}});
    EXPECT_EQ(y[0].one().spec.shape, (Shape{3, 2}));
    expect_same(y[0].one().v, {1, 4, 2, 5, 3, 6});
    // Negative entries count from the end: [-1, -2] is [1, 0].
    expect_same(evaluate("transpose", {{DType::i32, {2, 3}, {1, 2, 3, 4, 5, 6}}}, {{"perm", ints({-1, -2})}})[0].one().v,
                {1, 4, 2, 5, 3, 6});
}

TEST(OpsLevel3L3d, TransposeFollowsThePermuteDefinitionForACycle) {
    // x [2, 1, 3] = 0..5, perm [2, 0, 1]: y[c, a, b] = x[a, b, c], y shape [3, 2, 1]. The
    // reference proto's formula (permutation on the other side) would give shape [1, 3, 2].
    const auto y = evaluate("transpose", {{DType::i64, {2, 1, 3}, iota(6)}}, {{"perm", ints({2, 0, 1})}});
    EXPECT_EQ(y[0].one().spec.shape, (Shape{3, 2, 1}));
    expect_same(y[0].one().v, {0, 3, 1, 4, 2, 5});
    // [0, 2, 1, 3] on [1, 2, 2, 2] swaps the middle dims and keeps rows of 2.
    expect_same(evaluate("transpose", {{DType::f16, {1, 2, 2, 2}, iota(8)}}, {{"perm", ints({0, 2, 1, 3})}})[0].one().v,
                {0, 1, 4, 5, 2, 3, 6, 7});
    // Identity and a 0-d... identity of a vector is a copy.
    expect_same(evaluate("transpose", {{DType::i8, {4}, {3, -1, 2, 7}}}, {{"perm", ints({0})}})[0].one().v, {3, -1, 2, 7});
}

TEST(OpsLevel3L3d, TransposeCopiesSpecialValuesUnchanged) {
    const auto y = evaluate("transpose", {{DType::bf16, {2, 2}, {nan_value, -inf, inf, -0.0}}}, {{"perm", ints({1, 0})}});
    expect_same(y[0].one().v, {nan_value, inf, -inf, -0.0});
    EXPECT_TRUE(std::signbit(y[0].one().v[3]));
}

TEST(OpsLevel3L3d, TransposeRejectsBadPermutations) {
    const In x{DType::f32, {2, 3, 4}, {}};
    EXPECT_NE(error_of([&] { problem_for("transpose", {x}, {{"perm", ints({0, 1})}}); }).find("has 2 entries"), std::string::npos);
    EXPECT_NE(error_of([&] { problem_for("transpose", {x}, {{"perm", ints({0, 1, 1})}}); }).find("twice"), std::string::npos);
    EXPECT_NE(error_of([&] { problem_for("transpose", {x}, {{"perm", ints({0, 1, 3})}}); }), "");
    EXPECT_NE(error_of([&] { problem_for("transpose", {x}, {{"perm", AttrValue::of_int(1)}}); }).find("list of ints"),
              std::string::npos);
    const In big{DType::f32, {1, 1, 1, 1, 1, 1, 1, 1, 2}, {}};
    EXPECT_NE(error_of([&] { problem_for("transpose", {big}, {{"perm", ints({0, 1, 2, 3, 4, 5, 6, 7, 8})}}); }).find("up to 8"),
              std::string::npos);
}

TEST(OpsLevel3L3d, TransposeWorkModelIsBytesOnly) {
    const Problem p = problem_for("transpose", {{DType::i16, {30, 50, 7}, {}}}, {{"perm", ints({2, 0, 1})}});
    const WorkModel w = op_named("transpose").work(p);
    EXPECT_EQ(w.bytes_read, 30 * 50 * 7 * 2);
    EXPECT_EQ(w.bytes_written, 30 * 50 * 7 * 2);
    EXPECT_TRUE(w.vector.empty());
    EXPECT_TRUE(w.matrix.empty());
    EXPECT_TRUE(w.contractions.empty());
}

TEST(OpsLevel3L3d, TransposeSamplerCoversEveryPermutationClassAndDtype) {
    const auto cases = generated_cases("transpose");
    bool swap_last = false, keeps_last = false, reversal = false, identity = false, negative = false, cycle = false;
    for (const auto& c : cases) {
        auto perm = c.attrs.at("perm").ints;
        const auto rank = static_cast<std::int64_t>(perm.size());
        for (auto& v : perm) {
            negative |= v < 0;
            if (v < 0) v += rank;
        }
        std::vector<std::int64_t> id(perm.size());
        for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::int64_t>(i);
        identity |= perm == id;
        auto reversed = id;
        std::reverse(reversed.begin(), reversed.end());
        reversal |= rank > 2 && perm == reversed;
        keeps_last |= rank > 1 && perm.back() == rank - 1 && perm != id;
        swap_last |= rank >= 2 && perm[rank - 1] == rank - 2 && perm[rank - 2] == rank - 1;
        bool involution = true;
        for (std::int64_t i = 0; i < rank; ++i) involution = involution && perm[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])] == i;
        cycle |= !involution;
    }
    EXPECT_TRUE(swap_last && keeps_last && reversal && identity && negative && cycle);
    EXPECT_EQ(first_input_dtypes(cases), proto_dtypes("transpose"));
}

// --------------------------------------------------------------------------- strided_slice

AttrMap slice(std::vector<std::int64_t> begin, std::vector<std::int64_t> end, std::vector<std::int64_t> strides,
              AttrMap masks = {}) {
    masks["begin"] = ints(std::move(begin));
    masks["end"] = ints(std::move(end));
    masks["strides"] = ints(std::move(strides));
    return masks;
}

ValueArgs<double> sliced(const Shape& shape, AttrMap attrs, DType dtype = DType::f32) {
    return evaluate("strided_slice", {{dtype, shape, iota(static_cast<std::size_t>(numel(shape)))}}, std::move(attrs));
}

TEST(OpsLevel3L3d, StridedSlicePositiveAndNegativeStrides) {
    auto y = sliced({10}, slice({1}, {8}, {3}));
    EXPECT_EQ(y[0].one().spec.shape, Shape{3});
    expect_same(y[0].one().v, {1, 4, 7});
    // Backwards from the last element to before index 0: end -11 wraps once to -1, "before 0".
    expect_same(sliced({10}, slice({-1}, {-11}, {-2}))[0].one().v, {9, 7, 5, 3, 1});
    // end -1 means "stop before the last element" (one wrap), also backwards.
    expect_same(sliced({10}, slice({0}, {-1}, {4}))[0].one().v, {0, 4, 8});
    expect_same(sliced({10}, slice({8}, {-1}, {-1}))[0].one().v, {});
    // A begin still negative after one wrap clamps to the start (Python would wrap it again).
    expect_same(sliced({10}, slice({-15}, {3}, {1}))[0].one().v, {0, 1, 2});
    // 2-D: rows backwards by 2, columns forward by 3.
    expect_same(sliced({3, 5}, slice({2, 0}, {-4, 5}, {-2, 3}))[0].one().v, {10, 13, 0, 3});
}

TEST(OpsLevel3L3d, StridedSliceMasks) {
    // begin_mask bit 0: rows from 0 (begin 1 ignored); end_mask bit 1: columns to the end.
    auto y = sliced({3, 4}, slice({1, 1}, {2, 2}, {1, 1}, {{"begin_mask", AttrValue::of_int(1)}, {"end_mask", AttrValue::of_int(2)}}));
    EXPECT_EQ(y[0].one().spec.shape, (Shape{2, 3}));
    expect_same(y[0].one().v, {1, 2, 3, 5, 6, 7});
    // Masks with a negative stride take the whole dim backwards.
    expect_same(sliced({5}, slice({0}, {0}, {-2}, {{"begin_mask", AttrValue::of_int(1)}, {"end_mask", AttrValue::of_int(1)}}))[0].one().v,
                {4, 2, 0});
}

TEST(OpsLevel3L3d, StridedSliceShrinkNewAxisEllipsisAndShortSpecs) {
    // shrink bit 0 with begin -1: the last row, the dim removed.
    auto y = sliced({3, 4}, slice({-1, 0}, {0, 4}, {1, 1}, {{"shrink_axis_mask", AttrValue::of_int(1)}}));
    EXPECT_EQ(y[0].one().spec.shape, Shape{4});
    expect_same(y[0].one().v, {8, 9, 10, 11});
    // new axis at entry 0 ([1, 2, 3]) and at entry 1 ([2, 1, 3]).
    EXPECT_EQ(sliced({2, 3}, slice({0, 0, 0}, {1, 2, 3}, {1, 1, 1}, {{"new_axis_mask", AttrValue::of_int(1)}}))[0].one().spec.shape,
              (Shape{1, 2, 3}));
    y = sliced({2, 3}, slice({0, 0, 1}, {2, 1, 3}, {1, 1, 1}, {{"new_axis_mask", AttrValue::of_int(2)}}));
    EXPECT_EQ(y[0].one().spec.shape, (Shape{2, 1, 2}));
    expect_same(y[0].one().v, {1, 2, 4, 5});
    // x[..., 1:3] on [2, 3, 4]: the ellipsis stands for the first two dims.
    y = sliced({2, 3, 4}, slice({0, 1}, {0, 3}, {1, 1}, {{"ellipsis_mask", AttrValue::of_int(1)}}));
    EXPECT_EQ(y[0].one().spec.shape, (Shape{2, 3, 2}));
    expect_same(y[0].one().v, {1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22});
    // A spec shorter than the rank: the trailing dims whole.
    y = sliced({3, 2}, slice({1}, {2}, {1}));
    EXPECT_EQ(y[0].one().spec.shape, (Shape{1, 2}));
    expect_same(y[0].one().v, {2, 3});
    // shrink + begin_mask: the mask applies first (index 0 for a positive stride).
    expect_same(sliced({3, 2}, slice({2, 0}, {3, 2}, {1, 1},
                                     {{"shrink_axis_mask", AttrValue::of_int(1)}, {"begin_mask", AttrValue::of_int(1)}}))[0].one().v,
                {0, 1});
}

TEST(OpsLevel3L3d, StridedSliceRejectsSpecsItCannotTake) {
    const In x{DType::f32, {4, 5}, {}};
    auto err = [&](AttrMap a) { return error_of([&] { problem_for("strided_slice", {x}, std::move(a)); }); };
    EXPECT_NE(err(slice({0, 0}, {4, 5}, {1, 0})).find("stride 0"), std::string::npos);
    EXPECT_NE(err(slice({0, 0}, {4}, {1, 1})).find("same length"), std::string::npos);
    EXPECT_NE(err(slice({7, 0}, {8, 5}, {1, 1}, {{"shrink_axis_mask", AttrValue::of_int(1)}})).find("outside dimension 0"),
              std::string::npos);
    EXPECT_NE(err(slice({0, 0, 0}, {1, 1, 1}, {1, 1, 1})).find("names 3 dimensions"), std::string::npos);
    EXPECT_NE(err(slice({0, 0}, {1, 1}, {1, 1}, {{"ellipsis_mask", AttrValue::of_int(3)}})).find("more than one"), std::string::npos);
    EXPECT_NE(err(slice({0, 0}, {1, 1}, {1, 1}, {{"end_mask", AttrValue::of_int(4)}})).find("beyond"), std::string::npos);
    EXPECT_NE(err(slice({0, 0}, {1, 1}, {1, 1}, {{"begin_mask", AttrValue::of_int(-1)}})).find("negative"), std::string::npos);
}

TEST(OpsLevel3L3d, StridedSliceWorkModelCountsTheSectorsItReads) {
    // Innermost stride 1: the selected bytes. Stride 16 on float32 (64 bytes): a 32-byte
    // sector per element. Stride 2: the span of each row, 32-byte sectors.
    const In x{DType::f32, {64, 256}, {}};
    auto work = [&](AttrMap a) { return op_named("strided_slice").work(problem_for("strided_slice", {x}, std::move(a))); };
    EXPECT_EQ(work(slice({0, 0}, {64, 256}, {1, 1})).bytes_read, 64 * 256 * 4);
    EXPECT_EQ(work(slice({0, 0}, {64, 256}, {1, 16})).bytes_read, 64 * 16 * 32);
    EXPECT_EQ(work(slice({0, 0}, {64, 256}, {2, 2})).bytes_read, 32 * 32 * 32);  // 128 elements span 255 * 4 B: 32 sectors
    const WorkModel w = work(slice({0, 0}, {64, 256}, {1, 2}));
    EXPECT_EQ(w.bytes_written, 64 * 128 * 4);
    EXPECT_TRUE(w.vector.empty());
}

TEST(OpsLevel3L3d, StridedSliceSamplerCoversEveryMaskAndNegativeStrides) {
    const auto cases = generated_cases("strided_slice");
    std::set<std::string> masks;
    bool negative_stride = false, negative_index = false, short_spec = false;
    for (const auto& c : cases) {
        for (const char* m : {"begin_mask", "end_mask", "ellipsis_mask", "shrink_axis_mask", "new_axis_mask"})
            if (c.attrs.count(m)) masks.insert(m);
        for (auto s : c.attrs.at("strides").ints) negative_stride |= s < 0;
        for (auto b : c.attrs.at("begin").ints) negative_index |= b < 0;
        short_spec |= !c.attrs.count("new_axis_mask") && !c.attrs.count("ellipsis_mask") &&
                      c.attrs.at("begin").ints.size() < c.inputs.at(0).shapes.at(0).size();
    }
    EXPECT_EQ(masks.size(), 5u);
    EXPECT_TRUE(negative_stride && negative_index && short_spec);
    EXPECT_EQ(first_input_dtypes(cases), proto_dtypes("strided_slice"));
}

// -------------------------------------------------------------------------- moe_re_routing

// tokens [7, 2] = row r holds (10 r, 10 r + 1); counts [[1, 2], [3, 1]] (N = 2 ranks, E = 2).
// Source blocks, rank-major: (0,0) row 0 | (0,1) rows 1-2 | (1,0) rows 3-5 | (1,1) row 6.
// Destination, expert-major: expert 0 gets (0,0) then (1,0): rows 0, 3, 4, 5; expert 1 gets
// (0,1) then (1,1): rows 1, 2, 6.
std::vector<In> routing_inputs(DType counts_dtype, bool with_scales) {
    std::vector<double> tokens;
    for (int r = 0; r < 7; ++r) {
        tokens.push_back(10 * r);
        tokens.push_back(10 * r + 1);
    }
    return {{DType::f16, {7, 2}, tokens},
            {counts_dtype, {2, 2}, {1, 2, 3, 1}},
            with_scales ? In{DType::f32, {7}, {0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5}} : absent(DType::f32)};
}

AttrMap routing_attrs(std::int64_t type, std::int64_t idx_type) {
    return {{"expert_token_num_type", AttrValue::of_int(type)}, {"idx_type", AttrValue::of_int(idx_type)}};
}

TEST(OpsLevel3L3d, MoeReRoutingKeepsTheExpertOrderStable) {
    const auto out = evaluate("moe_re_routing", routing_inputs(DType::i32, true), routing_attrs(1, 0));
    expect_same(out[0].one().v, {0, 1, 30, 31, 40, 41, 50, 51, 10, 11, 20, 21, 60, 61});
    expect_same(out[1].one().v, {0.5, 3.5, 4.5, 5.5, 1.5, 2.5, 6.5});
    expect_same(out[2].one().v, {0, 3, 4, 5, 1, 2, 6});  // gather index: idx[dst] = src
    expect_same(out[3].one().v, {4, 3});
    EXPECT_EQ(out[3].one().spec.dtype, DType::i32);  // the counts' dtype (the reference golden returns int64)
}

TEST(OpsLevel3L3d, MoeReRoutingScatterIndexCumulativeCountsAndAbsentScales) {
    const auto out = evaluate("moe_re_routing", routing_inputs(DType::i64, false), routing_attrs(0, 1));
    expect_same(out[1].one().v, {0, 0, 0, 0, 0, 0, 0});  // absent scales: zeros, still an output
    expect_same(out[2].one().v, {0, 4, 5, 1, 2, 3, 6});  // scatter index: idx[src] = dst
    expect_same(out[3].one().v, {4, 7});                 // inclusive cumulative counts
    EXPECT_EQ(out[3].one().spec.dtype, DType::i64);
    // One rank: the output is the input.
    const auto one_rank = evaluate("moe_re_routing", {{DType::i8, {3, 1}, {5, -6, 7}}, {DType::i32, {1, 2}, {2, 1}}, absent(DType::f32)},
                                   routing_attrs(1, 0));
    expect_same(one_rank[0].one().v, {5, -6, 7});
    expect_same(one_rank[2].one().v, {0, 1, 2});
}

TEST(OpsLevel3L3d, MoeReRoutingRejectsBadShapesAttributesAndCounts) {
    auto err = [&](std::vector<In> in, AttrMap a) { return error_of([&] { problem_for("moe_re_routing", in, a); }); };
    auto inputs = routing_inputs(DType::i32, true);
    EXPECT_NE(err(inputs, routing_attrs(2, 0)).find("expert_token_num_type"), std::string::npos);
    EXPECT_NE(err(inputs, routing_attrs(1, 3)).find("idx_type"), std::string::npos);
    inputs[2].shape = {6};
    EXPECT_NE(err(inputs, routing_attrs(1, 0)).find("per_token_scales"), std::string::npos);
    inputs = routing_inputs(DType::i32, true);
    inputs[1].shape = {4, 2};  // 8 cells for 7 tokens
    EXPECT_NE(err(inputs, routing_attrs(1, 0)).find("fewer than the 8 cells"), std::string::npos);
    inputs = routing_inputs(DType::i32, true);
    inputs[0].shape = {7, 2, 1};
    EXPECT_NE(err(inputs, routing_attrs(1, 0)).find("2-D"), std::string::npos);
    // Counts that do not sum to A are refused by the golden (the hook never draws them).
    inputs = routing_inputs(DType::i32, true);
    inputs[1].values = {1, 2, 3, 2};
    EXPECT_NE(error_of([&] { evaluate("moe_re_routing", inputs, routing_attrs(1, 0)); }).find("sums to 8"), std::string::npos);
}

TEST(OpsLevel3L3d, MoeReRoutingHookDrawsValidSkewedCounts) {
    const Problem p = problem_for("moe_re_routing",
                                  {{DType::bf16, {1000, 64}, {}, true, ValueRange{-1, 1}},
                                   {DType::i64, {4, 8}, {}, true, ValueRange{-1, 1}},
                                   {DType::f32, {1000}, {}, true, ValueRange{-1, 1}}},
                                  routing_attrs(1, 0));
    const auto inputs = generate_inputs(p, op_named("moe_re_routing"), 0);
    const Tensor& counts = inputs.at(1).tensors.at(0);
    double sum = 0, lo = 1e18, hi = 0;
    for (std::int64_t k = 0; k < 32; ++k) {
        const double c = counts.get(static_cast<std::size_t>(k));
        sum += c;
        lo = std::min(lo, c);
        hi = std::max(hi, c);
    }
    EXPECT_EQ(sum, 1000);
    EXPECT_GE(lo, 1);
    EXPECT_GT(hi, 2 * lo);  // not the uniform blocks of the reference's hook
}

TEST(OpsLevel3L3d, MoeReRoutingSamplerCoversEveryAttributePairAndDtype) {
    const auto cases = generated_cases("moe_re_routing");
    std::set<std::pair<std::int64_t, std::int64_t>> pairs;
    std::set<DType> counts;
    bool with_scales = false, without = false, several_ranks = false;
    for (const auto& c : cases) {
        pairs.insert({c.attrs.at("expert_token_num_type").i, c.attrs.at("idx_type").i});
        counts.insert(c.inputs.at(1).dtype);
        (c.inputs.at(2).present ? with_scales : without) = true;
        several_ranks |= c.inputs.at(1).shapes.at(0).at(0) > 1;
    }
    EXPECT_EQ(pairs.size(), 4u);
    EXPECT_EQ(counts, (std::set<DType>{DType::i32, DType::i64}));
    EXPECT_TRUE(with_scales && without && several_ranks);
    EXPECT_EQ(first_input_dtypes(cases), proto_dtypes("moe_re_routing"));
}

// ---------------------------------------------------------------------------------- top_k

AttrMap top(std::int64_t k, std::int64_t dim, bool largest = true) {
    return {{"k", AttrValue::of_int(k)}, {"dim", AttrValue::of_int(dim)}, {"largest", AttrValue::of_bool(largest)}};
}

TEST(OpsLevel3L3d, TopKLargestAndSmallestSorted) {
    const In x{DType::f32, {8}, {3, 1, 4, 1, 5, 9, 2, 6}};
    auto out = evaluate("top_k", {x}, top(3, 0));
    expect_same(out[0].one().v, {9, 6, 5});
    expect_same(out[1].one().v, {5, 7, 4});
    out = evaluate("top_k", {x}, top(3, -1, false));
    expect_same(out[0].one().v, {1, 1, 2});
    // Along dim 0 of [3, 2]: per column.
    out = evaluate("top_k", {{DType::i32, {3, 2}, {1, 7, 4, 2, 3, 9}}}, top(2, 0));
    EXPECT_EQ(out[0].one().spec.shape, (Shape{2, 2}));
    expect_same(out[0].one().v, {4, 9, 3, 7});
    expect_same(out[1].one().v, {1, 2, 2, 0});
}

TEST(OpsLevel3L3d, TopKRanksNaNAboveInfinity) {
    const In x{DType::f16, {5}, {1, nan_value, 3, inf, -inf}};
    expect_same(evaluate("top_k", {x}, top(2, 0))[0].one().v, {nan_value, inf});
    expect_same(evaluate("top_k", {x}, top(4, 0, false))[0].one().v, {-inf, 1, 3, inf});
    expect_same(evaluate("top_k", {x}, top(5, 0, false))[0].one().v, {-inf, 1, 3, inf, nan_value});
}

TEST(OpsLevel3L3d, TopKRejectsBadKAndDim) {
    const In x{DType::f32, {3, 4}, {}};
    EXPECT_NE(error_of([&] { problem_for("top_k", {x}, top(0, 1)); }).find("1 <= k <= size"), std::string::npos);
    EXPECT_NE(error_of([&] { problem_for("top_k", {x}, top(5, 1)); }).find("has size 4"), std::string::npos);
    EXPECT_NE(error_of([&] { problem_for("top_k", {x}, top(1, 2)); }), "");
    EXPECT_NE(error_of([&] { problem_for("top_k", {{DType::f32, {}, {}}}, top(1, 0)); }).find("at least one dimension"), std::string::npos);
}

// The gate on top_k's outputs: y bit-exact against the golden, idx by gathering plus the
// distinct-index rule. A tie broken the other way passes; a repeated index does not.
GateResult gate_top_k(const std::vector<double>& x, std::int64_t k, const std::vector<double>& y, const std::vector<double>& idx) {
    const std::vector<In> in = {{DType::f32, {static_cast<std::int64_t>(x.size())}, x}};
    const Problem p = problem_for("top_k", in, top(k, 0));
    ValueArgs<double> golden = values_for_specs<double>(p.outputs);
    op_named("top_k").golden(p, input_values(p, in), golden);
    ValueArgs<double> candidate = values_for_specs<double>(p.outputs);
    candidate[0].one().v = y;
    candidate[1].one().v = idx;
    GateResult r = run_precision_gate(p, candidate, golden, golden, input_values(p, in));
    apply_distinct_index_rule(p, candidate, r);
    return r;
}

TEST(OpsLevel3L3d, TopKTieOrderIsFreeButIndicesMustBeDistinct) {
    const std::vector<double> x = {5, 3, 5, 1};
    EXPECT_TRUE(gate_top_k(x, 2, {5, 5}, {0, 2}).passed);
    EXPECT_TRUE(gate_top_k(x, 2, {5, 5}, {2, 0}).passed);  // the tie broken the other way
    const GateResult repeated = gate_top_k(x, 2, {5, 5}, {0, 0});
    EXPECT_FALSE(repeated.passed);
    EXPECT_NE(repeated.reason.find("repeat"), std::string::npos) << repeated.reason;
    EXPECT_FALSE(gate_top_k(x, 2, {5, 5}, {0, 1}).passed);  // index 1 gathers 3, not 5
    EXPECT_FALSE(gate_top_k(x, 2, {5, 3}, {0, 1}).passed);  // y is not the top 2
}

TEST(OpsLevel3L3d, TopKHookClearsNegativeZeroClampsInt64AndPlantsTies) {
    const Problem f = problem_for("top_k", {{DType::f32, {40, 101}, {}, true, ValueRange{-1000, 1000}}}, top(5, -1));
    const auto xf = generate_inputs(f, op_named("top_k"), 0);
    const Tensor& t = xf.at(0).tensors.at(0);
    int lines_with_ties = 0;
    for (int line = 0; line < 40; ++line) {
        std::vector<double> v;
        for (int k = 0; k < 101; ++k) v.push_back(t.get(static_cast<std::size_t>(line * 101 + k)));
        std::sort(v.begin(), v.end(), std::greater<>());
        lines_with_ties += std::adjacent_find(v.begin(), v.begin() + 6) != v.begin() + 6;
    }
    EXPECT_GE(lines_with_ties, 10);
    const Problem z = problem_for("top_k", {{DType::bf16, {1000}, {}, true, ValueRange{-1e-30, 1e-30}}}, top(5, 0));
    const auto xz = generate_inputs(z, op_named("top_k"), 0);
    for (int i = 0; i < 1000; ++i) ASSERT_FALSE(std::signbit(xz.at(0).tensors.at(0).get(static_cast<std::size_t>(i))) &&
                                                xz.at(0).tensors.at(0).get(static_cast<std::size_t>(i)) == 0) << i;
    const Problem l = problem_for("top_k", {{DType::i64, {1000}, {}, true, ValueRange{-inf, inf}}}, top(3, 0));
    const auto xl = generate_inputs(l, op_named("top_k"), 0);
    for (int i = 0; i < 1000; ++i)
        ASSERT_LE(std::abs(static_cast<const std::int64_t*>(xl.at(0).tensors.at(0).data())[i]), std::int64_t{1} << 53);
}

TEST(OpsLevel3L3d, TopKSamplerCoversDimsLargestFullSortAndDtypes) {
    const auto cases = generated_cases("top_k");
    std::set<bool> largest;
    bool first = false, last = false, negative_outer = false, middle = false, full_sort = false;
    for (const auto& c : cases) {
        const auto& shape = c.inputs.at(0).shapes.at(0);
        const auto rank = static_cast<std::int64_t>(shape.size());
        const std::int64_t dim = c.attrs.at("dim").i;
        largest.insert(c.attrs.at("largest").b);
        first |= dim == 0;
        last |= dim == -1;
        negative_outer |= dim < -1;
        middle |= dim > 0 && dim < rank - 1;
        full_sort |= c.attrs.at("k").i == shape.at(static_cast<std::size_t>(dim < 0 ? rank + dim : dim)) && c.attrs.at("k").i > 1;
    }
    EXPECT_EQ(largest, (std::set<bool>{false, true}));
    EXPECT_TRUE(first && last && negative_outer && middle && full_sort);
    EXPECT_EQ(first_input_dtypes(cases), proto_dtypes("top_k"));
}

// --------------------------------------------------------------------------------- unique

AttrMap unique_attrs(bool sorted, bool inverse, bool counts) {
    return {{"sorted", AttrValue::of_bool(sorted)}, {"return_inverse", AttrValue::of_bool(inverse)},
            {"return_counts", AttrValue::of_bool(counts)}};
}

const std::vector<double> unique_x = {3, 1, 3, -0.0, 2, 0.0, nan_value, nan_value, -inf, 1};

TEST(OpsLevel3L3d, UniqueSortedWithInverseAndCounts) {
    const auto out = evaluate("unique", {{DType::f32, {2, 5}, unique_x}}, unique_attrs(true, true, true));
    const auto& y = out[0].one();
    EXPECT_EQ(y.written_length, 6);
    expect_same(y.v, {-inf, -0.0, 1, 2, 3, nan_value}, 6);
    EXPECT_TRUE(std::signbit(y.v[1]));  // the first zero in x is -0.0: its bits represent the value
    EXPECT_EQ(out[1].one().spec.shape, (Shape{2, 5}));  // inverse has x's shape
    expect_same(out[1].one().v, {4, 2, 4, 1, 3, 1, 5, 5, 0, 2});
    EXPECT_EQ(out[2].one().written_length, 6);
    expect_same(out[2].one().v, {1, 2, 2, 1, 2, 2}, 6);
}

TEST(OpsLevel3L3d, UniqueUnsortedKeepsFirstOccurrenceOrder) {
    const auto out = evaluate("unique", {{DType::f32, {10}, unique_x}}, unique_attrs(false, true, true));
    expect_same(out[0].one().v, {3, 1, -0.0, 2, nan_value, -inf}, 6);
    expect_same(out[1].one().v, {0, 1, 0, 2, 3, 2, 4, 4, 5, 1});
    expect_same(out[2].one().v, {2, 2, 2, 1, 2, 1}, 6);
}

TEST(OpsLevel3L3d, UniqueMergedZeroKeepsTheFirstSign) {
    const auto positive_first = evaluate("unique", {{DType::f16, {3}, {0.0, 5, -0.0}}}, unique_attrs(true, false, false));
    EXPECT_FALSE(std::signbit(positive_first[0].one().v[0]));
    const auto negative_first = evaluate("unique", {{DType::bf16, {3}, {-0.0, 5, 0.0}}}, unique_attrs(true, false, false));
    EXPECT_TRUE(std::signbit(negative_first[0].one().v[0]));
}

TEST(OpsLevel3L3d, UniqueOutputsFollowTheFlagsAndHaveCapacityNumel) {
    Problem p = problem_for("unique", {{DType::u8, {4, 6}, {}}}, unique_attrs(true, false, false));
    ASSERT_EQ(p.outputs.size(), 3u);
    EXPECT_TRUE(p.outputs[0].variable_length);
    EXPECT_EQ(p.outputs[0].tensors[0].shape, Shape{24});
    EXPECT_FALSE(p.outputs[1].present);
    EXPECT_FALSE(p.outputs[2].present);
    p = problem_for("unique", {{DType::i64, {4, 6}, {}}}, unique_attrs(true, true, true));
    EXPECT_TRUE(p.outputs[1].present && !p.outputs[1].variable_length);
    EXPECT_TRUE(p.outputs[2].present && p.outputs[2].variable_length);
    const auto ints_out = evaluate("unique", {{DType::i8, {6}, {5, -3, 5, 5, 0, -3}}}, unique_attrs(false, false, true));
    expect_same(ints_out[0].one().v, {5, -3, 0}, 3);
    expect_same(ints_out[2].one().v, {3, 2, 1}, 3);
}

TEST(OpsLevel3L3d, UniqueResolvesTheReferenceProtoWithTwoOutputs) {
    const std::string path = std::string(HB_SOURCE_DIR) + "/../shared/reference/cann-bench-tasks/level3/unique/proto.yaml";
    if (!std::ifstream(path)) GTEST_SKIP() << "no " << path;
    const Proto reference = load_proto(path, "unique", 3);
    const Problem p = resolve_problem(reference, op_named("unique"),
                                      case_for("unique", {{DType::f32, {8, 8}, {}}}, {{"return_inverse", AttrValue::of_bool(true)}}));
    ASSERT_EQ(p.outputs.size(), 2u);
    EXPECT_TRUE(p.outputs[1].present);
}

TEST(OpsLevel3L3d, UniqueHookPlantsBothZeros) {
    const Problem p = problem_for("unique", {{DType::f32, {500}, {}, true, ValueRange{1, 2}}}, unique_attrs(true, false, false));
    const auto in = generate_inputs(p, op_named("unique"), 0);
    int positive = 0, negative = 0;
    for (int i = 0; i < 500; ++i) {
        const double v = in.at(0).tensors.at(0).get(static_cast<std::size_t>(i));
        if (v == 0) (std::signbit(v) ? negative : positive)++;
    }
    EXPECT_EQ(positive, 1);
    EXPECT_EQ(negative, 1);
}

TEST(OpsLevel3L3d, UniqueSamplerCoversEveryFlagCombinationAndDtype) {
    const auto cases = generated_cases("unique");
    std::set<std::string> combos;
    for (const auto& c : cases) combos.insert(attrs_to_string(c.attrs));
    EXPECT_EQ(combos.size(), 8u);
    EXPECT_EQ(first_input_dtypes(cases), proto_dtypes("unique"));
}

// ------------------------------------------------------------------------------------ nms

// D (0,0,10,10) 0.95, A = D 0.9, B (1,1,11,11) 0.8 (IoU with D 81/119 = 0.68), C far 0.7.
std::vector<In> nms_inputs(std::vector<double> boxes, std::vector<double> scores) {
    const auto n = static_cast<std::int64_t>(scores.size());
    return {{DType::f32, {n, 4}, std::move(boxes)}, {DType::f32, {n}, std::move(scores)}};
}

const std::vector<double> nms_boxes = {0, 0, 10, 10, 1, 1, 11, 11, 20, 20, 30, 30, 0, 0, 10, 10};
const std::vector<double> nms_scores = {0.9, 0.8, 0.7, 0.95};

ValueArgs<double> nms(std::vector<In> in, double threshold) {
    return evaluate("nms", std::move(in), {{"iou_threshold", AttrValue::of_float(threshold)}});
}

TEST(OpsLevel3L3d, NmsKeepsInDescendingScoreOrder) {
    auto out = nms(nms_inputs(nms_boxes, nms_scores), 0.5);
    EXPECT_EQ(out[0].one().written_length, 2);
    expect_same(out[0].one().v, {3, 2}, 2);
    out = nms(nms_inputs(nms_boxes, nms_scores), 0.7);  // B's IoU 0.68 stays below
    EXPECT_EQ(out[0].one().written_length, 3);
    expect_same(out[0].one().v, {3, 1, 2}, 3);
}

TEST(OpsLevel3L3d, NmsKeepsABoxWhoseIoUEqualsTheThreshold) {
    // The IoU in the definition's fp64 order: at exactly that threshold the second box is
    // kept (IoU <= threshold), one ulp below it suppressed.
    // Boxes (0,0,10,10) and (1,1,10,10): areas 100 and 81, intersection 81.
    const std::vector<double> boxes = {0, 0, 10, 10, 1, 1, 10, 10};
    const double iou_b = 81.0 / (((100.0 + 81.0) - 81.0) + 1e-6);
    auto out = nms(nms_inputs(boxes, {0.9, 0.8}), iou_b);
    EXPECT_EQ(out[0].one().written_length, 2);
    out = nms(nms_inputs(boxes, {0.9, 0.8}), std::nextafter(iou_b, 0.0));
    EXPECT_EQ(out[0].one().written_length, 1);
    // All-zero boxes: IoU exactly 0, so threshold 0 keeps every box.
    out = nms(nms_inputs(std::vector<double>(12, 0.0), {0.1, 0.3, 0.2}), 0.0);
    EXPECT_EQ(out[0].one().written_length, 3);
    expect_same(out[0].one().v, {1, 2, 0});
}

TEST(OpsLevel3L3d, NmsSuppressesOnANaNIoU) {
    // A kept box suppresses a NaN box; a kept NaN box suppresses everything after it.
    // (0,0,1,1) kept, the NaN box suppressed by it, the disjoint (5,5,6,6) kept (IoU 0).
    auto out = nms(nms_inputs({0, 0, 1, 1, nan_value, nan_value, 2, 2, 5, 5, 6, 6}, {0.9, 0.8, 0.7}), 0.5);
    EXPECT_EQ(out[0].one().written_length, 2);
    expect_same(out[0].one().v, {0, 2}, 2);
    out = nms(nms_inputs({0, 0, 1, 1, nan_value, nan_value, 2, 2, 5, 5, 6, 6}, {0.5, 0.8, 0.7}), 0.5);
    EXPECT_EQ(out[0].one().written_length, 1);
    expect_same(out[0].one().v, {1}, 1);
}

TEST(OpsLevel3L3d, NmsRejectsBadShapes) {
    EXPECT_NE(error_of([] { problem_for("nms", {{DType::f32, {5, 3}, {}}, {DType::f32, {5}, {}}},
                                       {{"iou_threshold", AttrValue::of_float(0.5)}}); }).find("[n, 4]"),
              std::string::npos);
    EXPECT_NE(error_of([] { problem_for("nms", {{DType::f32, {5, 4}, {}}, {DType::f32, {4}, {}}},
                                       {{"iou_threshold", AttrValue::of_float(0.5)}}); }).find("one per box"),
              std::string::npos);
    const Problem p = problem_for("nms", {{DType::f32, {5, 4}, {}}, {DType::f32, {5}, {}}}, {{"iou_threshold", AttrValue::of_float(0.5)}});
    EXPECT_TRUE(p.outputs[0].variable_length);
    EXPECT_EQ(p.outputs[0].tensors[0].shape, Shape{5});
}

TEST(OpsLevel3L3d, NmsHookOrdersCornersAndMakesScoresDistinct) {
    const Problem p = problem_for("nms", {{DType::f32, {300, 4}, {}, true, ValueRange{0, 0}}, {DType::f32, {300}, {}, true, ValueRange{0, 0}}},
                                  {{"iou_threshold", AttrValue::of_float(0.0)}});
    const auto in = generate_inputs(p, op_named("nms"), 0);
    std::set<double> scores;
    for (int i = 0; i < 300; ++i) scores.insert(in.at(1).tensors.at(0).get(static_cast<std::size_t>(i)));
    EXPECT_EQ(scores.size(), 300u);
    const Problem q = problem_for("nms", {{DType::f32, {300, 4}, {}, true, ValueRange{-5, 5}}, {DType::f32, {300}, {}, true, ValueRange{-5, 5}}},
                                  {{"iou_threshold", AttrValue::of_float(0.5)}});
    const auto inputs = generate_inputs(q, op_named("nms"), 0);
    const Tensor& b = inputs.at(0).tensors.at(0);
    for (int i = 0; i < 300; ++i) {
        ASSERT_LE(b.get(static_cast<std::size_t>(4 * i)), b.get(static_cast<std::size_t>(4 * i + 2)));
        ASSERT_LE(b.get(static_cast<std::size_t>(4 * i + 1)), b.get(static_cast<std::size_t>(4 * i + 3)));
    }
}

TEST(OpsLevel3L3d, NmsCasesUseTheScaledProfileAndTheZeroTie) {
    const auto cases = generated_cases("nms");
    std::set<double> thresholds;
    for (const auto& c : cases) {
        const auto n = c.inputs.at(0).shapes.at(0).at(0);
        EXPECT_GE(n, 2000);
        EXPECT_LE(n, 8000);
        thresholds.insert(c.attrs.at("iou_threshold").f);
        if (c.inputs.at(0).range && c.inputs.at(0).range->lo == 0 && c.inputs.at(0).range->hi == 0) {
            EXPECT_EQ(c.attrs.at("iou_threshold").f, 0.0);
        }
    }
    EXPECT_GE(thresholds.size(), 10u);
}

}  // namespace
}  // namespace hb
