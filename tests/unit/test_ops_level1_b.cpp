// foreach_addcdiv_scalar, foreach_norm and swi_glu: goldens against hand-computed values,
// shape inference, and case generation for the cpu profile.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/profile.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

const std::vector<DType> float_dtypes = {DType::f32, DType::f16, DType::bf16};
const double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();

InputDef input_def(const std::string& name, bool is_list) {
    InputDef d;
    d.name = name;
    d.dtypes = float_dtypes;
    d.is_list = is_list;
    return d;
}

OutputDef output_def(const std::string& name) {
    OutputDef d;
    d.name = name;
    d.dtypes = float_dtypes;
    return d;
}

AttrDef attr_def(const std::string& name, AttrType type, bool required, std::optional<AttrValue> default_value = {}) {
    AttrDef d;
    d.name = name;
    d.type = type;
    d.required = required;
    d.default_value = default_value;
    return d;
}

// The interfaces of the reference proto.yaml files, written out here so that the tests do
// not depend on files outside the repository.
Proto addcdiv_proto() {
    Proto p;
    p.op = "foreach_addcdiv_scalar";
    p.level = 1;
    p.attrs = {attr_def("scalar", AttrType::f, true)};
    p.inputs = {input_def("x1", true), input_def("x2", true), input_def("x3", true)};
    p.outputs = {output_def("y")};
    p.tau_overrides = {{DType::f32, 5e-3}, {DType::f16, 1e-2}, {DType::bf16, 1e-2}};
    return p;
}

Proto norm_proto() {
    Proto p;
    p.op = "foreach_norm";
    p.level = 1;
    p.attrs = {attr_def("scalar", AttrType::f, true)};
    p.inputs = {input_def("x", true)};
    p.outputs = {output_def("y")};
    return p;
}

Proto swi_glu_proto() {
    Proto p;
    p.op = "swi_glu";
    p.level = 1;
    p.attrs = {attr_def("dim", AttrType::i, false, AttrValue::of_int(-1))};
    p.inputs = {input_def("input", false)};
    p.outputs = {output_def("output")};
    return p;
}

CaseInput case_input(std::vector<Shape> shapes, bool is_list, DType dtype = DType::f32) {
    CaseInput in;
    in.is_list = is_list;
    in.shapes = std::move(shapes);
    in.dtype = dtype;
    return in;
}

CaseSpec case_spec(const std::string& op, std::vector<CaseInput> inputs, AttrMap attrs) {
    CaseSpec c;
    c.op = op;
    c.case_id = 1;
    c.inputs = std::move(inputs);
    c.attrs = std::move(attrs);
    return c;
}

const Operator& op_named(const std::string& name) {
    const Operator* op = find_operator(name);
    if (!op) throw Error("operator " + name + " is not registered");
    return *op;
}

// Runs the fp64 golden of `problem` on inputs given as one value vector per tensor.
ValueArgs<double> run_golden(const Operator& op, const Problem& problem,
                             const std::vector<std::vector<std::vector<double>>>& values) {
    ValueArgs<double> in = values_for_specs<double>(problem.inputs);
    for (std::size_t a = 0; a < values.size(); ++a)
        for (std::size_t t = 0; t < values[a].size(); ++t) in[a].tensors.at(t).v = values[a][t];
    ValueArgs<double> out = values_for_specs<double>(problem.outputs);
    op.golden(problem, in, out);
    return out;
}

// silu(v) = v / (1 + e^-v) at the points the tests use.
const double silu_1 = 0.7310585786300049;
const double silu_minus_1 = -0.2689414213699951;
const double silu_2 = 1.7615941559557649;

// --- foreach_addcdiv_scalar ---------------------------------------------------------

TEST(ForeachAddcdivScalar, GoldenOnTwoMemberLists) {
    const Proto proto = addcdiv_proto();
    const auto& op = op_named("foreach_addcdiv_scalar");
    const std::vector<Shape> shapes = {{2}, {1, 3}};
    const Problem p = resolve_problem(proto, op, case_spec("foreach_addcdiv_scalar",
                                                           {case_input(shapes, true), case_input(shapes, true),
                                                            case_input(shapes, true)},
                                                           {{"scalar", AttrValue::of_float(0.5)}}));
    const auto out = run_golden(op, p,
                                {{{1, 2}, {0, -1, 3}}, {{4, 6}, {1, 2, -8}}, {{2, -3}, {4, 0.5, 2}}});
    ASSERT_EQ(out[0].tensors.size(), 2u);
    EXPECT_EQ(out[0].tensors[0].v, (std::vector<double>{1 + 0.5 * 4 / 2, 2 + 0.5 * 6 / -3}));
    EXPECT_EQ(out[0].tensors[1].v, (std::vector<double>{0 + 0.5 * 1 / 4, -1 + 0.5 * 2 / 0.5, 3 + 0.5 * -8 / 2}));
    EXPECT_EQ(p.outputs[0].tensors[1].shape, (Shape{1, 3}));
    EXPECT_TRUE(p.outputs[0].is_list);
}

