// Level-2 index operators arg_max, cummin, gather and scatter: goldens against hand-computed
// values on every attribute path (ties, NaN, negative dims, keepdim, every scatter reduce),
// output inference and its errors, the input-validity hooks, and case sampling through the
// split generator with hapbench's own proto.yaml files.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/case_sampler.hpp"
#include "suite/inputs.hpp"
#include "spec/profile.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

const double nan_value = std::nan("");
const double inf = INFINITY;

const Proto& suite_proto(const std::string& op) {
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

struct TensorInput {
    DType dtype;
    Shape shape;
    std::vector<double> values;
    std::optional<ValueRange> range = std::nullopt;
};

CaseSpec case_for(const std::string& op, const std::vector<TensorInput>& inputs, AttrMap attrs) {
    CaseSpec c;
    c.op = op;
    c.case_id = 1;
    c.attrs = std::move(attrs);
    for (const auto& in : inputs) {
        CaseInput ci;
        ci.shapes = {in.shape};
        ci.dtype = in.dtype;
        ci.range = in.range;
        c.inputs.push_back(ci);
    }
    return c;
}

Problem problem_for(const std::string& op, const std::vector<TensorInput>& inputs, AttrMap attrs) {
    return resolve_problem(suite_proto(op), op_named(op), case_for(op, inputs, std::move(attrs)));
}

// Every output of the golden (or the same-precision reference), in proto order.
std::vector<std::vector<double>> evaluate(const std::string& op, const std::vector<TensorInput>& inputs,
                                          AttrMap attrs = {}, bool same_precision = false) {
    const Problem problem = problem_for(op, inputs, std::move(attrs));
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = problem.inputs[k].name;
        in[k].tensors.push_back({TensorSpec{inputs[k].dtype, inputs[k].shape}, inputs[k].values});
    }
    ValueArgs<double> out = values_for_specs<double>(problem.outputs);
    if (same_precision) op_named(op).same_precision(problem, in, out);
    else op_named(op).golden(problem, in, out);
    std::vector<std::vector<double>> result;
    for (const auto& arg : out) result.push_back(arg.one().v);
    return result;
}

// Equal element for element; NaN equals NaN.
void expect_same(const std::vector<double>& got, const std::vector<double>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        else EXPECT_EQ(got[i], expected[i]) << "element " << i;
    }
}

AttrMap dim_attrs(std::int64_t dim, std::optional<bool> keepdim = std::nullopt) {
    AttrMap a{{"dim", AttrValue::of_int(dim)}};
    if (keepdim) a["keepdim"] = AttrValue::of_bool(*keepdim);
    return a;
}

