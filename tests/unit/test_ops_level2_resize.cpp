// resize_bilinear: goldens against hand-computed values on every attribute path
// (output_size and scale_factor, align_corners both ways, up- and downsampling, the copy
// along a dim of unchanged size, weight-0 taps on infinite values), output inference and its
// errors, the work model, and the case sampler's coverage.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/case_rules.hpp"
#include "spec/case_sampler.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

const Proto& resize_proto() {
    static const Proto proto = load_proto(std::string(HB_SOURCE_DIR) + "/suite/level2/resize_bilinear/proto.yaml",
                                          "resize_bilinear", 2);
    return proto;
}

const Operator& resize_op() {
    const Operator* op = find_operator("resize_bilinear");
    if (!op) throw Error("operator resize_bilinear is not registered");
    return *op;
}

AttrValue ints(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

AttrValue floats(std::vector<double> v) {
    AttrValue a;
    a.type = AttrType::float_list;
    a.floats = std::move(v);
    return a;
}

AttrValue b(bool v) { return AttrValue::of_bool(v); }

Problem problem_for(DType dtype, const Shape& shape, AttrMap attrs) {
    CaseSpec c;
    c.op = "resize_bilinear";
    c.case_id = 1;
    c.attrs = std::move(attrs);
    CaseInput in;
    in.shapes = {shape};
    in.dtype = dtype;
    c.inputs.push_back(in);
    return resolve_problem(resize_proto(), resize_op(), c);
}

// The golden (or the same-precision reference) of x with values `x`.
std::vector<double> resize(const Shape& shape, const std::vector<double>& x, AttrMap attrs,
                           bool same_precision = false, DType dtype = DType::f32) {
    const Problem p = problem_for(dtype, shape, std::move(attrs));
    ValueArgs<double> in(1);
    in[0].name = "x";
    in[0].tensors.push_back({TensorSpec{dtype, shape}, x});
    ValueArgs<double> out = values_for_specs<double>(p.outputs);
    if (same_precision) resize_op().same_precision(p, in, out);
    else resize_op().golden(p, in, out);
    return out.at(0).one().v;
}

// One row of W values: x [1, 1, 1, W] (H = 1 in and out: a copy along H).
std::vector<double> resize_row(const std::vector<double>& x, AttrMap attrs) {
    return resize(Shape{1, 1, 1, static_cast<std::int64_t>(x.size())}, x, std::move(attrs));
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected, double rel = 1e-12) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        else if (std::isinf(expected[i])) EXPECT_EQ(got[i], expected[i]) << "element " << i;
        else EXPECT_NEAR(got[i], expected[i], rel * std::max(1.0, std::fabs(expected[i]))) << "element " << i;
    }
}

const std::vector<double> ramp = {1, 2, 3, 4};

TEST(OpsLevel2Resize, OutputSizeWithoutAlignCornersMapsPixelEdges) {
    // 4 -> 8: source = 0.5 (o + 0.5) - 0.5 = 0.5 o - 0.25, clamped at 0 (o = 0) and at the last
    // pixel (o = 7: 3.25 reads x[3] twice).
    expect_values(resize_row(ramp, {{"output_size", ints({1, 8})}}), {1, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4});
    // 4 -> 2: source = 2 (o + 0.5) - 0.5 = 2 o + 0.5.
    expect_values(resize_row(ramp, {{"output_size", ints({1, 2})}}), {1.5, 3.5});
    // 4 -> 3: scale 4/3, source 1/6, 3/2, 17/6.
    expect_values(resize_row(ramp, {{"output_size", ints({1, 3})}}), {1 + 1.0 / 6, 2.5, 3 + 5.0 / 6});
}

TEST(OpsLevel2Resize, AlignCornersMapsCornerCenters) {
    // 4 -> 7: scale (4 - 1) / (7 - 1) = 0.5; 4 -> 2: scale 3; 4 -> 1: scale 0 (the first pixel).
    const AttrMap up = {{"output_size", ints({1, 7})}, {"align_corners", b(true)}};
    expect_values(resize_row(ramp, up), {1, 1.5, 2, 2.5, 3, 3.5, 4});
    expect_values(resize_row(ramp, {{"output_size", ints({1, 2})}, {"align_corners", b(true)}}), {1, 4});
    expect_values(resize_row(ramp, {{"output_size", ints({1, 1})}, {"align_corners", b(true)}}), {1});
}

