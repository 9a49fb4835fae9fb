// Level-2 operators maximum, apply_adam_w, gcd and dynamic_quant: goldens against
// hand-computed values on every attribute path, output inference and its errors, work
// models, and case sampling through the hidden-split generator.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include <cmath>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "ops/broadcast.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/case_sampler.hpp"
#include "suite/inputs.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"
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

// ---- apply_adam_w ------------------------------------------------------------------------

AttrMap adam_attrs(double lr, double beta1, double beta2, double weight_decay, double epsilon, std::int64_t step,
                   bool maximize) {
    return {{"lr", AttrValue::of_float(lr)},           {"beta1", AttrValue::of_float(beta1)},
            {"beta2", AttrValue::of_float(beta2)},     {"weight_decay", AttrValue::of_float(weight_decay)},
            {"epsilon", AttrValue::of_float(epsilon)}, {"step", AttrValue::of_int(step)},
            {"maximize", AttrValue::of_bool(maximize)}};
}

std::vector<TensorInput> adam_inputs(DType dtype, std::vector<double> var, std::vector<double> grad,
                                     std::vector<double> m, std::vector<double> v) {
    const Shape s{static_cast<std::int64_t>(var.size())};
    return {{dtype, s, std::move(var)}, {dtype, s, std::move(grad)}, {dtype, s, std::move(m)}, {dtype, s, std::move(v)}};
}

TEST(OpsLevel2Elementwise, ApplyAdamWMatchesHandComputedSteps) {
    const auto in = adam_inputs(DType::f32, {1}, {0.5}, {0.1}, {0.04});
    // m' = 0.14, v' = 0.04021, mh = 1.4, vh = 40.21; u = 1.4/(sqrt(40.21)+1e-8) + 0.01*1.
    expect_values(evaluate("apply_adam_w", in, adam_attrs(0.1, 0.9, 0.999, 0.01, 1e-8, 1, false)), {0.976921935466319});
    // maximize adds the same update.
    expect_values(evaluate("apply_adam_w", in, adam_attrs(0.1, 0.9, 0.999, 0.01, 1e-8, 1, true)), {1.023078064533681});
    // beta1 = 0, epsilon 0, no decay: u = g / |g|.
    expect_values(evaluate("apply_adam_w", adam_inputs(DType::f32, {-2}, {-1}, {0}, {0}),
                           adam_attrs(0.01, 0.0, 0.5, 0.0, 0.0, 1, false)),
                  {-1.99});
    // step 10: bias corrections 1-0.9^10 and 1-0.99^10.
    expect_values(evaluate("apply_adam_w", adam_inputs(DType::f32, {3}, {0.2}, {0.3}, {0.5}),
                           adam_attrs(0.001, 0.9, 0.99, 0.5, 1e-6, 10, false)),
                  {2.9983043886685983}, 1e-13);
}

TEST(OpsLevel2Elementwise, ApplyAdamWDefaultsAndSpecialValues) {
    // epsilon = 1e-8, step = 1 and maximize = false by default.
    AttrMap required = adam_attrs(0.1, 0.9, 0.999, 0.01, 0, 0, false);
    required.erase("epsilon");
    required.erase("step");
    required.erase("maximize");
    expect_values(evaluate("apply_adam_w", adam_inputs(DType::f32, {1}, {0.5}, {0.1}, {0.04}), required),
                  {0.976921935466319});
    // No decay term when weight_decay is 0, so an infinite var stays infinite; zero moments,
    // gradient and epsilon give 0/0 = NaN.
    expect_values(evaluate("apply_adam_w", adam_inputs(DType::f32, {INFINITY, 1}, {0.5, 0}, {0, 0}, {0, 0}),
                           adam_attrs(0.1, 0.9, 0.999, 0.0, 0.0, 1, false)),
                  {INFINITY, NAN});
}