// Draws `count` cases through the generator with the operator's own proto; every case must
// resolve.
std::vector<CaseSpec> generated_cases(const std::string& op, int count = 20, std::uint64_t seed = 20260101) {
    const auto cases = generate_cases(op_named(op), suite_proto(op), profile_by_name("cpu"), seed, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(suite_proto(op), op_named(op), c)) << op << " case " << c.case_id;
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

// ---------------------------------------------------------------------------------- arg_max

TEST(OpsLevel2Index, ArgMaxTakesTheFirstOfTiedMaxima) {
    // Rows of [2, 4] along the last dim: 3 is tied at 1 and 2; the constant row gives 0.
    expect_same(evaluate("arg_max", {{DType::f32, {2, 4}, {1, 3, 3, 2, 5, 5, 5, 5}}}, dim_attrs(-1))[0], {1, 0});
    // Along dim 0 of [3, 2]: column 0 ties 4 at rows 1 and 2, column 1 ties 7 at rows 0 and 1.
    expect_same(evaluate("arg_max", {{DType::i32, {3, 2}, {1, 7, 4, 7, 4, 2}}}, dim_attrs(0, true))[0], {1, 0});
}

TEST(OpsLevel2Index, ArgMaxCountsTheFirstNaNAsTheMaximum) {
    expect_same(evaluate("arg_max", {{DType::f16, {4}, {1, nan_value, 5, nan_value}}}, dim_attrs(0))[0], {1});
    expect_same(evaluate("arg_max", {{DType::f32, {3}, {inf, 1, inf}}}, dim_attrs(0))[0], {0});
    expect_same(evaluate("arg_max", {{DType::f32, {3}, {-inf, -inf, -inf}}}, dim_attrs(0))[0], {0});
    expect_same(evaluate("arg_max", {{DType::bf16, {3}, {inf, 2, nan_value}}}, dim_attrs(-1))[0], {2});
}

TEST(OpsLevel2Index, ArgMaxAlongANegativeMiddleDim) {
    // [2, 3, 2] along dim -2 (size 3): out[o][i] = argmax over k of x[o][k][i].
    const std::vector<double> x = {0, 9, 5, 1, 5, 2,   // o = 0: column 0 {0, 5, 5}, column 1 {9, 1, 2}
                                   -1, -2, -3, -2, -1, -2};  // o = 1: {-1, -3, -1}, {-2, -2, -2}
    const auto y = evaluate("arg_max", {{DType::f32, {2, 3, 2}, x}}, dim_attrs(-2, false))[0];
    expect_same(y, {1, 0, 0, 0});
}

TEST(OpsLevel2Index, ArgMaxComparesInt64ValuesExactly) {
    const double big = 4503599627370496.0;  // 2^52
    expect_same(evaluate("arg_max", {{DType::i64, {3}, {big + 1, big + 2, big}}}, dim_attrs(0))[0], {1});
    // The same-precision reference is the golden (no fp32 rounding that would merge values).
    expect_same(evaluate("arg_max", {{DType::i32, {2}, {16777217, 16777216}}}, dim_attrs(0), true)[0], {0});
}

TEST(OpsLevel2Index, ArgMaxOutputShapeWithAndWithoutKeepdim) {
    const Problem dropped = problem_for("arg_max", {{DType::f32, {2, 3, 5}, {}}}, dim_attrs(1, false));
    EXPECT_EQ(dropped.outputs.at(0).tensors.at(0).shape, (Shape{2, 5}));
    EXPECT_EQ(dropped.outputs.at(0).tensors.at(0).dtype, DType::i64);
    const Problem kept = problem_for("arg_max", {{DType::f16, {2, 3, 5}, {}}}, dim_attrs(-1, true));
    EXPECT_EQ(kept.outputs.at(0).tensors.at(0).shape, (Shape{2, 3, 1}));
    const Problem scalar = problem_for("arg_max", {{DType::f32, {7}, {}}}, dim_attrs(0));
    EXPECT_EQ(scalar.outputs.at(0).tensors.at(0).shape, Shape{});
    // keepdim defaults to false.
    EXPECT_EQ(problem_for("arg_max", {{DType::i64, {4, 6}, {}}}, dim_attrs(0)).outputs.at(0).tensors.at(0).shape,
              Shape{6});
}

TEST(OpsLevel2Index, ArgMaxRejectsBadDims) {
    EXPECT_THROW(problem_for("arg_max", {{DType::f32, {2, 3}, {}}}, dim_attrs(2)), Error);
    EXPECT_THROW(problem_for("arg_max", {{DType::f32, {2, 3}, {}}}, dim_attrs(-3)), Error);
    EXPECT_THROW(problem_for("arg_max", {{DType::f32, {2, 0}, {}}}, dim_attrs(1)), Error);
    try {
        problem_for("arg_max", {{DType::f32, {2, 3}, {}}}, dim_attrs(5));
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("dim 5 is out of range"), std::string::npos) << e.what();
    }
}

// Lines whose maximum occurs more than once, counted from the generated inputs.
int tied_lines(const Tensor& x, std::int64_t lines, std::int64_t size) {
    int tied = 0;
    for (std::int64_t l = 0; l < lines; ++l) {
        double best = -inf;
        int count = 0;
        for (std::int64_t k = 0; k < size; ++k) {
            const double v = x.get(static_cast<std::size_t>(l * size + k));
            if (v > best) best = v, count = 1;
            else if (v == best) ++count;
        }
        tied += count > 1;
    }
    return tied;
}

