// Level-2 normalization operators softmax, rms_norm and group_norm: goldens against
// hand-computed values on every attribute path, special values, output inference and its
// errors, work models, and case sampling through the generator.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/case_sampler.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

const double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();

// hapbench's own protos (suite/level2/<op>/proto.yaml).
Proto proto_for(const std::string& op) {
    return load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op + "/proto.yaml", op, 2);
}

const Operator& op_named(const std::string& name) {
    const Operator* op = find_operator(name);
    if (!op) throw Error("operator " + name + " is not registered");
    return *op;
}

struct In {
    Shape shape;
    std::vector<double> values;
    DType dtype = DType::f32;
};

Problem problem_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs) {
    const Proto proto = proto_for(op);
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
    return resolve_problem(proto, op_named(op), c);
}

std::vector<double> evaluate(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {},
                             bool same_precision = false) {
    const Problem p = problem_for(op, inputs, std::move(attrs));
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = p.inputs[k].name;
        in[k].tensors.push_back({TensorSpec{inputs[k].dtype, inputs[k].shape}, inputs[k].values});
    }
    ValueArgs<double> out = values_for_specs<double>(p.outputs);
    if (same_precision) op_named(op).same_precision(p, in, out);
    else op_named(op).golden(p, in, out);
    return out.at(0).one().v;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected, double rel = 1e-12) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        else if (std::isinf(expected[i])) EXPECT_EQ(got[i], expected[i]) << "element " << i;
        else EXPECT_NEAR(got[i], expected[i], rel * std::fabs(expected[i]) + 1e-300) << "element " << i;
    }
}

AttrMap dim(std::int64_t d) { return {{"dim", AttrValue::of_int(d)}}; }

// ---- softmax -------------------------------------------------------------------------------

TEST(OpsLevel2Norm, SoftmaxLastDimByDefault) {
    // e^0, e^1, e^2 over their sum; and a row of equal values.
    const double s = 1 + std::exp(1.0) + std::exp(2.0);
    expect_values(evaluate("softmax", {{{2, 3}, {0, 1, 2, 5, 5, 5}}}),
                  {1 / s, std::exp(1.0) / s, std::exp(2.0) / s, 1.0 / 3, 1.0 / 3, 1.0 / 3});
    expect_values(evaluate("softmax", {{{2, 3}, {0, 1, 2, 5, 5, 5}}}, dim(-1)),
                  evaluate("softmax", {{{2, 3}, {0, 1, 2, 5, 5, 5}}}, dim(1)));
}

TEST(OpsLevel2Norm, SoftmaxAlongDimZeroAndNegativeNonLastDims) {
    // [2, 3] along dim 0: each column normalized over its two entries.
    const double a = 1 / (1 + std::exp(5.0)), b = 1 - a;
    expect_values(evaluate("softmax", {{{2, 3}, {0, 1, 2, 5, 6, 7}}}, dim(0)), {a, a, a, b, b, b});
    expect_values(evaluate("softmax", {{{2, 3}, {0, 1, 2, 5, 6, 7}}}, dim(-2)), {a, a, a, b, b, b});
    // [2, 2, 2] along the middle dim: pairs (x[i,0,k], x[i,1,k]) = (0, 2), (0, 2), (1, 1), (3, 3).
    const double c = 1 / (1 + std::exp(2.0));
    expect_values(evaluate("softmax", {{{2, 2, 2}, {0, 0, 2, 2, 1, 3, 1, 3}}}, dim(1)),
                  {c, c, 1 - c, 1 - c, 0.5, 0.5, 0.5, 0.5});
}

TEST(OpsLevel2Norm, SoftmaxSubtractsTheMaxSoHugeInputsDoNotOverflow) {
    expect_values(evaluate("softmax", {{{3}, {1e4, 1e4, -1e4}}}), {0.5, 0.5, 0});
    expect_values(evaluate("softmax", {{{3}, {1e4, 1e4, -1e4}}}, {}, true), {0.5, 0.5, 0});
}

TEST(OpsLevel2Norm, SoftmaxSpecialValuesFollowTorch) {
    // -inf among finite values weighs 0; +inf or NaN anywhere, or only -inf, makes the slice NaN.
    expect_values(evaluate("softmax", {{{2}, {-inf, 0}}}), {0, 1});
    expect_values(evaluate("softmax", {{{3}, {1, inf, 0}}}), {nan, nan, nan});
    expect_values(evaluate("softmax", {{{3}, {1, nan, 0}}}), {nan, nan, nan});
    expect_values(evaluate("softmax", {{{2}, {-inf, -inf}}}), {nan, nan});
    // Other slices are untouched.
    expect_values(evaluate("softmax", {{{2, 2}, {nan, 0, 0, 0}}}), {nan, nan, 0.5, 0.5});
}