TEST(OpsLevel2Elementwise, ApplyAdamWSamePrecisionRoundsToTheCaseDtype) {
    const auto out = evaluate("apply_adam_w", adam_inputs(DType::bf16, {1}, {0.5}, {0.125}, {0.25}),
                              adam_attrs(0.1, 0.9, 0.999, 0.01, 1e-8, 1, false), true);
    EXPECT_EQ(out[0], round_to_dtype(out[0], DType::bf16));
    EXPECT_NEAR(out[0], 0.98, 0.01);
}

TEST(OpsLevel2Elementwise, ApplyAdamWOutputInferenceAndErrors) {
    const auto good = adam_inputs(DType::f16, {1, 2}, {1, 2}, {1, 2}, {1, 2});
    const AttrMap attrs = adam_attrs(0.1, 0.9, 0.999, 0.0, 1e-8, 1, false);
    const Problem p = problem_for("apply_adam_w", good, attrs);
    ASSERT_EQ(p.outputs.size(), 1u);
    EXPECT_EQ(p.outputs[0].name, "y");
    EXPECT_EQ(p.outputs[0].tensors.at(0).dtype, DType::f16);
    auto bad_shape = good;
    bad_shape[2].shape = {3};
    EXPECT_THROW(problem_for("apply_adam_w", bad_shape, attrs), Error);
    auto bad_dtype = good;
    bad_dtype[3].dtype = DType::f32;
    EXPECT_THROW(problem_for("apply_adam_w", bad_dtype, attrs), Error);
    EXPECT_THROW(problem_for("apply_adam_w", good, adam_attrs(0.1, 1.0, 0.999, 0, 1e-8, 1, false)), Error);
    EXPECT_THROW(problem_for("apply_adam_w", good, adam_attrs(0.1, 0.9, -0.1, 0, 1e-8, 1, false)), Error);
    EXPECT_THROW(problem_for("apply_adam_w", good, adam_attrs(0.1, 0.9, 0.999, 0, 1e-8, 0, false)), Error);
    EXPECT_THROW(problem_for("apply_adam_w", good, adam_attrs(-0.1, 0.9, 0.999, 0, 1e-8, 1, false)), Error);
}

TEST(OpsLevel2Elementwise, ApplyAdamWWorkReadsFourTensors) {
    const auto in = adam_inputs(DType::bf16, std::vector<double>(100), std::vector<double>(100),
                                std::vector<double>(100), std::vector<double>(100));
    const WorkModel w = op_named("apply_adam_w").work(problem_for("apply_adam_w", in, adam_attrs(0.1, 0.9, 0.999, 0.1, 1e-8, 1, false)));
    EXPECT_EQ(w.bytes_read, 4 * 200);
    EXPECT_EQ(w.bytes_written, 200);
    EXPECT_EQ(vector_elements(w, OpClass::sqrt), 100);
    EXPECT_EQ(vector_elements(w, OpClass::div), 100);
    EXPECT_EQ(vector_elements(w, OpClass::fma), 400);
    const WorkModel no_decay =
        op_named("apply_adam_w").work(problem_for("apply_adam_w", in, adam_attrs(0.1, 0.9, 0.999, 0.0, 1e-8, 1, false)));
    EXPECT_EQ(vector_elements(no_decay, OpClass::fma), 300);
}