TEST(OpsLevel2Index, ArgMaxInputsHoldTiedMaximaEvenInWideRanges) {
    const Problem p = problem_for("arg_max", {{DType::f32, {30, 101}, {}, ValueRange{-1000, 1000}}}, dim_attrs(-1));
    const auto inputs = generate_inputs(p, op_named("arg_max"), 0);
    EXPECT_GE(tied_lines(inputs.at(0).tensors.at(0), 30, 101), 10);  // every third line
    const Problem q = problem_for("arg_max", {{DType::i64, {30, 101}, {}, op_named("arg_max").boundary_range(DType::i64)}},
                                  dim_attrs(1));
    EXPECT_GE(tied_lines(generate_inputs(q, op_named("arg_max"), 0).at(0).tensors.at(0), 30, 101), 10);
}

TEST(OpsLevel2Index, ArgMaxClampsInt64InputsToExactDoubles) {
    const Problem p = problem_for("arg_max", {{DType::i64, {1000}, {}, ValueRange{-inf, inf}}}, dim_attrs(0));
    const auto inputs = generate_inputs(p, op_named("arg_max"), 0);
    const auto* x = static_cast<const std::int64_t*>(inputs.at(0).tensors.at(0).data());
    for (int k = 0; k < 1000; ++k) ASSERT_LE(std::abs(x[k]), std::int64_t{1} << 53) << "element " << k;
}

TEST(OpsLevel2Index, ArgMaxSamplerCoversDimsKeepdimAndDtypes) {
    const auto cases = generated_cases("arg_max");
    std::set<bool> keepdims;
    bool negative_non_last = false, positive_middle = false, first = false, last = false;
    for (const auto& c : cases) {
        const auto rank = static_cast<std::int64_t>(c.inputs.at(0).shapes.at(0).size());
        const std::int64_t dim = c.attrs.at("dim").i;
        keepdims.insert(c.attrs.at("keepdim").b);
        negative_non_last |= dim < -1;
        positive_middle |= dim > 0 && dim < rank - 1;
        first |= dim == 0;
        last |= dim == -1;
    }
    EXPECT_EQ(keepdims, (std::set<bool>{false, true}));
    EXPECT_TRUE(negative_non_last && positive_middle && first && last);
    EXPECT_EQ(first_input_dtypes(cases), proto_dtypes("arg_max"));
}

// ----------------------------------------------------------------------------------- cummin

TEST(OpsLevel2Index, CumminMovesTheIndexToTheLastTie) {
    const auto out = evaluate("cummin", {{DType::f32, {7}, {3, 1, 2, 1, 0.5, 4, 0.5}}}, dim_attrs(0));
    expect_same(out[0], {3, 1, 1, 1, 0.5, 0.5, 0.5});
    expect_same(out[1], {0, 1, 1, 3, 4, 4, 6});
    // A constant line: every element ties, the index is the position itself.
    expect_same(evaluate("cummin", {{DType::i32, {4}, {5, 5, 5, 5}}}, dim_attrs(-1))[1], {0, 1, 2, 3});
}

TEST(OpsLevel2Index, CumminPropagatesNaNWithTheLatestNaNsIndex) {
    const auto out = evaluate("cummin", {{DType::f16, {6}, {2, nan_value, -5, nan_value, -9, 1}}}, dim_attrs(0));
    expect_same(out[0], {2, nan_value, nan_value, nan_value, nan_value, nan_value});
    expect_same(out[1], {0, 1, 1, 3, 3, 3});
    const auto infinities = evaluate("cummin", {{DType::bf16, {4}, {inf, inf, -inf, -inf}}}, dim_attrs(0));
    expect_same(infinities[0], {inf, inf, -inf, -inf});
    expect_same(infinities[1], {0, 1, 2, 3});
}