TEST(OpsLevel2Norm, SoftmaxSamePrecisionRoundsToTheCaseDtype) {
    const auto out = evaluate("softmax", {{{3}, {0, 1, 2}, DType::f16}}, {}, true);
    const double s = 1 + std::exp(1.0) + std::exp(2.0);
    EXPECT_EQ(out[2], round_to_dtype(std::exp(2.0) / s, DType::f16));
}

TEST(OpsLevel2Norm, SoftmaxRejectsABadDimAndA0dInput) {
    EXPECT_THROW(problem_for("softmax", {{{2, 3}, {}}}, dim(2)), Error);
    EXPECT_THROW(problem_for("softmax", {{{2, 3}, {}}}, dim(-3)), Error);
    EXPECT_THROW(problem_for("softmax", {{{}, {}}}, {}), Error);
    const Problem p = problem_for("softmax", {{{4, 5, 6}, {}, DType::bf16}}, dim(1));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{4, 5, 6}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::bf16);
}

double vector_elements(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

TEST(OpsLevel2Norm, SoftmaxWorkModelCountsOneExpPerElementAndSlices) {
    const Problem p = problem_for("softmax", {{{4, 5, 6}, {}}}, dim(1));
    const WorkModel w = op_named("softmax").work(p);
    EXPECT_EQ(w.bytes_read, 120 * 4);
    EXPECT_EQ(w.bytes_written, 120 * 4);
    EXPECT_EQ(vector_elements(w, OpClass::exp), 120);
    EXPECT_EQ(vector_elements(w, OpClass::div), 24);  // one reciprocal per slice
    EXPECT_EQ(w.parallel_items, 24);
}

// ---- rms_norm ------------------------------------------------------------------------------

TEST(OpsLevel2Norm, RmsNormOverTheLastDim) {
    // Row [3, 4]: mean square 12.5; row [1, -1]: 1. gamma [2, 0.5]; epsilon 0 and default.
    const AttrMap no_eps = {{"epsilon", AttrValue::of_float(0)}};
    const double r = 1 / std::sqrt(12.5);
    expect_values(evaluate("rms_norm", {{{2, 2}, {3, 4, 1, -1}}, {{2}, {2, 0.5}}}, no_eps),
                  {3 * r * 2, 4 * r * 0.5, 2, -0.5});
    const double r_eps = 1 / std::sqrt(12.5 + 1e-6);  // default epsilon 1e-6
    expect_values(evaluate("rms_norm", {{{1, 2}, {3, 4}}, {{2}, {1, 1}}}), {3 * r_eps, 4 * r_eps});
}

TEST(OpsLevel2Norm, RmsNormOverSeveralTrailingDims) {
    // gamma [2, 2] normalizes each [2, 2] block of x [2, 2, 2] as one row of 4.
    const std::vector<double> x = {1, 1, 1, 1, 2, 0, 0, 0};
    const AttrMap eps = {{"epsilon", AttrValue::of_float(0)}};
    expect_values(evaluate("rms_norm", {{{2, 2, 2}, x}, {{2, 2}, {1, 2, 3, 4}}}, eps), {1, 2, 3, 4, 2, 0, 0, 0});
    // Epsilon matters where the mean square is small: x = 0 gives 0, not NaN.
    expect_values(evaluate("rms_norm", {{{1, 2}, {0, 0}}, {{2}, {1, 1}}}, {{"epsilon", AttrValue::of_float(1e-3)}}),
                  {0, 0});
}

TEST(OpsLevel2Norm, RmsNormSpecialValues) {
    // inf in a row: mean square inf, finite entries become 0, inf / inf is NaN.
    expect_values(evaluate("rms_norm", {{{2, 2}, {inf, 1, 1, 1}}, {{2}, {1, 1}}}), {nan, 0, 1 / std::sqrt(1 + 1e-6),
                                                                                    1 / std::sqrt(1 + 1e-6)});
    expect_values(evaluate("rms_norm", {{{1, 2}, {nan, 1}}, {{2}, {1, 1}}}), {nan, nan});
}

TEST(OpsLevel2Norm, RmsNormShapeErrors) {
    EXPECT_THROW(problem_for("rms_norm", {{{4, 6}, {}}, {{5}, {}}}, {}), Error);       // last dim differs
    EXPECT_THROW(problem_for("rms_norm", {{{4, 6}, {}}, {{3, 4, 6}, {}}}, {}), Error);  // more dims than x
    EXPECT_THROW(problem_for("rms_norm", {{{4, 6}, {}}, {{}, {}}}, {}), Error);        // 0-d gamma
    EXPECT_THROW(problem_for("rms_norm", {{{4, 6}, {}}, {{6}, {}}}, {{"epsilon", AttrValue::of_float(-1)}}), Error);
    EXPECT_NO_THROW(problem_for("rms_norm", {{{3, 4, 6}, {}}, {{4, 6}, {}}}, {}));
    const WorkModel w = op_named("rms_norm").work(problem_for("rms_norm", {{{3, 4, 6}, {}}, {{4, 6}, {}}}, {}));
    EXPECT_EQ(w.parallel_items, 3);
    EXPECT_EQ(w.bytes_read, (72 + 24) * 4);
}

// ---- group_norm ----------------------------------------------------------------------------

AttrMap groups(std::int64_t g, double epsilon = 0) {
    return {{"num_groups", AttrValue::of_int(g)}, {"epsilon", AttrValue::of_float(epsilon)}};
}

TEST(OpsLevel2Norm, GroupNormTwoGroupsWithSpatialPositions) {
    // x [1, 4, 2]: group 0 = channels 0-1 = {1, 3, 5, 7} (mean 4, var 5), group 1 = {0, 0, 2, 2}
    // (mean 1, var 1). gamma [1, 2, 1, -1], beta [0, 0, 10, 0].
    const std::vector<double> x = {1, 3, 5, 7, 0, 0, 2, 2};
    const double r = 1 / std::sqrt(5.0);
    expect_values(evaluate("group_norm", {{{1, 4, 2}, x}, {{4}, {1, 2, 1, -1}}, {{4}, {0, 0, 10, 0}}}, groups(2)),
                  {-3 * r, -1 * r, 2 * r, 6 * r, 9, 9, -1, -1});
}

TEST(OpsLevel2Norm, GroupNormOneGroupAndOneGroupPerChannel) {
    const std::vector<double> x = {1, 3, 5, 7};  // [1, 2, 2]
    const std::vector<double> ones = {1, 1}, zeros = {0, 0};
    // One group: mean 4, var 5 over all four.
    const double r = 1 / std::sqrt(5.0);
    expect_values(evaluate("group_norm", {{{1, 2, 2}, x}, {{2}, ones}, {{2}, zeros}}, groups(1)),
                  {-3 * r, -1 * r, r, 3 * r});
    // Two groups of one channel (instance norm): each pair is (-1, 1) with epsilon 0.
    expect_values(evaluate("group_norm", {{{1, 2, 2}, x}, {{2}, ones}, {{2}, zeros}}, groups(2)), {-1, 1, -1, 1});
    // Epsilon: var 1 + 3 -> rstd 1/2; default epsilon 1e-5 when left out.
    expect_values(evaluate("group_norm", {{{1, 2, 2}, x}, {{2}, ones}, {{2}, zeros}}, groups(2, 3)),
                  {-0.5, 0.5, -0.5, 0.5});
    expect_values(
        evaluate("group_norm", {{{1, 2, 2}, x}, {{2}, ones}, {{2}, zeros}}, {{"num_groups", AttrValue::of_int(2)}}),
        std::vector<double>{-1, 1, -1, 1}, 1e-5);
}

TEST(OpsLevel2Norm, GroupNormTwoSamplesRank2AndNan) {
    // x [2, 2] (no spatial dims), one group: each sample normalized on its own.
    expect_values(evaluate("group_norm", {{{2, 2}, {0, 2, 5, 5}}, {{2}, {1, 1}}, {{2}, {0, 0}}}, groups(1, 0)),
                  {-1, 1, nan, nan});  // var 0 with epsilon 0: 0/0
    expect_values(evaluate("group_norm", {{{2, 2}, {nan, 2, 5, 7}}, {{2}, {1, 1}}, {{2}, {0, 0}}}, groups(1, 0)),
                  {nan, nan, -1, 1});
}

TEST(OpsLevel2Norm, GroupNormShapeErrors) {
    EXPECT_THROW(problem_for("group_norm", {{{2, 6, 3}, {}}, {{6}, {}}, {{6}, {}}}, groups(4)), Error);  // 4 ∤ 6
    EXPECT_THROW(problem_for("group_norm", {{{2, 6, 3}, {}}, {{6}, {}}, {{6}, {}}}, groups(0)), Error);
    EXPECT_THROW(problem_for("group_norm", {{{2, 6, 3}, {}}, {{3}, {}}, {{6}, {}}}, groups(3)), Error);  // gamma
    EXPECT_THROW(problem_for("group_norm", {{{2, 6, 3}, {}}, {{6}, {}}, {{6, 1}, {}}}, groups(3)), Error);  // beta
    EXPECT_THROW(problem_for("group_norm", {{{6}, {}}, {{6}, {}}, {{6}, {}}}, groups(3)), Error);  // rank 1
    const Problem p = problem_for("group_norm", {{{2, 6, 3}, {}}, {{6}, {}}, {{6}, {}}}, groups(3));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{2, 6, 3}));
    EXPECT_EQ(op_named("group_norm").work(p).parallel_items, 36);  // groups split over cores: the elements
}