TEST(ForeachAddcdivScalar, MismatchedListsAreRejected) {
    const Proto proto = addcdiv_proto();
    const auto& op = op_named("foreach_addcdiv_scalar");
    const AttrMap attrs = {{"scalar", AttrValue::of_float(1)}};
    EXPECT_THROW(resolve_problem(proto, op, case_spec("foreach_addcdiv_scalar",
                                                      {case_input({{2}, {3}}, true), case_input({{2}}, true),
                                                       case_input({{2}, {3}}, true)}, attrs)),
                 Error);
    EXPECT_THROW(resolve_problem(proto, op, case_spec("foreach_addcdiv_scalar",
                                                      {case_input({{2}}, true), case_input({{2}}, true),
                                                       case_input({{3}}, true)}, attrs)),
                 Error);
}

// --- foreach_norm -------------------------------------------------------------------

double norm_of(const std::vector<double>& x, double order) {
    const Proto proto = norm_proto();
    const auto& op = op_named("foreach_norm");
    const Problem p = resolve_problem(proto, op, case_spec("foreach_norm", {case_input({{static_cast<std::int64_t>(x.size())}}, true)},
                                                           {{"scalar", AttrValue::of_float(order)}}));
    return run_golden(op, p, {{x}})[0].tensors.at(0).v.at(0);
}

TEST(ForeachNorm, EveryOrderMatchesHandComputedValues) {
    EXPECT_DOUBLE_EQ(norm_of({3, -4}, 2), 5);
    EXPECT_DOUBLE_EQ(norm_of({3, -4, 0}, 1), 7);
    EXPECT_DOUBLE_EQ(norm_of({3, -4, 1}, inf), 4);
    EXPECT_DOUBLE_EQ(norm_of({3, -4, -1.5}, -inf), 1.5);
    EXPECT_DOUBLE_EQ(norm_of({0, 3, 0, -4, 0.25}, 0), 3);
    EXPECT_DOUBLE_EQ(norm_of({1, -4}, 0.5), 9);        // (1 + 2)^2
    EXPECT_DOUBLE_EQ(norm_of({2, -2}, -1), 1);         // (1/2 + 1/2)^-1
    EXPECT_DOUBLE_EQ(norm_of({1, -2, 2}, 3), std::cbrt(17.0));
    EXPECT_DOUBLE_EQ(norm_of({0, 0}, 2), 0);
    EXPECT_DOUBLE_EQ(norm_of({0, 2}, -1), 0);          // |0|^-1 = inf, inf^-1 = 0 (torch)
}

TEST(ForeachNorm, NanMemberGivesNanExceptForTheNonZeroCount) {
    for (double order : {1.0, 2.0, 0.5, -1.0, inf, -inf})
        EXPECT_TRUE(std::isnan(norm_of({1, nan, -2}, order))) << "order " << order;
    // torch.linalg.vector_norm(ord=0) counts x != 0, and NaN != 0.
    EXPECT_DOUBLE_EQ(norm_of({1, nan, 0}, 0), 2);
}

TEST(ForeachNorm, OutputsAreZeroDimensionalPerMemberInTheInputDtype) {
    const Proto proto = norm_proto();
    const auto& op = op_named("foreach_norm");
    const Problem p = resolve_problem(proto, op, case_spec("foreach_norm", {case_input({{4, 5}, {7}, {2, 3, 2}}, true, DType::bf16)},
                                                           {{"scalar", AttrValue::of_float(2)}}));
    ASSERT_EQ(p.outputs.size(), 1u);
    ASSERT_EQ(p.outputs[0].tensors.size(), 3u);
    for (const auto& t : p.outputs[0].tensors) {
        EXPECT_TRUE(t.shape.empty());
        EXPECT_EQ(t.numel(), 1);
        EXPECT_EQ(t.dtype, DType::bf16);
    }
    const auto out = run_golden(op, p, {{std::vector<double>(20, 1.0), std::vector<double>(7, -2.0), std::vector<double>(12, 0.5)}});
    EXPECT_DOUBLE_EQ(out[0].tensors[0].v[0], std::sqrt(20.0));
    EXPECT_DOUBLE_EQ(out[0].tensors[1].v[0], std::sqrt(28.0));
    EXPECT_DOUBLE_EQ(out[0].tensors[2].v[0], std::sqrt(3.0));
}

TEST(ForeachNorm, SamePrecisionRoundsToTheOutputDtype) {
    const Proto proto = norm_proto();
    const auto& op = op_named("foreach_norm");
    const Problem p = resolve_problem(proto, op, case_spec("foreach_norm", {case_input({{3}}, true, DType::f16)},
                                                           {{"scalar", AttrValue::of_float(2)}}));
    ValueArgs<double> in = values_for_specs<double>(p.inputs);
    in[0].tensors[0].v = {1, 1, 1};
    ValueArgs<double> out = values_for_specs<double>(p.outputs);
    op.same_precision(p, in, out);
    EXPECT_EQ(out[0].tensors[0].v[0], round_to_dtype(std::sqrt(3.0), DType::f16));
}