TEST(OpsLevel2Index, CumminAlongTheFirstDimOfAMatrix) {
    // [3, 2] along dim 0: column 0 {4, 2, 2}, column 1 {1, 3, 0}.
    const auto out = evaluate("cummin", {{DType::i32, {3, 2}, {4, 1, 2, 3, 2, 0}}}, dim_attrs(-2));
    expect_same(out[0], {4, 1, 2, 1, 2, 0});
    expect_same(out[1], {0, 0, 1, 0, 2, 2});
}

TEST(OpsLevel2Index, CumminSamePrecisionKeepsInt32ValuesExact) {
    const auto out = evaluate("cummin", {{DType::i32, {2}, {16777217, 16777216}}}, dim_attrs(0), true);
    expect_same(out[0], {16777217, 16777216});
    expect_same(out[1], {0, 1});
}

TEST(OpsLevel2Index, CumminOutputsAndErrors) {
    const Problem p = problem_for("cummin", {{DType::bf16, {4, 5, 6}, {}}}, dim_attrs(1));
    ASSERT_EQ(p.outputs.size(), 2u);
    EXPECT_EQ(p.outputs[0].name, "values");
    EXPECT_EQ(p.outputs[0].tensors.at(0).dtype, DType::bf16);
    EXPECT_EQ(p.outputs[0].tensors.at(0).shape, (Shape{4, 5, 6}));
    EXPECT_EQ(p.outputs[1].name, "indices");
    EXPECT_EQ(p.outputs[1].tensors.at(0).dtype, DType::i64);
    EXPECT_EQ(p.outputs[1].tensors.at(0).shape, (Shape{4, 5, 6}));
    EXPECT_THROW(problem_for("cummin", {{DType::f32, {4, 5}, {}}}, dim_attrs(2)), Error);
    EXPECT_THROW(problem_for("cummin", {{DType::f32, {4, 5}, {}}}, dim_attrs(-3)), Error);
}

// Positions where the running minimum ties an earlier one, counted from generated inputs.
int running_min_ties(const Tensor& x, std::int64_t lines, std::int64_t size) {
    int ties = 0;
    for (std::int64_t l = 0; l < lines; ++l) {
        double minimum = inf;
        for (std::int64_t k = 0; k < size; ++k) {
            const double v = x.get(static_cast<std::size_t>(l * size + k));
            ties += k > 0 && v == minimum;
            minimum = std::min(minimum, v);
        }
    }
    return ties;
}

TEST(OpsLevel2Index, CumminInputsHoldTiedRunningMinima) {
    const Problem p = problem_for("cummin", {{DType::f32, {30, 101}, {}, ValueRange{-1000, 1000}}}, dim_attrs(-1));
    EXPECT_GE(running_min_ties(generate_inputs(p, op_named("cummin"), 0).at(0).tensors.at(0), 30, 101), 10);
}

TEST(OpsLevel2Index, CumminSamplerCoversDimsAndDtypes) {
    const auto cases = generated_cases("cummin");
    bool negative_non_last = false, positive_middle = false, first = false, last = false;
    for (const auto& c : cases) {
        const auto rank = static_cast<std::int64_t>(c.inputs.at(0).shapes.at(0).size());
        const std::int64_t dim = c.attrs.at("dim").i;
        negative_non_last |= dim < -1;
        positive_middle |= dim > 0 && dim < rank - 1;
        first |= dim == 0;
        last |= dim == -1;
    }
    EXPECT_TRUE(negative_non_last && positive_middle && first && last);
    EXPECT_EQ(first_input_dtypes(cases), proto_dtypes("cummin"));
}

// ----------------------------------------------------------------------------------- gather