// ---- case sampling -------------------------------------------------------------------------

std::vector<CaseSpec> generated_cases(const std::string& name, int count) {
    const Proto proto = proto_for(name);
    const auto cases = generate_cases(op_named(name), proto, profile_by_name("cpu"), 20260101, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(proto, op_named(name), c)) << name << " case " << c.case_id;
    return cases;
}

std::set<DType> first_dtypes(const std::vector<CaseSpec>& cases) {
    std::set<DType> s;
    for (const auto& c : cases) s.insert(c.inputs.at(0).dtype);
    return s;
}

const std::set<DType> all_float = {DType::f16, DType::bf16, DType::f32};

TEST(OpsLevel2Norm, SoftmaxCasesCoverEveryKindOfDim) {
    const auto cases = generated_cases("softmax", 20);
    std::set<std::int64_t> dims;
    for (const auto& c : cases) dims.insert(c.attrs.at("dim").i);
    EXPECT_EQ(dims, (std::set<std::int64_t>{-3, -2, -1, 0, 1, 2, 3}));
    EXPECT_EQ(first_dtypes(cases), all_float);
}

TEST(OpsLevel2Norm, RmsNormCasesCoverSeveralNormalizedDimsAndEpsilons) {
    const auto cases = generated_cases("rms_norm", 20);
    std::set<std::size_t> normalized;
    std::set<double> epsilons;
    for (const auto& c : cases) {
        const Shape& x = c.inputs.at(0).shapes.at(0);
        const Shape& gamma = c.inputs.at(1).shapes.at(0);
        EXPECT_LT(gamma.size(), x.size());
        EXPECT_TRUE(std::equal(gamma.begin(), gamma.end(), x.end() - static_cast<std::ptrdiff_t>(gamma.size())));
        normalized.insert(gamma.size());
        epsilons.insert(c.attrs.at("epsilon").f);
    }
    EXPECT_EQ(normalized, (std::set<std::size_t>{1, 2, 3}));
    EXPECT_EQ(epsilons.size(), 7u);
    EXPECT_EQ(first_dtypes(cases), all_float);
}