TEST(OpsLevel2Resize, ScaleFactorMapsByItsInverseNotInOverOut) {
    // W = 5, scale_factor 1.5: 7 outputs (floor 7.5), source = (o + 0.5) / 1.5 - 0.5, where
    // in / out = 5 / 7 would give 0.5714 at o = 1. x = o, so y is the (clamped) source.
    const std::vector<double> x = {0, 1, 2, 3, 4};
    expect_values(resize_row(x, {{"scale_factor", floats({1.0, 1.5})}}),
                  {0, 0.5, 7.0 / 6, 11.0 / 6, 2.5, 19.0 / 6, 23.0 / 6});
    expect_values(resize_row(x, {{"output_size", ints({1, 7})}}),
                  {0, 1.5 * 5 / 7 - 0.5, 2.5 * 5 / 7 - 0.5, 3.5 * 5 / 7 - 0.5, 4.5 * 5 / 7 - 0.5, 5.5 * 5 / 7 - 0.5,
                   4});  // 4.14 is past the last pixel: x[4] twice
    // align_corners: the factor only sizes the output; the scale is (5 - 1) / (7 - 1).
    expect_values(resize_row(x, {{"scale_factor", floats({1.0, 1.5})}, {"align_corners", b(true)}}),
                  {0, 2.0 / 3, 4.0 / 3, 2, 8.0 / 3, 10.0 / 3, 4});
    // Downsampling by 0.4: 2 outputs, source = 2.5 (o + 0.5) - 0.5 = 0.75, 3.25.
    expect_values(resize_row(x, {{"scale_factor", floats({1.0, 0.4})}}), {0.75, 3.25});
}

TEST(OpsLevel2Resize, InterpolatesRowsThenColumns) {
    // x [1, 1, 2, 2] = {0, 1, 2, 3} -> 3 x 3 with align_corners: the center is the mean.
    expect_values(resize(Shape{1, 1, 2, 2}, {0, 1, 2, 3}, {{"output_size", ints({3, 3})}, {"align_corners", b(true)}}),
                  {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3});
    // Two planes (N = 1, C = 2) resized independently, 2 x 1 -> 4 x 1 (pixel edges).
    expect_values(resize(Shape{1, 2, 2, 1}, {0, 4, 10, 30}, {{"output_size", ints({4, 1})}}),
                  {0, 1, 3, 4, 10, 15, 25, 30});
}

TEST(OpsLevel2Resize, UnchangedSizeIsACopyEvenWithAScaleFactor) {
    // H = 5 with scale 1.1: floor(5.5) = 5 = H, and PyTorch copies along H instead of mapping
    // by 1 / 1.1 (which would read 8.64 for row 1). W = 1 -> 2 repeats the single column.
    expect_values(resize(Shape{1, 1, 5, 1}, {0, 10, 20, 30, 40}, {{"scale_factor", floats({1.1, 2.0})}}),
                  {0, 0, 10, 10, 20, 20, 30, 30, 40, 40});
}

TEST(OpsLevel2Resize, InfiniteValueAtAWeightZeroTapIsNaN) {
    // x [1, 1, 2, 4]: row 0 = {1, inf, 3, 4}, row 1 all 1; align_corners to 3 x 7 (scale 0.5
    // along both). Along W, o = 0 reads x[0] * 1 + x[1] * 0 = NaN, o = 2 reads inf * 1 + 3 * 0,
    // o = 6 reads x[3] twice. Output row 0 is row 0 * 1 + row 1 * 0, row 1 the mean, row 2
    // row 1 alone (read twice): the infinity never reaches it.
    const std::vector<double> x = {1, INFINITY, 3, 4, 1, 1, 1, 1};
    expect_values(resize(Shape{1, 1, 2, 4}, x, {{"output_size", ints({3, 7})}, {"align_corners", b(true)}}),
                  {NAN, INFINITY, INFINITY, INFINITY, 3, 3.5, 4,  //
                   NAN, INFINITY, INFINITY, INFINITY, 2, 2.25, 2.5,  //
                   1, 1, 1, 1, 1, 1, 1});
    // A dim of unchanged size is a copy that still multiplies the same element by weight 0
    // (PyTorch's index1 = index0, lambda1 = 0): H = 1 -> 1 turns every infinity it reads
    // into NaN.
    expect_values(resize(Shape{1, 1, 1, 2}, {INFINITY, 1}, {{"output_size", ints({1, 3})}, {"align_corners", b(true)}}),
                  {NAN, NAN, 1});
    // A NaN reaches both neighbours.
    expect_values(resize_row({1, NAN, 3, 4}, {{"output_size", ints({1, 2})}}), {NAN, 3.5});
}