TEST(OpsLevel2Index, GatherAlongDimZeroAndOne) {
    // x = [[1, 2, 3], [4, 5, 6]]
    const TensorInput x{DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}};
    // dim 0, index [[1, 0, 1]] (smaller than x along dim 0): y[0][j] = x[index[0][j]][j].
    expect_same(evaluate("gather", {x, {DType::i64, {1, 3}, {1, 0, 1}}}, dim_attrs(0))[0], {4, 2, 6});
    // dim -1, index [[2, 2, 0, 1], [0, 0, 0, 0]] (larger along dim: indices repeat).
    expect_same(evaluate("gather", {x, {DType::i32, {2, 4}, {2, 2, 0, 1, 0, 0, 0, 0}}}, dim_attrs(-1))[0],
                {3, 3, 1, 2, 4, 4, 4, 4});
    // The default dim is 0.
    expect_same(evaluate("gather", {x, {DType::i8, {2, 1}, {1, 0}}})[0], {4, 1});
}

TEST(OpsLevel2Index, GatherWithIndexSmallerThanXOutsideDim) {
    // x [2, 2, 3] = 0..11, dim 1, index [1, 2, 2]: y[0][k][i] = x[0][index[0][k][i]][i].
    std::vector<double> x(12);
    for (int k = 0; k < 12; ++k) x[static_cast<std::size_t>(k)] = k;
    const auto y = evaluate("gather", {{DType::i32, {2, 2, 3}, x}, {DType::i64, {1, 2, 2}, {1, 0, 0, 1}}}, dim_attrs(1))[0];
    expect_same(y, {3, 1, 0, 4});
}

TEST(OpsLevel2Index, GatherCopiesSpecialValuesAndInt64Exactly) {
    expect_same(evaluate("gather", {{DType::f16, {3}, {nan_value, -inf, 0.5}}, {DType::i64, {3}, {1, 0, 2}}}, dim_attrs(0))[0],
                {-inf, nan_value, 0.5});
    const double big = 9007199254740993.0;  // not representable; the fp64 copy is what both sides upcast to
    expect_same(evaluate("gather", {{DType::i64, {2}, {big, 1}}, {DType::i32, {1}, {0}}}, dim_attrs(0), true)[0], {big});
}

TEST(OpsLevel2Index, GatherOutputShapeAndErrors) {
    const Problem p = problem_for("gather", {{DType::bf16, {4, 5, 6}, {}}, {DType::i32, {3, 9, 6}, {}}}, dim_attrs(1));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{3, 9, 6}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::bf16);
    // Larger than x outside dim, a rank mismatch, a bad dim, a floating index.
    EXPECT_THROW(problem_for("gather", {{DType::f32, {4, 5}, {}}, {DType::i64, {5, 5}, {}}}, dim_attrs(1)), Error);
    EXPECT_THROW(problem_for("gather", {{DType::f32, {4, 5}, {}}, {DType::i64, {4}, {}}}, dim_attrs(0)), Error);
    EXPECT_THROW(problem_for("gather", {{DType::f32, {4, 5}, {}}, {DType::i64, {4, 5}, {}}}, dim_attrs(2)), Error);
    EXPECT_THROW(problem_for("gather", {{DType::f32, {4, 5}, {}}, {DType::f32, {4, 5}, {}}}, dim_attrs(0)), Error);
}

TEST(OpsLevel2Index, GatherIndicesAreRedrawnInsideTheRange) {
    const Problem p = problem_for("gather", {{DType::f32, {7, 5}, {}, ValueRange{-1, 1}}, {DType::i64, {20, 5}, {}, ValueRange{-100, 100}}},
                                  dim_attrs(0));
    const auto inputs = generate_inputs(p, op_named("gather"), 0);
    std::set<double> seen;
    for (std::size_t j = 0; j < 100; ++j) {
        const double k = inputs.at(1).tensors.at(0).get(j);
        EXPECT_TRUE(k >= 0 && k < 7) << k;
        seen.insert(k);
    }
    EXPECT_EQ(seen.size(), 7u);
}