TEST(OpsLevel2Norm, GroupNormCasesCoverSeveralGroupCountsThatDivideC) {
    const auto cases = generated_cases("group_norm", 20);
    std::set<std::int64_t> group_counts;
    for (const auto& c : cases) {
        const std::int64_t g = c.attrs.at("num_groups").i;
        EXPECT_EQ(c.inputs.at(0).shapes.at(0).at(1) % g, 0);
        group_counts.insert(g);
        // Special values go into x only; gamma and beta stay finite then.
        const auto& range = *c.inputs.at(0).range;
        if (std::isnan(range.lo) || std::isinf(range.lo)) {
            EXPECT_EQ(*c.inputs.at(1).range, (ValueRange{-1, 1}));
        }
    }
    EXPECT_EQ(group_counts, (std::set<std::int64_t>{1, 2, 3, 4, 6, 8, 16, 32}));
    EXPECT_EQ(first_dtypes(cases), all_float);
}

TEST(OpsLevel2Norm, NormBoundaryRangesKeepSquaresFiniteInFp32) {
    for (const char* name : {"rms_norm", "group_norm"}) {
        EXPECT_EQ(op_named(name).boundary_range(DType::f16), (ValueRange{-65504, 65504}));
        const ValueRange r = op_named(name).boundary_range(DType::f32);
        EXPECT_LT(r.hi * r.hi * 1e6, 3.4e38) << name;
    }
}

}  // namespace
}  // namespace hb