TEST(OpsLevel2Elementwise, ApplyAdamWCasesCoverEveryAttributePathAndDtype) {
    std::set<DType> dtypes;
    std::set<bool> maximize, decay;
    std::set<std::int64_t> steps;
    std::set<double> epsilons, beta1s;
    for (const auto& c : generated_cases("apply_adam_w", 20)) {
        dtypes.insert(c.inputs.at(0).dtype);
        maximize.insert(c.attrs.at("maximize").b);
        decay.insert(c.attrs.at("weight_decay").f != 0);
        steps.insert(c.attrs.at("step").i);
        epsilons.insert(c.attrs.at("epsilon").f);
        beta1s.insert(c.attrs.at("beta1").f);
        for (const auto& in : c.inputs) EXPECT_EQ(in.shapes, c.inputs.at(0).shapes);
        const auto& v = c.inputs.at(3);
        if (v.range && std::isfinite(v.range->lo) && v.range->lo != v.range->hi) {
            EXPECT_GE(v.range->lo, 0);
        }
    }
    EXPECT_EQ(dtypes.size(), 3u);
    EXPECT_EQ(maximize.size(), 2u);
    EXPECT_EQ(decay.size(), 2u);
    EXPECT_GE(steps.size(), 5u);
    EXPECT_TRUE(epsilons.count(0.0) && epsilons.count(1e-8));
    EXPECT_TRUE(beta1s.count(0.0));
}

TEST(OpsLevel2Elementwise, ApplyAdamWMakesTheSecondMomentNonNegative) {
    const Problem p = problem_for("apply_adam_w", adam_inputs(DType::f32, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}),
                                  adam_attrs(0.1, 0.9, 0.999, 0, 1e-8, 1, false));
    std::vector<Arg> args = allocate_args(p.inputs, false);
    for (std::size_t i = 0; i < 3; ++i) args[3].tensors[0].set(i, -1.0 - static_cast<double>(i));
    Rng rng(1);
    op_named("apply_adam_w").fix_inputs(p, args, rng);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(args[3].tensors[0].get(i), 1.0 + static_cast<double>(i));
}

// ---- gcd ---------------------------------------------------------------------------------

TEST(OpsLevel2Elementwise, GcdIsNonNegativeWithZerosAndNegatives) {
    const Shape s{8};
    for (DType dtype : {DType::i16, DType::i32, DType::i64})
        expect_values(evaluate("gcd", {{dtype, s, {12, -12, 12, -12, 0, -7, 0, 32767}},
                                       {dtype, s, {18, 18, -18, -18, 5, 0, 0, 32766}}}),
                      {6, 6, 6, 6, 5, 7, 0, 1}, 0);
}

TEST(OpsLevel2Elementwise, GcdBroadcastsAndKeepsLargeInt64Exact) {
    expect_values(evaluate("gcd", {{DType::i32, {2, 1}, {4, 9}}, {DType::i32, {3}, {6, 3, 0}}}), {2, 1, 4, 3, 3, 9}, 0);
    const double two62 = 4611686018427387904.0, two40 = 1099511627776.0;
    expect_values(evaluate("gcd", {{DType::i64, {2}, {two62, -two62}}, {DType::i64, {1}, {3 * two40}}}), {two40, two40}, 0);
}

TEST(OpsLevel2Elementwise, GcdAgreesWithStdGcdOnRandomPairs) {
    // The golden against the standard library's gcd on int64, magnitudes from 0 to 2^62, with
    // shared powers of two; multiples of 2048 so that every value is exact in fp64.
    std::mt19937_64 rng(19);
    std::vector<double> a, b, expected;
    auto draw = [&](int bits) {
        const auto v = static_cast<std::int64_t>(rng() >> (64 - bits)) / 2048 * 2048;
        return (rng() & 1) ? v : -v;
    };
    for (int i = 0; i < 2000; ++i) {
        const std::int64_t x = i % 50 == 0 ? 0 : draw(1 + i % 62), y = i % 70 == 0 ? 0 : draw(1 + (i * 7) % 62);
        a.push_back(static_cast<double>(x));
        b.push_back(static_cast<double>(y));
        expected.push_back(static_cast<double>(std::gcd(x, y)));
    }
    const Shape s{static_cast<std::int64_t>(a.size())};
    expect_values(evaluate("gcd", {{DType::i64, s, a}, {DType::i64, s, b}}), expected, 0);
}