TEST(OpsLevel2Index, GatherSamplerCoversDimsDtypesAndSmallerIndices) {
    const auto cases = generated_cases("gather");
    bool negative_non_last = false, last = false, first = false, smaller_outside_dim = false;
    std::set<DType> index_dtypes;
    for (const auto& c : cases) {
        const Shape& x = c.inputs.at(0).shapes.at(0);
        const Shape& index = c.inputs.at(1).shapes.at(0);
        const auto rank = static_cast<std::int64_t>(x.size());
        const std::int64_t dim = c.attrs.at("dim").i;
        const std::int64_t axis = dim < 0 ? dim + rank : dim;
        negative_non_last |= dim < -1;
        last |= dim == -1;
        first |= dim == 0;
        for (std::int64_t d = 0; d < rank; ++d)
            if (d != axis) smaller_outside_dim |= index[static_cast<std::size_t>(d)] < x[static_cast<std::size_t>(d)];
        index_dtypes.insert(c.inputs.at(1).dtype);
        ASSERT_TRUE(c.inputs.at(1).range.has_value());
        EXPECT_EQ(c.inputs.at(1).range->hi, static_cast<double>(x[static_cast<std::size_t>(axis)] - 1));
    }
    EXPECT_TRUE(negative_non_last && last && first && smaller_outside_dim);
    EXPECT_GE(index_dtypes.size(), 2u);
    EXPECT_EQ(first_input_dtypes(cases), proto_dtypes("gather"));
}

// ---------------------------------------------------------------------------------- scatter

AttrMap scatter_attrs(std::int64_t dim, std::optional<std::string> reduce) {
    AttrMap a{{"dim", AttrValue::of_int(dim)}};
    a["reduce"] = reduce ? AttrValue::of_string(*reduce) : AttrValue{};
    return a;
}

// data [2, 3] = [[1, 2, 3], [4, 5, 6]], indices and updates [2, 2] along dim 1:
// line 0 targets columns {2, 0} with {10, 20}, line 1 columns {0, 0} with {30, 40} (a repeat,
// for the reductions only).
const TensorInput scatter_data{DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}};
const TensorInput scatter_updates{DType::f32, {2, 2}, {10, 20, 30, 40}};

TEST(OpsLevel2Index, ScatterAssignsWithNoneAndUpdate) {
    const TensorInput distinct{DType::i64, {2, 2}, {2, 0, 1, 0}};
    const std::vector<double> expected = {20, 2, 10, 40, 30, 6};
    expect_same(evaluate("scatter", {scatter_data, distinct, scatter_updates}, scatter_attrs(1, std::nullopt))[0], expected);
    expect_same(evaluate("scatter", {scatter_data, distinct, scatter_updates}, scatter_attrs(-1, "update"))[0], expected);
    // The default reduce is None.
    expect_same(evaluate("scatter", {scatter_data, distinct, scatter_updates}, dim_attrs(1))[0], expected);
}

TEST(OpsLevel2Index, ScatterReducesWithTheDataIncluded) {
    const TensorInput repeated{DType::i32, {2, 2}, {2, 0, 0, 0}};
    const auto run = [&](const char* reduce) {
        return evaluate("scatter", {scatter_data, repeated, scatter_updates}, scatter_attrs(1, reduce))[0];
    };
    expect_same(run("add"), {21, 2, 13, 74, 5, 6});
    expect_same(run("multiply"), {20, 2, 30, 4800, 5, 6});
    expect_same(run("amin"), {1, 2, 3, 4, 5, 6});
    expect_same(run("amax"), {20, 2, 10, 40, 5, 6});
}

TEST(OpsLevel2Index, ScatterAlongDimZeroWithSmallerIndices) {
    // data [3, 2] = 0; indices [1, 1] = {2} along dim 0; updates [2, 2] (larger than indices).
    const auto y = evaluate("scatter",
                            {{DType::f16, {3, 2}, {0, 0, 0, 0, 0, 0}}, {DType::i64, {1, 1}, {2}}, {DType::f16, {2, 2}, {7, 8, 9, 10}}},
                            scatter_attrs(0, "add"))[0];
    expect_same(y, {0, 0, 0, 0, 7, 0});
}