TEST(OpsLevel2Resize, SamePrecisionUsesFloatCoordinatesAndRoundsOnce) {
    // 3 -> 7: in / out and the source coordinates are rounded in fp32; the result stays within
    // a few fp32 ulps of the golden's fp64 coordinates.
    const std::vector<double> x = {0, 100, 200};
    const AttrMap attrs = {{"output_size", ints({1, 7})}};
    const auto golden = resize(Shape{1, 1, 1, 3}, x, attrs);
    const auto sp = resize(Shape{1, 1, 1, 3}, x, attrs, true);
    expect_values(sp, golden, 1e-5);
    // float16: 1 and 1 + 2^-10 interpolated half-way is 1 + 2^-11, which rounds to even (1).
    const auto half = resize(Shape{1, 1, 1, 2}, {1, 1 + std::ldexp(1.0, -10)},
                             {{"output_size", ints({1, 3})}, {"align_corners", b(true)}}, true, DType::f16);
    expect_values(half, {1, 1, 1 + std::ldexp(1.0, -10)}, 0);
}

TEST(OpsLevel2Resize, OutputShapeAndErrors) {
    auto shape_of = [](const Shape& x, AttrMap attrs) {
        return problem_for(DType::bf16, x, std::move(attrs)).outputs.at(0).tensors.at(0);
    };
    EXPECT_EQ(shape_of({2, 3, 10, 9}, {{"output_size", ints({7, 20})}}).shape, (Shape{2, 3, 7, 20}));
    EXPECT_EQ(shape_of({2, 3, 10, 9}, {{"output_size", ints({7, 20})}}).dtype, DType::bf16);
    // floor(in * scale): 15 and floor(4.5) = 4; floor(100 * 0.29) = 28 (28.999999999999996).
    EXPECT_EQ(shape_of({2, 3, 10, 9}, {{"scale_factor", floats({1.5, 0.5})}}).shape, (Shape{2, 3, 15, 4}));
    EXPECT_EQ(shape_of({1, 1, 100, 100}, {{"scale_factor", floats({0.29, 2.0})}}).shape, (Shape{1, 1, 28, 200}));
    auto bad = [](const Shape& x, AttrMap attrs) { return problem_for(DType::f32, x, std::move(attrs)); };
    EXPECT_THROW(bad({2, 3, 10, 9}, {}), Error);  // neither
    EXPECT_THROW(bad({2, 3, 10, 9}, {{"output_size", ints({5, 5})}, {"scale_factor", floats({2.0, 2.0})}}), Error);
    EXPECT_THROW(bad({3, 10, 9}, {{"output_size", ints({5, 5})}}), Error);               // 3-D
    EXPECT_THROW(bad({2, 3, 10, 9}, {{"output_size", ints({0, 5})}}), Error);            // empty
    EXPECT_THROW(bad({2, 3, 10, 9}, {{"output_size", ints({5, 5, 5})}}), Error);         // three sizes
    EXPECT_THROW(bad({2, 3, 10, 9}, {{"scale_factor", floats({2.0})}}), Error);          // one factor
    EXPECT_THROW(bad({2, 3, 10, 9}, {{"scale_factor", floats({-2.0, 2.0})}}), Error);    // negative
    EXPECT_THROW(bad({2, 3, 10, 9}, {{"scale_factor", floats({0.05, 2.0})}}), Error);    // floor(0.5) = 0 rows
    EXPECT_THROW(bad({2, 3, 10, 9}, {{"output_size", AttrValue::of_int(5)}}), Error);    // not a list
}