// --- swi_glu ------------------------------------------------------------------------

Problem swi_glu_problem(const Shape& shape, std::int64_t dim, DType dtype = DType::f32) {
    static const Proto proto = swi_glu_proto();
    return resolve_problem(proto, op_named("swi_glu"),
                           case_spec("swi_glu", {case_input({shape}, false, dtype)}, {{"dim", AttrValue::of_int(dim)}}));
}

void expect_values_near(const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-14 * std::fabs(want[i])) << "element " << i;
}

TEST(SwiGlu, SplitsTheLastDimension) {
    const Problem p = swi_glu_problem({2, 4}, -1);
    EXPECT_EQ(p.outputs[0].tensors[0].shape, (Shape{2, 2}));
    const auto out = run_golden(op_named("swi_glu"), p, {{{1, 0, 3, 5, -1, 2, 2, -0.5}}});
    expect_values_near(out[0].one().v, {silu_1 * 3, 0, silu_minus_1 * 2, silu_2 * -0.5});
}

TEST(SwiGlu, SplitsDimensionZero) {
    const Problem p = swi_glu_problem({2, 3}, 0);
    EXPECT_EQ(p.outputs[0].tensors[0].shape, (Shape{1, 3}));
    const auto out = run_golden(op_named("swi_glu"), p, {{{1, -1, 2, 4, 5, 6}}});
    expect_values_near(out[0].one().v, {silu_1 * 4, silu_minus_1 * 5, silu_2 * 6});
}

TEST(SwiGlu, SplitsAMiddleDimension) {
    // x[o][h][i]: a = x[o][0][:], b = x[o][1][:].
    const Problem p = swi_glu_problem({2, 2, 2}, 1);
    EXPECT_EQ(p.outputs[0].tensors[0].shape, (Shape{2, 1, 2}));
    const auto out = run_golden(op_named("swi_glu"), p, {{{1, 2, 3, 4, -1, 0, 7, 8}}});
    expect_values_near(out[0].one().v, {silu_1 * 3, silu_2 * 4, silu_minus_1 * 7, 0});
}

TEST(SwiGlu, OddSplitIsAnError) {
    EXPECT_THROW(swi_glu_problem({4, 5}, -1), Error);
    EXPECT_THROW(swi_glu_problem({3, 4}, 0), Error);
    EXPECT_THROW(swi_glu_problem({4, 4}, 2), Error);  // out of range
    const auto& op = op_named("swi_glu");
    Problem p = swi_glu_problem({4, 6}, 1);
    p.inputs[0].tensors[0].shape = {4, 7};
    try {
        op.infer_outputs(p);
        FAIL() << "odd split accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("odd size 7"), std::string::npos) << e.what();
    }
}

// --- case generation ----------------------------------------------------------------

// Twenty cases for the cpu profile from several seeds (the public split and hidden ones).
std::vector<CaseSpec> generate_checked(const Proto& proto) {
    const auto& op = op_named(proto.op);
    std::vector<CaseSpec> all;
    for (std::uint64_t seed : {1ull, 7ull, 20260101ull, 0xdeadbeefull, 42ull}) {
        const auto cases = generate_cases(op, proto, profile_by_name("cpu"), seed, 20);
        EXPECT_EQ(cases.size(), 20u);
        for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(proto, op, c)) << c.note;
        all.insert(all.end(), cases.begin(), cases.end());
    }
    return all;
}

TEST(ForeachAddcdivScalar, GeneratesTwentyCpuCasesWithDivisorsAwayFromZero) {
    for (const auto& c : generate_checked(addcdiv_proto())) {
        ASSERT_TRUE(c.inputs[2].range.has_value());
        const auto r = *c.inputs[2].range;
        EXPECT_TRUE(r.lo > 0 || r.hi < 0) << "x3 range " << r.to_string() << " contains zero";
        EXPECT_GE(c.inputs[0].shapes.size(), 1u);
        EXPECT_LE(c.inputs[0].shapes.size(), 8u);
        EXPECT_EQ(c.inputs[0].shapes, c.inputs[1].shapes);
        EXPECT_EQ(c.inputs[0].shapes, c.inputs[2].shapes);
    }
}

TEST(ForeachNorm, GeneratesTwentyCpuCases) {
    std::set<double> orders;
    for (const auto& c : generate_checked(norm_proto())) orders.insert(c.attrs.at("scalar").f);
    EXPECT_GE(orders.size(), 4u);
}

TEST(SwiGlu, GeneratesTwentyCpuCasesWithEvenSplits) {
    std::set<std::int64_t> dims;
    for (const auto& c : generate_checked(swi_glu_proto())) {
        const auto dim = c.attrs.at("dim").i;
        dims.insert(dim);
        const Shape& s = c.inputs[0].shapes.at(0);
        const auto axis = static_cast<std::size_t>(dim < 0 ? dim + static_cast<std::int64_t>(s.size()) : dim);
        EXPECT_EQ(s[axis] % 2, 0) << c.note;
    }
    EXPECT_GE(dims.size(), 2u);
}

}  // namespace
}  // namespace hb