TEST(OpsLevel2Index, ScatterMinMaxPropagateNaN) {
    const TensorInput data{DType::bf16, {3}, {1, nan_value, 3}};
    const TensorInput indices{DType::i64, {2}, {0, 1}};
    const TensorInput updates{DType::bf16, {2}, {nan_value, -1}};
    expect_same(evaluate("scatter", {data, indices, updates}, scatter_attrs(0, "amin"))[0], {nan_value, nan_value, 3});
    expect_same(evaluate("scatter", {data, indices, updates}, scatter_attrs(0, "amax"))[0], {nan_value, nan_value, 3});
}

TEST(OpsLevel2Index, ScatterHalfPrecisionSumsAreExactInTheGoldenAndFp32InTheReference) {
    // 2048 + 1 + 1 in fp16: rounding after each step would stay at 2048 (spacing 2 there);
    // the golden (fp64) and the same-precision reference (fp32 accumulator) both reach 2050.
    const TensorInput data{DType::f16, {1}, {2048}};
    const TensorInput indices{DType::i64, {2}, {0, 0}};
    const TensorInput updates{DType::f16, {2}, {1, 1}};
    expect_same(evaluate("scatter", {data, indices, updates}, scatter_attrs(0, "add"))[0], {2050});
    expect_same(evaluate("scatter", {data, indices, updates}, scatter_attrs(0, "add"), true)[0], {2050});
    // fp32: 1 + 2^-24 + 2^-24 is 1 in fp32 accumulation, 1 + 2^-23 in the golden.
    const TensorInput data32{DType::f32, {1}, {1}};
    const TensorInput tiny{DType::f32, {2}, {std::ldexp(1.0, -24), std::ldexp(1.0, -24)}};
    expect_same(evaluate("scatter", {data32, indices, tiny}, scatter_attrs(0, "add"))[0], {1 + std::ldexp(1.0, -23)});
    expect_same(evaluate("scatter", {data32, indices, tiny}, scatter_attrs(0, "add"), true)[0], {1});
}

TEST(OpsLevel2Index, ScatterIntegerArithmeticWraps) {
    const TensorInput indices{DType::i64, {2}, {0, 0}};
    expect_same(evaluate("scatter", {{DType::i32, {1}, {2147483647}}, indices, {DType::i32, {2}, {1, 1}}},
                         scatter_attrs(0, "add"))[0],
                {-2147483647.0});
    expect_same(evaluate("scatter", {{DType::i32, {1}, {65536}}, indices, {DType::i32, {2}, {65536, 3}}},
                         scatter_attrs(0, "multiply"))[0],
                {0});
}

TEST(OpsLevel2Index, ScatterOutputShapeAndErrors) {
    const Problem p = problem_for("scatter", {{DType::f32, {4, 5}, {}}, {DType::i32, {2, 5}, {}}, {DType::f32, {3, 5}, {}}},
                                  scatter_attrs(0, "add"));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{4, 5}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::f32);
    const auto bad = [](std::vector<TensorInput> in, AttrMap attrs) { return problem_for("scatter", in, attrs); };
    const TensorInput data{DType::f32, {4, 5}, {}};
    // An unknown reduce; updates of another dtype; indices larger than updates; indices
    // larger than data outside dim; a floating index; update with more targets than positions.
    EXPECT_THROW(bad({data, {DType::i64, {2, 5}, {}}, {DType::f32, {2, 5}, {}}}, scatter_attrs(0, "sum")), Error);
    EXPECT_THROW(bad({data, {DType::i64, {2, 5}, {}}, {DType::f16, {2, 5}, {}}}, scatter_attrs(0, "add")), Error);
    EXPECT_THROW(bad({data, {DType::i64, {2, 5}, {}}, {DType::f32, {2, 4}, {}}}, scatter_attrs(0, "add")), Error);
    EXPECT_THROW(bad({data, {DType::i64, {2, 6}, {}}, {DType::f32, {2, 6}, {}}}, scatter_attrs(0, "add")), Error);
    EXPECT_THROW(bad({data, {DType::f32, {2, 5}, {}}, {DType::f32, {2, 5}, {}}}, scatter_attrs(0, "add")), Error);
    EXPECT_THROW(bad({data, {DType::i64, {5, 5}, {}}, {DType::f32, {5, 5}, {}}}, scatter_attrs(0, "update")), Error);
    EXPECT_NO_THROW(bad({data, {DType::i64, {5, 5}, {}}, {DType::f32, {5, 5}, {}}}, scatter_attrs(0, "add")));
}