TEST(OpsLevel2Elementwise, GcdOutputInferenceAndErrors) {
    const Problem p = problem_for("gcd", {{DType::i16, {5, 1}, {}}, {DType::i16, {3}, {}}});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{5, 3}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::i16);
    EXPECT_THROW(problem_for("gcd", {{DType::i32, {5}, {}}, {DType::i32, {3}, {}}}), Error);
    EXPECT_THROW(problem_for("gcd", {{DType::i32, {5}, {}}, {DType::i64, {5}, {}}}), Error);
}

TEST(OpsLevel2Elementwise, GcdInputsAvoidTheMostNegativeValueAndHoldZeros) {
    for (DType dtype : {DType::i16, DType::i32, DType::i64}) {
        const Problem p = problem_for("gcd", {{dtype, {200}, {}}, {dtype, {200}, {}}});
        std::vector<Arg> args = allocate_args(p.inputs, false);
        for (auto& a : args)
            for (std::size_t i = 0; i < 200; ++i) a.tensors[0].set(i, dtype_lowest(dtype));
        Rng rng(1);
        op_named("gcd").fix_inputs(p, args, rng);
        const Tensor& x1 = args[0].tensors[0];
        EXPECT_EQ(x1.get(96), 0) << dtype_name(dtype);   // every 97th element of x1
        EXPECT_EQ(args[1].tensors[0].get(88), 0) << dtype_name(dtype);  // every 89th of x2
        EXPECT_GT(x1.get(0), dtype_lowest(dtype)) << dtype_name(dtype);
        if (dtype == DType::i64) {  // redrawn in [-2^62, 2^62], exact in fp64
            const auto v = static_cast<const std::int64_t*>(x1.data())[0];
            EXPECT_LE(std::llabs(v), std::int64_t(1) << 62);
            EXPECT_EQ(static_cast<std::int64_t>(static_cast<double>(v)), v);
        } else {
            EXPECT_EQ(x1.get(0), dtype_lowest(dtype) + 1) << dtype_name(dtype);
        }
    }
}

TEST(OpsLevel2Elementwise, GcdWorkGrowsWithTheMagnitude) {
    auto work_for = [](ValueRange r) {
        const Proto proto = proto_for("gcd");
        CaseSpec c = case_for(proto, {{DType::i32, {100}, {}}, {DType::i32, {100}, {}}}, {});
        for (auto& in : c.inputs) in.range = r;
        return op_named("gcd").work(resolve_problem(proto, op_named("gcd"), c));
    };
    const WorkModel small = work_for({-1000, 1000}), large = work_for({-2147483648.0, 2147483647.0});
    EXPECT_EQ(small.bytes_read, 800);
    EXPECT_EQ(small.bytes_written, 400);
    // One subtract per Euclid step, 0.843 ln N steps on average (Knuth, TAOCP 4.5.3).
    const double per_ln = 12 * std::log(2.0) / (M_PI * M_PI);
    EXPECT_NEAR(vector_elements(small, OpClass::add), per_ln * std::log(1000.0) * 100, 1e-9);
    EXPECT_NEAR(vector_elements(large, OpClass::add), per_ln * std::log(2147483648.0) * 100, 1e-6);
}

TEST(OpsLevel2Elementwise, GcdCasesCoverEveryDtypeAndBroadcastDirection) {
    std::set<DType> dtypes;
    int broadcast = 0;
    for (const auto& c : generated_cases("gcd", 20)) {
        dtypes.insert(c.inputs.at(0).dtype);
        broadcast += c.inputs.at(0).shapes != c.inputs.at(1).shapes;
    }
    EXPECT_EQ(dtypes.size(), 3u);
    EXPECT_GE(broadcast, 10);
}

// ---- dynamic_quant -----------------------------------------------------------------------

