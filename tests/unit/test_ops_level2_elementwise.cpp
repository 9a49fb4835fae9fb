// Level-2 operators maximum, apply_adam_w, gcd and dynamic_quant: goldens against
// hand-computed values on every attribute path, output inference and its errors, work
// models, and case sampling through the hidden-split generator.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "ops/broadcast.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/case_sampler.hpp"
#include "suite/profile.hpp"
#include "suite/proto.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

// hapbench's own interface files (suite/level2/<op>/proto.yaml).
Proto proto_for(const std::string& op) {
    return load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op + "/proto.yaml", op, 2);
}

const Operator& op_named(const std::string& name) {
    const Operator* op = find_operator(name);
    if (!op) throw Error("operator " + name + " is not registered");
    return *op;
}

struct TensorInput {
    DType dtype;
    Shape shape;
    std::vector<double> values;
};

CaseSpec case_for(const Proto& proto, const std::vector<TensorInput>& inputs, AttrMap attrs) {
    CaseSpec c;
    c.op = proto.op;
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

Problem problem_for(const std::string& op, const std::vector<TensorInput>& inputs, AttrMap attrs = {}) {
    const Proto proto = proto_for(op);
    return resolve_problem(proto, op_named(op), case_for(proto, inputs, std::move(attrs)));
}

// Every output of the golden (or of the same-precision reference).
ValueArgs<double> evaluate_all(const std::string& op_name, const std::vector<TensorInput>& inputs, AttrMap attrs = {},
                               bool same_precision = false) {
    const Operator& op = op_named(op_name);
    const Proto proto = proto_for(op_name);
    const Problem problem = resolve_problem(proto, op, case_for(proto, inputs, std::move(attrs)));
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = proto.inputs[k].name;
        in[k].tensors.push_back({TensorSpec{inputs[k].dtype, inputs[k].shape}, inputs[k].values});
    }
    ValueArgs<double> out = values_for_specs<double>(problem.outputs);
    if (same_precision) op.same_precision(problem, in, out);
    else op.golden(problem, in, out);
    return out;
}

std::vector<double> evaluate(const std::string& op_name, const std::vector<TensorInput>& inputs, AttrMap attrs = {},
                             bool same_precision = false) {
    return evaluate_all(op_name, inputs, std::move(attrs), same_precision).at(0).one().v;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected, double rel = 1e-14) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        } else if (std::isinf(expected[i])) {
            EXPECT_EQ(got[i], expected[i]) << "element " << i;
        } else {
            EXPECT_NEAR(got[i], expected[i], rel * std::fabs(expected[i])) << "element " << i;
        }
    }
}

double vector_elements(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

// Draws `count` cases through the generator; every one must resolve.
std::vector<CaseSpec> generated_cases(const std::string& name, int count, std::uint64_t seed = 20260101) {
    const Proto proto = proto_for(name);
    const auto cases = generate_cases(op_named(name), proto, profile_by_name("cpu"), seed, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(proto, op_named(name), c)) << name << " case " << c.case_id;
    return cases;
}

// ---- broadcasting ------------------------------------------------------------------------

TEST(OpsLevel2Elementwise, BroadcastShapesFollowNumpyRules) {
    EXPECT_EQ(broadcast_shapes({3, 1, 5}, {4, 5}, ""), (Shape{3, 4, 5}));
    EXPECT_EQ(broadcast_shapes({1}, {2, 3}, ""), (Shape{2, 3}));
    EXPECT_EQ(broadcast_shapes({}, {2}, ""), (Shape{2}));
    EXPECT_EQ(broadcast_shapes({2, 1}, {1, 0}, ""), (Shape{2, 0}));
    try {
        broadcast_shapes({3, 4}, {5, 4}, "maximum case 1: ");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("[3, 4] and [5, 4] do not broadcast"), std::string::npos) << e.what();
    }
}

TEST(OpsLevel2Elementwise, BroadcastPlanMergesDimsThatBroadcastAlike) {
    const BroadcastPlan same({4, 5, 6}, {4, 5, 6});
    EXPECT_EQ(same.rows(), 1);
    EXPECT_EQ(same.row_length(), 120);
    const BroadcastPlan mid({2, 3, 5, 1024, 256}, {1, 1, 1, 1024, 1});
    EXPECT_EQ(mid.row_length(), 256);
    EXPECT_EQ(mid.rows(), 30 * 1024);
    EXPECT_EQ(mid.inner_stride_a(), 1);
    EXPECT_EQ(mid.inner_stride_b(), 0);
    std::int64_t a = 0, b = 0;
    mid.row_offsets(1024 + 7, a, b);  // outer index 1, middle index 7
    EXPECT_EQ(a, (1024 + 7) * 256);
    EXPECT_EQ(b, 7);
    const BroadcastPlan both({3, 1}, {4});
    EXPECT_EQ(both.rows(), 3);
    both.row_offsets(2, a, b);
    EXPECT_EQ(a, 2);
    EXPECT_EQ(b, 0);
    EXPECT_EQ(both.inner_stride_a(), 0);
}

// ---- maximum -----------------------------------------------------------------------------