TEST(OpsLevel2Index, ScatterUpdateIndicesAreDistinctPerLine) {
    // indices [3, 4, 2] along dim 1 of data [3, 5, 2]: each (o, i) line holds 4 distinct values.
    const Problem p = problem_for("scatter",
                                  {{DType::f32, {3, 5, 2}, {}, ValueRange{-1, 1}}, {DType::i64, {3, 4, 2}, {}, ValueRange{0, 4}},
                                   {DType::f32, {3, 4, 2}, {}, ValueRange{-1, 1}}},
                                  scatter_attrs(1, std::nullopt));
    const auto inputs = generate_inputs(p, op_named("scatter"), 0);
    const Tensor& indices = inputs.at(1).tensors.at(0);
    for (int o = 0; o < 3; ++o)
        for (int i = 0; i < 2; ++i) {
            std::set<double> line;
            for (int k = 0; k < 4; ++k) line.insert(indices.get(static_cast<std::size_t>((o * 4 + k) * 2 + i)));
            EXPECT_EQ(line.size(), 4u);
            EXPECT_GE(*line.begin(), 0);
            EXPECT_LE(*line.rbegin(), 4);
        }
    // Reductions keep repeats but redraw out-of-range values.
    const Problem q = problem_for("scatter",
                                  {{DType::i64, {3, 5}, {}, ValueRange{-inf, inf}}, {DType::i64, {3, 9}, {}, ValueRange{-50, 50}},
                                   {DType::i64, {3, 9}, {}, ValueRange{-inf, inf}}},
                                  scatter_attrs(-1, "add"));
    const auto reduced = generate_inputs(q, op_named("scatter"), 0);
    for (std::size_t j = 0; j < 27; ++j) {
        const double k = reduced.at(1).tensors.at(0).get(j);
        EXPECT_TRUE(k >= 0 && k < 5) << k;
    }
    // int64 data are clamped to +-2^53 so the golden sees them exactly.
    const auto* data = static_cast<const std::int64_t*>(reduced.at(0).tensors.at(0).data());
    for (int k = 0; k < 15; ++k) EXPECT_LE(std::abs(data[k]), std::int64_t{1} << 53);
}

TEST(OpsLevel2Index, ScatterBoundaryRangeKeepsFp32PartialSumsFinite) {
    // 64 contributions of the boundary magnitude still sum below the fp32 limit.
    for (DType dtype : {DType::f32, DType::bf16}) {
        const ValueRange r = op_named("scatter").boundary_range(dtype);
        EXPECT_LT(64 * r.hi, 3.4028234663852886e38) << dtype_name(dtype);
        EXPECT_EQ(r.lo, -r.hi);
    }
    EXPECT_EQ(op_named("scatter").boundary_range(DType::f16), (ValueRange{-65504, 65504}));
    EXPECT_EQ(op_named("scatter").boundary_range(DType::i64), (ValueRange{-9007199254740992.0, 9007199254740992.0}));
}

TEST(OpsLevel2Index, ScatterSamplerCoversEveryReduceAndDtype) {
    const auto cases = generated_cases("scatter");
    std::set<std::string> reduces;
    for (const auto& c : cases) {
        const AttrValue& r = c.attrs.at("reduce");
        reduces.insert(r.type == AttrType::none ? "None" : r.s);
        EXPECT_EQ(c.inputs.at(2).shapes, c.inputs.at(1).shapes);
        EXPECT_EQ(c.inputs.at(2).dtype, c.inputs.at(0).dtype);
    }
    EXPECT_EQ(reduces, (std::set<std::string>{"None", "update", "add", "multiply", "amin", "amax"}));
    EXPECT_EQ(first_input_dtypes(cases), proto_dtypes("scatter"));
}

}  // namespace
}  // namespace hb