TEST(OpsLevel2Resize, WorkModelReadsXOnceAndWritesYOnce) {
    const Problem p = problem_for(DType::f16, Shape{2, 3, 10, 9}, {{"output_size", ints({20, 18})}});
    const WorkModel w = resize_op().work(p);
    EXPECT_EQ(w.bytes_read, 2 * 3 * 10 * 9 * 2);
    EXPECT_EQ(w.bytes_written, 2 * 3 * 20 * 18 * 2);
    double fma = 0, mul = 0, cast = 0;
    for (const auto& v : w.vector) {
        if (v.op_class == OpClass::fma) {
            fma += v.elements;
            EXPECT_EQ(v.dtype, DType::f32);
        }
        if (v.op_class == OpClass::mul) mul += v.elements;
        if (v.op_class == OpClass::cast) cast += v.elements;
    }
    EXPECT_EQ(fma, 3 * 2 * 3 * 20 * 18);
    EXPECT_EQ(mul, 2 * 3 * 20 * 18);
    EXPECT_EQ(cast, 2 * 3 * 10 * 9 + 2 * 3 * 20 * 18);  // widen x, narrow y
    EXPECT_EQ(w.parallel_items, 2 * 3 * 20);
    EXPECT_EQ(w.innermost, 18);
}

// The direction of one dim: 0 up, 1 down.
int direction(std::int64_t in, std::int64_t out) { return out > in ? 0 : 1; }

TEST(OpsLevel2Resize, CasesCoverEveryPathAlignmentAndDirection) {
    const Proto& proto = resize_proto();
    for (std::uint64_t seed : {2026ull, 11ull, 20260101ull}) {
        const auto cases = generate_cases(resize_op(), proto, profile_by_name("cpu"), seed, 20);
        ASSERT_EQ(cases.size(), 20u);
        const auto problems = check_case_rules(cases, proto, resize_op(), profile_by_name("cpu"));
        EXPECT_TRUE(problems.empty()) << problems.front();
        std::set<std::string> seen;
        std::set<DType> dtypes;
        bool non_integer_scale = false;
        for (const auto& c : cases) {
            const Problem p = resolve_problem(proto, resize_op(), c);
            const Shape& x = c.inputs.at(0).shapes.at(0);
            const Shape& y = p.outputs.at(0).tensors.at(0).shape;
            ASSERT_NE(x[2], y[2]);  // never the copy along a dim
            ASSERT_NE(x[3], y[3]);
            const bool by_scale = c.attrs.count("scale_factor") > 0;
            const bool align = c.attrs.at("align_corners").b;
            const int dh = direction(x[2], y[2]), dw = direction(x[3], y[3]);
            seen.insert(std::string(by_scale ? "scale" : "size") + (align ? "/align" : "/edges") +
                        (dh == dw ? (dh == 0 ? "/up" : "/down") : "/mixed"));
            dtypes.insert(c.inputs.at(0).dtype);
            if (by_scale)
                for (double f : c.attrs.at("scale_factor").floats) non_integer_scale |= f != std::floor(f) && f > 1;
            // Cases with infinities: exact ratios, so that weight-0 taps are the same in fp32
            // and fp64 (see exact_axis in op.cpp).
            const auto& range = c.inputs.at(0).range;
            if (range && std::isinf(range->hi)) {
                for (int k : {2, 3}) {
                    const double in = static_cast<double>(x[static_cast<std::size_t>(k)]);
                    const double out = static_cast<double>(y[static_cast<std::size_t>(k)]);
                    const double ratio = align ? (in - 1) / (out - 1)
                                         : by_scale ? 1 / c.attrs.at("scale_factor").floats[static_cast<std::size_t>(k - 2)]
                                                    : in / out;
                    EXPECT_TRUE(ratio == 0.5 || ratio == 2 || ratio == 4 || ratio == 3 || ratio == 5)
                        << "case " << c.case_id << " dim " << k << " ratio " << ratio;
                }
            }
        }
        EXPECT_EQ(seen.size(), 12u) << "seed " << seed;
        EXPECT_EQ(dtypes.size(), 3u);
        EXPECT_TRUE(non_integer_scale);
    }
}

}  // namespace
}  // namespace hb