TEST(OpsLevel2Elementwise, MaximumOfEqualShapesPropagatesNan) {
    const Shape s{6};
    expect_values(evaluate("maximum", {{DType::f32, s, {1, -2, NAN, 3, -INFINITY, 0.5}},
                                       {DType::f32, s, {0, -1, 4, NAN, -5, INFINITY}}}),
                  {1, -1, NAN, NAN, -5, INFINITY});
}

TEST(OpsLevel2Elementwise, MaximumBroadcastsInBothDirections) {
    // x1 [2,1] against x2 [3]: y [2,3].
    expect_values(evaluate("maximum", {{DType::i32, {2, 1}, {0, 5}}, {DType::i32, {3}, {-1, 3, 7}}}),
                  {0, 3, 7, 5, 5, 7});
    // x1 [3] (missing leading dim) against x2 [2,3].
    expect_values(evaluate("maximum", {{DType::bf16, {3}, {1, 2, 3}}, {DType::bf16, {2, 3}, {0, 4, 0, 9, 0, 5}}}),
                  {1, 4, 3, 9, 2, 5});
    // Innermost broadcast: x2 [2,1].
    expect_values(evaluate("maximum", {{DType::i8, {2, 3}, {-128, 0, 127, 1, 2, 3}}, {DType::i8, {2, 1}, {-1, 2}}}),
                  {-1, 0, 127, 2, 2, 3});
}

TEST(OpsLevel2Elementwise, MaximumKeepsLargeInt64ValuesExact) {
    const double big = 4611686018427387904.0;  // 2^62
    expect_values(evaluate("maximum", {{DType::i64, {3}, {-big, big, 5}}, {DType::i64, {1}, {-big + 1024}}}),
                  {-big + 1024, big, 5}, 0);
}

TEST(OpsLevel2Elementwise, MaximumOutputInferenceAndErrors) {
    const Problem p = problem_for("maximum", {{DType::f16, {4, 1, 3}, {}}, {DType::f16, {5, 1}, {}}});
    ASSERT_EQ(p.outputs.size(), 1u);
    EXPECT_EQ(p.outputs[0].tensors.at(0).shape, (Shape{4, 5, 3}));
    EXPECT_EQ(p.outputs[0].tensors.at(0).dtype, DType::f16);
    EXPECT_THROW(problem_for("maximum", {{DType::f32, {4, 3}, {}}, {DType::f32, {4, 2}, {}}}), Error);
    EXPECT_THROW(problem_for("maximum", {{DType::f32, {4}, {}}, {DType::i32, {4}, {}}}), Error);
}

TEST(OpsLevel2Elementwise, MaximumWorkReadsEachInputOnce) {
    const Problem p = problem_for("maximum", {{DType::f32, {10, 20}, {}}, {DType::f32, {20}, {}}});
    const WorkModel w = op_named("maximum").work(p);
    EXPECT_EQ(w.bytes_read, 200 * 4 + 20 * 4);
    EXPECT_EQ(w.bytes_written, 200 * 4);
    EXPECT_EQ(vector_elements(w, OpClass::cmp), 400);  // the max and the NaN test
    EXPECT_EQ(vector_elements(w, OpClass::select), 200);
    const WorkModel wi = op_named("maximum").work(problem_for("maximum", {{DType::i8, {10}, {}}, {DType::i8, {10}, {}}}));
    EXPECT_EQ(vector_elements(wi, OpClass::cmp), 10);
    EXPECT_EQ(vector_elements(wi, OpClass::select), 0);
}

TEST(OpsLevel2Elementwise, MaximumCasesCoverEveryDtypeAndBroadcastDirection) {
    std::set<DType> dtypes;
    bool same = false, x1_broadcast = false, x2_broadcast = false, both = false, missing_dims = false, inner = false;
    for (const auto& c : generated_cases("maximum", 20)) {
        const Shape& a = c.inputs.at(0).shapes.at(0);
        const Shape& b = c.inputs.at(1).shapes.at(0);
        EXPECT_EQ(c.inputs.at(0).dtype, c.inputs.at(1).dtype);
        dtypes.insert(c.inputs.at(0).dtype);
        const Shape y = broadcast_shapes(a, b, "");
        const bool a_full = a == y, b_full = b == y;
        same = same || (a_full && b_full);
        x1_broadcast = x1_broadcast || (!a_full && b_full);
        x2_broadcast = x2_broadcast || (a_full && !b_full);
        both = both || (!a_full && !b_full);
        missing_dims = missing_dims || a.size() != b.size();
        inner = inner || (b.back() == 1 && a.back() != 1);
    }
    EXPECT_EQ(dtypes.size(), 6u);
    EXPECT_TRUE(same && x1_broadcast && x2_broadcast && both && missing_dims && inner);
}

TEST(OpsLevel2Elementwise, MaximumInt64BoundaryIsATypeBoundaryRange) {
    const ValueRange r = op_named("maximum").boundary_range(DType::i64);
    EXPECT_EQ(classify_range(r, DType::i64), RangeGroup::type_boundary);
    EXPECT_EQ(r.hi, 4611686018427387904.0);
}

}  // namespace
}  // namespace hb