TEST(OpsLevel2Elementwise, DynamicQuantRoundsHalfToEvenPerRow) {
    for (DType dtype : {DType::f16, DType::bf16}) {
        const auto out = evaluate_all("dynamic_quant", {{dtype, {3, 3}, {1, -2, 0.5, 0, 0, 0, 127, 1.5, -2.5}}});
        // Row 0: s = 2/127; 1/s = 63.5 -> 64 (even), -2/s = -127, 0.5/s = 31.75 -> 32.
        // Row 1: all zeros, s = 1e-12/127. Row 2: s = 1; 1.5 -> 2, -2.5 -> -2 (ties to even).
        expect_values(out.at(0).one().v, {64, -127, 32, 0, 0, 0, 127, 2, -2}, 0);
        expect_values(out.at(1).one().v, {2.0 / 127, 1e-12 / 127, 1}, 1e-15);
    }
}

TEST(OpsLevel2Elementwise, DynamicQuantSpecialValuesZeroTheirRow) {
    const auto out = evaluate_all("dynamic_quant", {{DType::f16, {2, 3}, {NAN, 1, 2, INFINITY, 1, -INFINITY}}});
    expect_values(out.at(0).one().v, {0, 0, 0, 0, 0, 0}, 0);
    expect_values(out.at(1).one().v, {NAN, INFINITY});
}

TEST(OpsLevel2Elementwise, DynamicQuantSamePrecisionMatchesTheGoldenHere) {
    const std::vector<TensorInput> in = {{DType::bf16, {2, 4}, {0.3, -0.7, 0.01, 0.5, -3, 2, 1, 0.125}}};
    const auto golden = evaluate_all("dynamic_quant", in);
    const auto same = evaluate_all("dynamic_quant", in, {}, true);
    expect_values(same.at(0).one().v, golden.at(0).one().v, 0);
    for (std::size_t r = 0; r < 2; ++r)
        EXPECT_NEAR(same.at(1).one().v[r], golden.at(1).one().v[r], 1e-7 * golden.at(1).one().v[r]);
}

TEST(OpsLevel2Elementwise, DynamicQuantOutputsAndErrors) {
    const Problem p = problem_for("dynamic_quant", {{DType::bf16, {4, 5, 6}, {}}});
    ASSERT_EQ(p.outputs.size(), 2u);
    EXPECT_EQ(p.outputs[0].name, "y");
    EXPECT_EQ(p.outputs[0].tensors.at(0).dtype, DType::i8);
    EXPECT_EQ(p.outputs[0].tensors.at(0).shape, (Shape{4, 5, 6}));
    EXPECT_EQ(p.outputs[1].name, "scale");
    EXPECT_EQ(p.outputs[1].tensors.at(0).dtype, DType::f32);
    EXPECT_EQ(p.outputs[1].tensors.at(0).shape, (Shape{4, 5}));
    EXPECT_THROW(problem_for("dynamic_quant", {{DType::f16, {6}, {}}}), Error);
    const Proto proto = proto_for("dynamic_quant");
    EXPECT_EQ(proto.tau_overrides.at(DType::i8), 1.0);  // int8 outputs may differ by 1
}

TEST(OpsLevel2Elementwise, DynamicQuantWorkReadsOnceAndWritesScales) {
    const WorkModel w = op_named("dynamic_quant").work(problem_for("dynamic_quant", {{DType::f16, {10, 20}, {}}}));
    EXPECT_EQ(w.bytes_read, 400);
    EXPECT_EQ(w.bytes_written, 200 + 10 * 4);
    EXPECT_EQ(w.parallel_items, 10);
    EXPECT_EQ(vector_elements(w, OpClass::abs), 200);
}

TEST(OpsLevel2Elementwise, DynamicQuantCasesCoverBothDtypesWithRowsOfRankTwoOrMore) {
    std::set<DType> dtypes;
    for (const auto& c : generated_cases("dynamic_quant", 20)) {
        dtypes.insert(c.inputs.at(0).dtype);
        EXPECT_GE(c.inputs.at(0).shapes.at(0).size(), 2u);
    }
    EXPECT_EQ(dtypes.size(), 2u);
}

}  // namespace
}  // namespace hb
