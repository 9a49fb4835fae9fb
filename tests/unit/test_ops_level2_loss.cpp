// Level-2 loss operator cross_entropy_loss: goldens against hand-computed values for every
// reduction and kinds of ignore_index, the class dim in the middle, special values, output
// inference and its errors, the work model, the target hook and case sampling.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/case_sampler.hpp"
#include "suite/inputs.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

const double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();
const std::string op_name = "cross_entropy_loss";

Proto proto() { return load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/" + op_name + "/proto.yaml", op_name, 2); }

const Operator& op() {
    const Operator* o = find_operator(op_name);
    if (!o) throw Error("operator " + op_name + " is not registered");
    return *o;
}

AttrMap attrs(const std::string& reduction, std::int64_t ignore = -100) {
    return {{"reduction", AttrValue::of_string(reduction)}, {"ignore_index", AttrValue::of_int(ignore)}};
}

Problem problem_for(const Shape& input, const Shape& target, AttrMap a, DType dtype = DType::f32,
                    DType target_dtype = DType::i64) {
    CaseSpec c;
    c.op = op_name;
    c.case_id = 1;
    c.attrs = std::move(a);
    CaseInput x, t;
    x.shapes = {input};
    x.dtype = dtype;
    t.shapes = {target};
    t.dtype = target_dtype;
    c.inputs = {x, t};
    return resolve_problem(proto(), op(), c);
}

std::vector<double> evaluate(const Shape& input, const std::vector<double>& x, const Shape& target,
                             const std::vector<double>& t, AttrMap a, DType dtype = DType::f32,
                             bool same_precision = false) {
    const Problem p = problem_for(input, target, std::move(a), dtype);
    ValueArgs<double> in(2);
    in[0].name = "input";
    in[0].tensors.push_back({TensorSpec{dtype, input}, x});
    in[1].name = "target";
    in[1].tensors.push_back({TensorSpec{DType::i64, target}, t});
    ValueArgs<double> out = values_for_specs<double>(p.outputs);
    if (same_precision) op().same_precision(p, in, out);
    else op().golden(p, in, out);
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

// -log softmax(row)[k], computed directly.
double nll(const std::vector<double>& row, std::size_t k) {
    double s = 0;
    for (double v : row) s += std::exp(v);
    return std::log(s) - row[k];
}

// Rows (0, 1, 2), (1, 1, 1), (3, 0, -1) with targets 2, 0 and 1.
const std::vector<double> x3 = {0, 1, 2, 1, 1, 1, 3, 0, -1};
const double l0 = nll({0, 1, 2}, 2), l1 = std::log(3.0), l2 = nll({3, 0, -1}, 1);

TEST(OpsLevel2Loss, CrossEntropyNoneGivesEachPositionsLoss) {
    expect_values(evaluate({3, 3}, x3, {3}, {2, 0, 1}, attrs("none")), {l0, l1, l2});
}

TEST(OpsLevel2Loss, CrossEntropyMeanAndSumAndTheDefault) {
    expect_values(evaluate({3, 3}, x3, {3}, {2, 0, 1}, attrs("sum")), {l0 + l1 + l2});
    expect_values(evaluate({3, 3}, x3, {3}, {2, 0, 1}, attrs("mean")), {(l0 + l1 + l2) / 3});
    expect_values(evaluate({3, 3}, x3, {3}, {2, 0, 1}, {}), {(l0 + l1 + l2) / 3});  // mean, -100
}

TEST(OpsLevel2Loss, CrossEntropyIgnoredPositionsAreZeroAndLeaveTheMeansCount) {
    expect_values(evaluate({3, 3}, x3, {3}, {2, -100, 1}, attrs("none")), {l0, 0, l2});
    expect_values(evaluate({3, 3}, x3, {3}, {2, -100, 1}, attrs("sum")), {l0 + l2});
    expect_values(evaluate({3, 3}, x3, {3}, {2, -100, 1}, attrs("mean")), {(l0 + l2) / 2});
    // ignore_index -1, and a value past the classes (3): only positions holding it are ignored.
    expect_values(evaluate({3, 3}, x3, {3}, {-1, 0, 1}, attrs("mean", -1)), {(l1 + l2) / 2});
    expect_values(evaluate({3, 3}, x3, {3}, {2, 3, 1}, attrs("none", 3)), {l0, 0, l2});
}

TEST(OpsLevel2Loss, CrossEntropyIgnoreIndexCanBeAClass) {
    // ignore_index 1: the position whose target is class 1 is ignored; -100 is now invalid.
    expect_values(evaluate({3, 3}, x3, {3}, {2, 0, 1}, attrs("mean", 1)), {(l0 + l1) / 2});
    expect_values(evaluate({3, 3}, x3, {3}, {2, 0, 1}, attrs("none", 0)), {l0, 0, l2});
    EXPECT_THROW(evaluate({3, 3}, x3, {3}, {2, -100, 1}, attrs("mean", 1)), Error);
}

TEST(OpsLevel2Loss, CrossEntropyClassesAreDimOne) {
    // input [2, 2, 3] (N, C, d1): position (n, i) takes the logits x[n, :, i].
    const std::vector<double> x = {0, 1, 2, 3, 4, 5, /* n = 1 */ 6, 5, 4, 3, 2, 1};
    const auto pair = [](double a, double b, int k) { return nll({a, b}, static_cast<std::size_t>(k)); };
    expect_values(evaluate({2, 2, 3}, x, {2, 3}, {0, 1, -100, 1, 1, 0}, attrs("none")),
                  {pair(0, 3, 0), pair(1, 4, 1), 0, pair(6, 3, 1), pair(5, 2, 1), pair(4, 1, 0)});
    const double s = pair(0, 3, 0) + pair(1, 4, 1) + pair(6, 3, 1) + pair(5, 2, 1) + pair(4, 1, 0);
    expect_values(evaluate({2, 2, 3}, x, {2, 3}, {0, 1, -100, 1, 1, 0}, attrs("mean")), {s / 5});
    // 5-D input [1, 2, 1, 1, 2]: the classes still stride over the trailing positions.
    expect_values(evaluate({1, 2, 1, 1, 2}, {0, 1, 2, 3}, {1, 1, 1, 2}, {1, 0}, attrs("none")),
                  {pair(0, 2, 1), pair(1, 3, 0)});
}

TEST(OpsLevel2Loss, CrossEntropySubtractsTheMaxSoHugeLogitsDoNotOverflow) {
    expect_values(evaluate({2, 2}, {1e4, -1e4, 1e4, -1e4}, {2}, {0, 1}, attrs("none")), {0, 2e4});
    expect_values(evaluate({2, 2}, {1e4, -1e4, 1e4, -1e4}, {2}, {0, 1}, attrs("none"), DType::f32, true), {0, 2e4});
}

TEST(OpsLevel2Loss, CrossEntropySpecialValuesFollowTorch) {
    // +inf or NaN in a row, or a row of only -inf: NaN. A -inf target logit among finite ones: +inf.
    // A -inf elsewhere weighs 0.
    expect_values(evaluate({4, 2}, {inf, 0, nan, 0, -inf, -inf, -inf, 0}, {4}, {1, 1, 0, 0}, attrs("none")),
                  {nan, nan, nan, inf});
    expect_values(evaluate({1, 2}, {-inf, 0}, {1}, {1}, attrs("none")), {0});
    // An ignored position never reads its logits: NaN there stays out of every reduction.
    expect_values(evaluate({2, 2}, {nan, 0, 0, 0}, {2}, {-100, 1}, attrs("none")), {0, std::log(2.0)});
    expect_values(evaluate({2, 2}, {nan, 0, 0, 0}, {2}, {-100, 1}, attrs("mean")), {std::log(2.0)});
    expect_values(evaluate({2, 2}, {nan, 0, 0, 0}, {2}, {1, 1}, attrs("sum")), {nan});
}

TEST(OpsLevel2Loss, CrossEntropyMeanOfOnlyIgnoredPositionsIsNanAndSumIsZero) {
    expect_values(evaluate({2, 2}, {0, 1, 2, 3}, {2}, {-100, -100}, attrs("mean")), {nan});
    expect_values(evaluate({2, 2}, {0, 1, 2, 3}, {2}, {-100, -100}, attrs("sum")), {0});
}

TEST(OpsLevel2Loss, CrossEntropySamePrecisionRoundsToTheCaseDtype) {
    const auto out = evaluate({3, 3}, x3, {3}, {2, 0, 1}, attrs("none"), DType::f16, true);
    EXPECT_EQ(out[0], round_to_dtype(l0, DType::f16));
    EXPECT_EQ(out[1], round_to_dtype(l1, DType::f16));
    const auto mean = evaluate({3, 3}, x3, {3}, {2, 0, 1}, attrs("mean"), DType::bf16, true);
    EXPECT_EQ(mean[0], round_to_dtype((l0 + l1 + l2) / 3, DType::bf16));
}

TEST(OpsLevel2Loss, CrossEntropyOutputShapeAndDtype) {
    const auto out = [](const Problem& p) { return p.outputs.at(0).tensors.at(0); };
    EXPECT_EQ(out(problem_for({4, 7, 5, 6}, {4, 5, 6}, attrs("none"), DType::bf16)).shape, (Shape{4, 5, 6}));
    EXPECT_EQ(out(problem_for({4, 7, 5, 6}, {4, 5, 6}, attrs("none"), DType::bf16)).dtype, DType::bf16);
    EXPECT_EQ(out(problem_for({4, 7}, {4}, attrs("mean"), DType::f16)).shape, Shape{});
    EXPECT_EQ(out(problem_for({4, 7}, {4}, attrs("mean"), DType::f16)).dtype, DType::f16);
    EXPECT_EQ(out(problem_for({4, 7}, {4}, attrs("sum"))).shape, Shape{});
    EXPECT_EQ(out(problem_for({4, 7}, {4}, {})).shape, Shape{});
}

TEST(OpsLevel2Loss, CrossEntropyRejectsBadShapesDtypesAndReductions) {
    EXPECT_THROW(problem_for({4, 7}, {4}, attrs("average")), Error);
    EXPECT_THROW(problem_for({4, 7}, {7}, attrs("mean")), Error);           // target must be [N]
    EXPECT_THROW(problem_for({4, 7, 3}, {4, 7}, attrs("mean")), Error);     // input without dim 1
    EXPECT_THROW(problem_for({7}, {}, attrs("mean")), Error);                // no batch dim
    EXPECT_THROW(problem_for({4, 0}, {4}, attrs("mean")), Error);            // no classes
    EXPECT_THROW(problem_for({4, 7}, {4}, attrs("mean"), DType::f32, DType::i32), Error);
    EXPECT_THROW(problem_for({4, 7}, {4}, attrs("mean"), DType::f32, DType::f32), Error);  // soft labels
    // A target outside [0, C) that is not ignore_index is an error of the golden.
    EXPECT_THROW(evaluate({3, 3}, x3, {3}, {2, 3, 1}, attrs("mean")), Error);
    EXPECT_THROW(evaluate({3, 3}, x3, {3}, {2, -1, 1}, attrs("mean")), Error);
}

double vector_elements(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

TEST(OpsLevel2Loss, CrossEntropyWorkModelReadsLogitsAndTargetsOnce) {
    const Problem none = problem_for({4, 7, 5}, {4, 5}, attrs("none"), DType::f16);
    const WorkModel w = op().work(none);
    EXPECT_EQ(w.bytes_read, 140 * 2 + 20 * 8);
    EXPECT_EQ(w.bytes_written, 20 * 2);
    EXPECT_EQ(vector_elements(w, OpClass::exp), 140);
    EXPECT_EQ(vector_elements(w, OpClass::log), 20);
    EXPECT_EQ(w.parallel_items, 20);
    EXPECT_EQ(op().work(problem_for({4, 7, 5}, {4, 5}, attrs("mean"))).bytes_written, 4);
}

TEST(OpsLevel2Loss, CrossEntropyTargetHookMakesTargetsValidAndIgnoresSome) {
    for (std::int64_t ignore : {-100, 0, 3, 11}) {
        CaseSpec c;
        c.op = op_name;
        c.case_id = 3;
        c.attrs = attrs("mean", ignore);
        CaseInput x, t;
        x.shapes = {{600, 11}};
        x.range = ValueRange{-1, 1};
        t.shapes = {{600}};
        t.dtype = DType::i64;
        t.range = ValueRange{-50, 50};  // wider than the classes: the hook redraws
        c.inputs = {x, t};
        const Problem p = resolve_problem(proto(), op(), c);
        const std::vector<Arg> in = generate_inputs(p, op(), 0);
        const auto* target = static_cast<const std::int64_t*>(in.at(1).tensors.at(0).data());
        int ignored = 0;
        for (int i = 0; i < 600; ++i) {
            if (target[i] == ignore) ++ignored;
            else EXPECT_TRUE(target[i] >= 0 && target[i] < 11) << "target " << i << " is " << target[i];
        }
        EXPECT_GT(ignored, 30) << "ignore_index " << ignore;
        EXPECT_LT(ignored, 200) << "ignore_index " << ignore;
    }
}

TEST(OpsLevel2Loss, CrossEntropyTargetHookKeepsOnePositionValid) {
    // One position whose target the hook may set to ignore_index: it stays a class.
    for (std::int64_t id = 1; id <= 40; ++id) {
        CaseSpec c;
        c.op = op_name;
        c.case_id = id;
        c.attrs = attrs("mean", 0);
        CaseInput x, t;
        x.shapes = {{1, 2}};
        t.shapes = {{1}};
        t.dtype = DType::i64;
        t.range = ValueRange{0, 0};
        c.inputs = {x, t};
        const Problem p = resolve_problem(proto(), op(), c);
        const std::vector<Arg> in = generate_inputs(p, op(), 0);
        EXPECT_EQ(static_cast<const std::int64_t*>(in.at(1).tensors.at(0).data())[0], 1);
    }
}

TEST(OpsLevel2Loss, CrossEntropyCasesCoverEveryReductionIgnoreKindDtypeAndRank) {
    const Proto pr = proto();
    const auto cases = generate_cases(op(), pr, profile_by_name("cpu"), 20260101, 20);
    ASSERT_EQ(cases.size(), 20u);
    std::set<std::string> reductions;
    std::set<std::string> ignore_kinds;
    std::set<DType> dtypes;
    std::set<std::size_t> ranks;
    for (const auto& c : cases) {
        EXPECT_NO_THROW(resolve_problem(pr, op(), c)) << "case " << c.case_id;
        const Shape& input = c.inputs.at(0).shapes.at(0);
        const std::int64_t classes = input.at(1), ignore = c.attrs.at("ignore_index").i;
        reductions.insert(c.attrs.at("reduction").s);
        ignore_kinds.insert(ignore == -100 ? "default" : ignore < 0 ? "negative" : ignore == 0 ? "zero"
                            : ignore < classes ? "inside" : "past");
        dtypes.insert(c.inputs.at(0).dtype);
        ranks.insert(input.size());
        EXPECT_EQ(c.inputs.at(1).dtype, DType::i64);
        ASSERT_TRUE(c.inputs.at(1).range.has_value());
        EXPECT_EQ(c.inputs.at(1).range->hi, static_cast<double>(classes - 1));
        EXPECT_GE(classes, 2);
    }
    EXPECT_EQ(reductions, (std::set<std::string>{"none", "mean", "sum"}));
    EXPECT_EQ(ignore_kinds, (std::set<std::string>{"default", "negative", "zero", "inside", "past"}));
    EXPECT_EQ(dtypes, (std::set<DType>{DType::f16, DType::bf16, DType::f32}));
    EXPECT_TRUE(ranks.count(2));
    EXPECT_GE(ranks.size(), 3u);
}

}  // namespace
}  // namespace hb
