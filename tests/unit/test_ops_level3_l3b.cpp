// Level-3 operators conv_2d, depthwise_conv_2d, conv_3d_backprop_filter, dilation_2d,
// adaptive_avg_pool_3d and roi_align: goldens against hand-computed values on every attribute
// path, the im2col-over-BLAS convolution goldens against naive loops (strides, pads,
// dilations, groups), output inference and its errors, work models, input hooks, and case
// sampling through the generator.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/convolution.hpp"
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

constexpr double inf = std::numeric_limits<double>::infinity();
const double nan_value = std::numeric_limits<double>::quiet_NaN();

const Proto& proto_for(const std::string& op) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end())
        it = protos.emplace(op, load_proto(std::string(HB_SOURCE_DIR) + "/suite/level3/" + op + "/proto.yaml", op, 3))
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

Problem problem_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {}) {
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
    return resolve_problem(proto_for(op), op_named(op), c);
}

std::vector<double> evaluate(const std::string& op_name, const std::vector<In>& inputs, AttrMap attrs = {},
                             bool same_precision = false) {
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
    return out.at(0).one().v;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected, double rel = 1e-12) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        else if (std::isinf(expected[i])) EXPECT_EQ(got[i], expected[i]) << "element " << i;
        else EXPECT_NEAR(got[i], expected[i], rel * std::max(1.0, std::fabs(expected[i]))) << "element " << i;
    }
}

std::vector<double> random_values(std::int64_t n, std::uint64_t seed, double lo = -1, double hi = 1) {
    Rng rng(seed);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = rng.uniform(lo, hi);
    return v;
}

AttrValue ints(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}
AttrValue i(std::int64_t v) { return AttrValue::of_int(v); }
AttrValue s(const std::string& v) { return AttrValue::of_string(v); }
AttrValue b(bool v) { return AttrValue::of_bool(v); }
AttrValue f(double v) { return AttrValue::of_float(v); }

double vector_elements(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

std::vector<CaseSpec> generated_cases(const std::string& name, int count, std::uint64_t seed = 20260101) {
    const Proto& proto = proto_for(name);
    const auto cases = generate_cases(op_named(name), proto, profile_by_name("cpu"), seed, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(proto, op_named(name), c)) << name << " " << c.case_id;
    const auto problems = check_case_rules(cases, proto, op_named(name), profile_by_name("cpu"));
    EXPECT_TRUE(problems.empty()) << (problems.empty() ? "" : problems.front());
    return cases;
}

// ---------------------------------------------------------------- naive convolution loops

// The grouped N-d forward convolution straight from its formula, padded taps multiplied.
std::vector<double> naive_conv_forward(const ConvGeometry& g, const std::vector<double>& x, const std::vector<double>& w,
                                       const std::vector<double>& bias) {
    std::vector<double> y(static_cast<std::size_t>(g.batch * g.out_channels * g.out_volume()));
    const std::int64_t cg = g.group_in_channels(), og = g.group_out_channels();
    for (std::int64_t n = 0; n < g.batch; ++n)
        for (std::int64_t o = 0; o < g.out_channels; ++o)
            for (std::int64_t p0 = 0; p0 < g.out[0]; ++p0)
                for (std::int64_t p1 = 0; p1 < g.out[1]; ++p1)
                    for (std::int64_t p2 = 0; p2 < g.out[2]; ++p2) {
                        double sum = bias.empty() ? 0 : bias[static_cast<std::size_t>(o)];
                        for (std::int64_t c = 0; c < cg; ++c)
                            for (std::int64_t a = 0; a < g.kernel[0]; ++a)
                                for (std::int64_t bb = 0; bb < g.kernel[1]; ++bb)
                                    for (std::int64_t e = 0; e < g.kernel[2]; ++e) {
                                        const std::int64_t i0 = p0 * g.stride[0] + a * g.dilation[0] - g.pad_before[0];
                                        const std::int64_t i1 = p1 * g.stride[1] + bb * g.dilation[1] - g.pad_before[1];
                                        const std::int64_t i2 = p2 * g.stride[2] + e * g.dilation[2] - g.pad_before[2];
                                        const bool inside = i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1] && i2 >= 0 && i2 < g.in[2];
                                        const std::int64_t channel = (o / og) * cg + c;
                                        const double xv = inside ? x[static_cast<std::size_t>(
                                                                       (((n * g.in_channels + channel) * g.in[0] + i0) * g.in[1] + i1) * g.in[2] + i2)]
                                                                 : 0.0;
                                        sum += xv * w[static_cast<std::size_t>((((o * cg + c) * g.kernel[0] + a) * g.kernel[1] + bb) * g.kernel[2] + e)];
                                    }
                        y[static_cast<std::size_t>((((n * g.out_channels + o) * g.out[0] + p0) * g.out[1] + p1) * g.out[2] + p2)] = sum;
                    }
    return y;
}

// The weight gradient straight from its formula, padded positions multiplied.
std::vector<double> naive_conv_weight_grad(const ConvGeometry& g, const std::vector<double>& x,
                                           const std::vector<double>& grad) {
    const std::int64_t cg = g.group_in_channels(), og = g.group_out_channels();
    std::vector<double> dw(static_cast<std::size_t>(g.out_channels * cg * g.kernel_volume()), 0.0);
    for (std::int64_t o = 0; o < g.out_channels; ++o)
        for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t a = 0; a < g.kernel[0]; ++a)
                for (std::int64_t bb = 0; bb < g.kernel[1]; ++bb)
                    for (std::int64_t e = 0; e < g.kernel[2]; ++e) {
                        double sum = 0;
                        for (std::int64_t n = 0; n < g.batch; ++n)
                            for (std::int64_t p0 = 0; p0 < g.out[0]; ++p0)
                                for (std::int64_t p1 = 0; p1 < g.out[1]; ++p1)
                                    for (std::int64_t p2 = 0; p2 < g.out[2]; ++p2) {
                                        const std::int64_t i0 = p0 * g.stride[0] + a * g.dilation[0] - g.pad_before[0];
                                        const std::int64_t i1 = p1 * g.stride[1] + bb * g.dilation[1] - g.pad_before[1];
                                        const std::int64_t i2 = p2 * g.stride[2] + e * g.dilation[2] - g.pad_before[2];
                                        const bool inside = i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1] && i2 >= 0 && i2 < g.in[2];
                                        const std::int64_t channel = (o / og) * cg + c;
                                        const double xv = inside ? x[static_cast<std::size_t>(
                                                                       (((n * g.in_channels + channel) * g.in[0] + i0) * g.in[1] + i1) * g.in[2] + i2)]
                                                                 : 0.0;
                                        sum += xv * grad[static_cast<std::size_t>(
                                                        (((n * g.out_channels + o) * g.out[0] + p0) * g.out[1] + p1) * g.out[2] + p2)];
                                    }
                        dw[static_cast<std::size_t>((((o * cg + c) * g.kernel[0] + a) * g.kernel[1] + bb) * g.kernel[2] + e)] = sum;
                    }
    return dw;
}

struct Conv2dShape {
    std::int64_t n, cin, cout, h, w, kh, kw, sh, sw, dh, dw, top, bottom, left, right;
};

ConvGeometry geometry_2d(const Conv2dShape& c, std::int64_t groups = 1) {
    ConvGeometry g;
    g.dims = 2;
    g.batch = c.n, g.in_channels = c.cin, g.out_channels = c.cout, g.groups = groups;
    g.in = {c.h, c.w, 1}, g.kernel = {c.kh, c.kw, 1}, g.stride = {c.sh, c.sw, 1}, g.dilation = {c.dh, c.dw, 1};
    g.pad_before = {c.top, c.left, 0}, g.pad_after = {c.bottom, c.right, 0};
    for (std::size_t a = 0; a < 3; ++a)
        g.out[a] = conv_output_size(g.in[a], g.kernel[a], g.stride[a], g.dilation[a], g.pad_before[a], g.pad_after[a]);
    return g;
}

// ---------------------------------------------------------------- conv_2d

TEST(OpsLevel3L3b, Conv2dGoldenMatchesNaiveLoopOnEveryWindowKind) {
    const std::vector<Conv2dShape> shapes = {
        {1, 1, 1, 5, 6, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},   // valid
        {2, 3, 4, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   // same
        {2, 5, 3, 11, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},  // stride 2
        {1, 4, 6, 12, 13, 3, 3, 1, 1, 2, 3, 2, 2, 3, 3}, // dilations per axis
        {2, 3, 2, 9, 10, 5, 3, 2, 1, 1, 2, 0, 2, 1, 0},  // asymmetric pads, non-square kernel
        {1, 7, 5, 6, 6, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1},   // padded 1x1
        {3, 2, 3, 5, 5, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},   // 5x5 same
    };
    std::uint64_t seed = 11;
    for (const auto& c : shapes) {
        const ConvGeometry g = geometry_2d(c);
        const auto x = random_values(c.n * c.cin * c.h * c.w, seed++);
        const auto w = random_values(c.cout * c.cin * c.kh * c.kw, seed++);
        const auto bias = random_values(c.cout, seed++);
        const auto y = evaluate("conv_2d",
                                {{DType::f32, {c.n, c.cin, c.h, c.w}, x},
                                 {DType::f32, {c.cout, c.cin, c.kh, c.kw}, w},
                                 {DType::f32, {c.cout}, bias}},
                                {{"strides", ints({c.sh, c.sw})},
                                 {"pads", ints({c.top, c.bottom, c.left, c.right})},
                                 {"dilations", ints({c.dh, c.dw})}});
        SCOPED_TRACE("kernel " + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " stride " + std::to_string(c.sh));
        expect_values(y, naive_conv_forward(g, x, w, bias));
    }
}

TEST(OpsLevel3L3b, Conv2dHandComputedWithPaddingAndDilation) {
    // x = 1..9 in a 3x3 plane, filter [[1, 0], [0, 1]], bias 0.5: each output adds a pixel
    // and its lower-right neighbour.
    const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const std::vector<double> w = {1, 0, 0, 1};
    auto conv = [&](std::vector<std::int64_t> pads, std::vector<std::int64_t> strides, std::vector<std::int64_t> dil) {
        return evaluate("conv_2d", {{DType::f32, {1, 1, 3, 3}, x}, {DType::f32, {1, 1, 2, 2}, w}, {DType::f32, {1}, {0.5}}},
                        {{"strides", ints(strides)}, {"pads", ints(pads)}, {"dilations", ints(dil)}});
    };
    expect_values(conv({0, 0, 0, 0}, {1, 1}, {1, 1}), {6.5, 8.5, 12.5, 14.5});
    // Top and left padding of 1: output (0, 0) sees only x[0, 0] (its tap (1, 1)).
    expect_values(conv({1, 0, 1, 0}, {1, 1}, {1, 1}), {1.5, 2.5, 3.5, 4.5, 6.5, 8.5, 7.5, 12.5, 14.5});
    // Stride 2 with padding 1 on every side: x_pad[2i][2j] + x_pad[2i + 1][2j + 1], where
    // x_pad[r][c] = x[r - 1][c - 1]; only output (1, 1) has both taps inside (5 + 9).
    expect_values(conv({1, 1, 1, 1}, {2, 2}, {1, 1}), {1.5, 3.5, 7.5, 14.5});
    // Dilation 2: the taps are two apart, x[i, j] + x[i + 2, j + 2].
    expect_values(conv({0, 0, 0, 0}, {1, 1}, {2, 2}), {10.5});
}

TEST(OpsLevel3L3b, Conv2dPaddedTapTimesInfiniteFilterIsNaN) {
    // x all ones, filter tap (0, 0) infinite, pads 1: outputs whose tap (0, 0) reads padding
    // (top row and left column) are 0 * inf = NaN; the others are inf.
    const auto y = evaluate("conv_2d",
                            {{DType::f32, {1, 1, 2, 2}, {1, 1, 1, 1}},
                             {DType::f32, {1, 1, 2, 2}, {inf, 1, 1, 1}},
                             {DType::f32, {1}, {0}}},
                            {{"strides", ints({1, 1})}, {"pads", ints({1, 1, 1, 1})}});
    expect_values(y, {nan_value, nan_value, nan_value, nan_value, inf, inf, nan_value, inf, inf});
}

TEST(OpsLevel3L3b, Conv2dSamePrecisionRoundsToTheCaseDtype) {
    // 1 + 2^-12 is not a float16 value: the same-precision result rounds to one.
    const auto y = evaluate("conv_2d",
                            {{DType::f16, {1, 1, 1, 2}, {1, 1}},
                             {DType::f16, {1, 1, 1, 2}, {1, 0.000244140625}},
                             {DType::f16, {1}, {0}}},
                            {{"strides", ints({1, 1})}, {"pads", ints({0, 0, 0, 0})}}, true);
    expect_values(y, {1.0});
}

TEST(OpsLevel3L3b, Conv2dOutputShapeAndErrors) {
    const AttrMap attrs = {{"strides", ints({2, 1})}, {"pads", ints({1, 0, 2, 2})}, {"dilations", ints({1, 2})}};
    const Problem p = problem_for("conv_2d", {{DType::bf16, {2, 3, 10, 11}}, {DType::bf16, {5, 3, 3, 3}}, {DType::bf16, {5}}}, attrs);
    // Ho = (10 + 1 - 2 - 1) / 2 + 1 = 5; Wo = (11 + 4 - 4 - 1) / 1 + 1 = 11.
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{2, 5, 5, 11}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::bf16);
    auto rejects = [&](std::vector<In> inputs, AttrMap a) { EXPECT_THROW(problem_for("conv_2d", inputs, a), Error); };
    const In filter{DType::f32, {5, 3, 3, 3}}, bias{DType::f32, {5}};
    rejects({{DType::f32, {2, 4, 10, 11}}, filter, bias}, attrs);                              // Cin differs
    rejects({{DType::f32, {2, 3, 10, 11}}, filter, {DType::f32, {4}}}, attrs);                 // bias length
    rejects({{DType::f32, {2, 3, 10, 11}}, {DType::f16, {5, 3, 3, 3}}, bias}, attrs);          // dtypes differ
    rejects({{DType::f32, {3, 10, 11}}, filter, bias}, attrs);                                 // rank
    rejects({{DType::f32, {2, 3, 10, 11}}, filter, bias}, {{"strides", ints({2, 1})}, {"pads", ints({1, 1})}});
    rejects({{DType::f32, {2, 3, 10, 11}}, filter, bias}, {{"strides", ints({0, 1})}, {"pads", ints({0, 0, 0, 0})}});
    rejects({{DType::f32, {2, 3, 10, 11}}, filter, bias}, {{"strides", ints({1, 1})}, {"pads", ints({0, 0, -1, 0})}});
    rejects({{DType::f32, {2, 3, 2, 11}}, filter, bias}, {{"strides", ints({1, 1})}, {"pads", ints({0, 0, 0, 0})}});
    try {
        problem_for("conv_2d", {{DType::f32, {2, 3, 2, 11}}, filter, bias}, {{"strides", ints({1, 1})}, {"pads", ints({0, 0, 0, 0})}});
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("shorter than the dilated kernel"), std::string::npos) << e.what();
    }
}

TEST(OpsLevel3L3b, Conv2dWorkModelIsAnImplicitGemmOverReachableInput) {
    // 1x1 kernel with stride 2: only every other row and column of x is read.
    const Problem p = problem_for("conv_2d", {{DType::f16, {2, 8, 10, 12}}, {DType::f16, {16, 8, 1, 1}}, {DType::f16, {16}}},
                                  {{"strides", ints({2, 2})}, {"pads", ints({0, 0, 0, 0})}});
    const WorkModel w = op_named("conv_2d").work(p);
    ASSERT_EQ(w.contractions.size(), 1u);
    const Contraction& c = w.contractions[0];
    EXPECT_EQ(c.batch, 2);
    EXPECT_EQ(c.m, 16);
    EXPECT_EQ(c.n, 5 * 6);
    EXPECT_EQ(c.k, 8);
    EXPECT_EQ(c.dtype, DType::f16);
    EXPECT_EQ(w.bytes_read, (2 * 8 * 5 * 6 + 16 * 8 + 16) * 2.0);
    EXPECT_EQ(w.bytes_written, 2 * 16 * 5 * 6 * 2.0);
    EXPECT_TRUE(w.matrix.empty());
}

TEST(OpsLevel3L3b, Conv2dCasesCoverEveryWindowAndDtype) {
    std::set<std::string> windows;
    std::set<DType> dtypes;
    bool asymmetric = false;
    for (const auto& c : generated_cases("conv_2d", 20)) {
        windows.insert(c.attrs.at("strides").to_string() + c.attrs.at("pads").to_string() + c.attrs.at("dilations").to_string());
        dtypes.insert(c.inputs.at(0).dtype);
        const auto& pads = c.attrs.at("pads").ints;
        asymmetric = asymmetric || pads[0] != pads[1] || pads[2] != pads[3];
        const Problem p = resolve_problem(proto_for("conv_2d"), op_named("conv_2d"), c);
        // Every case within the work budget that keeps the suite fast.
        EXPECT_LE(p.outputs.at(0).tensors.at(0).numel() * c.inputs.at(1).shapes.at(0)[1] * c.inputs.at(1).shapes.at(0)[2] *
                      c.inputs.at(1).shapes.at(0)[3],
                  160'000'000)
            << c.case_id;
    }
    EXPECT_GE(windows.size(), 18u);
    EXPECT_EQ(dtypes.size(), 3u);
    EXPECT_TRUE(asymmetric);
}

// ---------------------------------------------------------------- depthwise_conv_2d

TEST(OpsLevel3L3b, DepthwiseGoldenMatchesNaiveLoop) {
    struct Shape2 {
        std::int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
    };
    const std::vector<Shape2> shapes = {
        {2, 3, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1}, {1, 4, 9, 11, 5, 3, 2, 1, 2, 0, 1, 2},
        {2, 5, 10, 10, 3, 3, 2, 2, 3, 3, 3, 3}, {1, 2, 6, 5, 1, 1, 1, 2, 1, 0, 1, 1}};
    std::uint64_t seed = 101;
    for (const auto& c : shapes) {
        const ConvGeometry g =
            geometry_2d({c.n, c.c, c.c, c.h, c.w, c.kh, c.kw, c.sh, c.sw, c.dh, c.dw, c.ph, c.ph, c.pw, c.pw}, c.c);
        const auto x = random_values(c.n * c.c * c.h * c.w, seed++);
        const auto w = random_values(c.c * c.kh * c.kw, seed++);
        const auto bias = random_values(c.c, seed++);
        const auto y = evaluate("depthwise_conv_2d",
                                {{DType::f32, {c.n, c.c, c.h, c.w}, x}, {DType::f32, {c.c, c.kh, c.kw}, w}, {DType::f32, {c.c}, bias}},
                                {{"kernelSize", ints({c.kh, c.kw})},
                                 {"stride", ints({c.sh, c.sw})},
                                 {"padding", ints({c.ph, c.pw})},
                                 {"dilation", ints({c.dh, c.dw})},
                                 {"groups", i(c.c)}});
        expect_values(y, naive_conv_forward(g, x, w, bias));
    }
}

TEST(OpsLevel3L3b, DepthwiseKeepsChannelsApartAndMultipliesPaddedTaps) {
    // Two channels of ones, weights 1 and 2 (1x1), padding 1: the border is bias (0 * w),
    // the inside w + bias; channel 1's weight is infinite, so its border is NaN.
    const AttrMap attrs = {{"kernelSize", ints({1, 1})}, {"stride", ints({1, 1})}, {"padding", ints({1, 1})},
                           {"dilation", ints({1, 1})}, {"groups", i(2)}};
    const auto y = evaluate("depthwise_conv_2d",
                            {{DType::f32, {1, 2, 1, 1}, {1, 1}}, {DType::f32, {2, 1, 1}, {2, inf}}, {DType::f32, {2}, {10, 20}}},
                            attrs);
    expect_values(y, {10, 10, 10, 10, 12, 10, 10, 10, 10,  //
                      nan_value, nan_value, nan_value, nan_value, inf, nan_value, nan_value, nan_value, nan_value});
}

TEST(OpsLevel3L3b, DepthwiseRejectsInconsistentKernelSizeAndGroups) {
    const In x{DType::f32, {1, 4, 8, 8}}, w{DType::f32, {4, 3, 3}}, bias{DType::f32, {4}};
    AttrMap attrs = {{"kernelSize", ints({3, 3})}, {"stride", ints({1, 1})}, {"padding", ints({1, 1})},
                     {"dilation", ints({1, 1})}, {"groups", i(4)}};
    EXPECT_EQ(problem_for("depthwise_conv_2d", {x, w, bias}, attrs).outputs.at(0).tensors.at(0).shape, (Shape{1, 4, 8, 8}));
    AttrMap bad_kernel = attrs;
    bad_kernel["kernelSize"] = ints({3, 5});
    EXPECT_THROW(problem_for("depthwise_conv_2d", {x, w, bias}, bad_kernel), Error);
    AttrMap bad_groups = attrs;
    bad_groups["groups"] = i(2);
    EXPECT_THROW(problem_for("depthwise_conv_2d", {x, w, bias}, bad_groups), Error);
    EXPECT_THROW(problem_for("depthwise_conv_2d", {x, {DType::f32, {3, 3, 3}}, bias}, attrs), Error);
    EXPECT_THROW(problem_for("depthwise_conv_2d", {x, {DType::f32, {4, 1, 3, 3}}, bias}, attrs), Error);
}

TEST(OpsLevel3L3b, DepthwiseWorkModelLetsTheVectorUnitTakeIt) {
    const Problem p = problem_for("depthwise_conv_2d", {{DType::f32, {2, 6, 9, 9}}, {DType::f32, {6, 3, 3}}, {DType::f32, {6}}},
                                  {{"kernelSize", ints({3, 3})}, {"stride", ints({1, 1})}, {"padding", ints({1, 1})},
                                   {"dilation", ints({1, 1})}, {"groups", i(6)}});
    const WorkModel w = op_named("depthwise_conv_2d").work(p);
    ASSERT_EQ(w.contractions.size(), 1u);
    EXPECT_EQ(w.contractions[0].batch, 12);
    EXPECT_EQ(w.contractions[0].m, 1);
    EXPECT_EQ(w.contractions[0].k, 9);
    EXPECT_EQ(w.contractions[0].n, 81);
    EXPECT_TRUE(w.contractions[0].vector_ok);
    EXPECT_EQ(w.bytes_read, (2 * 6 * 81 + 6 * 9 + 6) * 4.0);
}

TEST(OpsLevel3L3b, DepthwiseCasesCoverWindowsAndKeepGroupsEqualToChannels) {
    std::set<std::string> windows;
    std::set<DType> dtypes;
    for (const auto& c : generated_cases("depthwise_conv_2d", 20)) {
        windows.insert(c.attrs.at("stride").to_string() + c.attrs.at("padding").to_string() + c.attrs.at("dilation").to_string() +
                       c.attrs.at("kernelSize").to_string());
        dtypes.insert(c.inputs.at(0).dtype);
        EXPECT_EQ(c.attrs.at("groups").i, c.inputs.at(0).shapes.at(0)[1]);
    }
    EXPECT_EQ(windows.size(), 20u);
    EXPECT_EQ(dtypes.size(), 3u);
}

// ---------------------------------------------------------------- conv_3d_backprop_filter

struct Backprop3d {
    std::int64_t n, cin, cout, groups;
    std::array<std::int64_t, 3> in, kernel, stride, dilation;
    std::array<std::int64_t, 6> pads;
};

ConvGeometry geometry_3d(const Backprop3d& c) {
    ConvGeometry g;
    g.dims = 3;
    g.batch = c.n, g.in_channels = c.cin, g.out_channels = c.cout, g.groups = c.groups;
    g.in = c.in, g.kernel = c.kernel, g.stride = c.stride, g.dilation = c.dilation;
    for (std::size_t a = 0; a < 3; ++a) {
        g.pad_before[a] = c.pads[2 * a], g.pad_after[a] = c.pads[2 * a + 1];
        g.out[a] = conv_output_size(g.in[a], g.kernel[a], g.stride[a], g.dilation[a], g.pad_before[a], g.pad_after[a]);
    }
    return g;
}

AttrMap backprop_attrs(const Backprop3d& c) {
    return {{"strides", ints({c.stride[0], c.stride[1], c.stride[2]})},
            {"pads", ints({c.pads[0], c.pads[1], c.pads[2], c.pads[3], c.pads[4], c.pads[5]})},
            {"dilations", ints({c.dilation[0], c.dilation[1], c.dilation[2]})},
            {"groups", i(c.groups)},
            {"filter_size", ints({c.cout, c.cin / c.groups, c.kernel[0], c.kernel[1], c.kernel[2]})}};
}

TEST(OpsLevel3L3b, BackpropFilterGoldenMatchesNaiveLoop) {
    const std::vector<Backprop3d> shapes = {
        {2, 3, 4, 1, {4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}},
        {1, 4, 6, 2, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},
        {2, 4, 8, 4, {6, 7, 5}, {3, 1, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 0, 0, 1, 1}},
        {1, 3, 6, 3, {7, 6, 8}, {3, 3, 3}, {1, 2, 1}, {2, 1, 2}, {2, 1, 0, 2, 2, 2}},
        {2, 2, 2, 1, {5, 5, 5}, {1, 1, 1}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}},
    };
    std::uint64_t seed = 301;
    for (const auto& c : shapes) {
        const ConvGeometry g = geometry_3d(c);
        const auto x = random_values(c.n * c.cin * g.in_volume(), seed++);
        const auto grad = random_values(c.n * c.cout * g.out_volume(), seed++);
        const auto y = evaluate("conv_3d_backprop_filter",
                                {{DType::bf16, {c.n, c.cin, c.in[0], c.in[1], c.in[2]}, x},
                                 {DType::bf16, {c.n, c.cout, g.out[0], g.out[1], g.out[2]}, grad}},
                                backprop_attrs(c));
        SCOPED_TRACE("groups " + std::to_string(c.groups));
        expect_values(y, naive_conv_weight_grad(g, x, grad));
    }
}

TEST(OpsLevel3L3b, BackpropFilterHandComputedAndNaNThroughPadding) {
    // 1-D in effect: x = {1, 2, 3}, grad = {1, 1, 1} with kernel 3 and pad 1 on W:
    // y[e] = sum over v of grad[v] * x[v + e - 1] = {0+1+2, 1+2+3, 2+3+0} = {3, 6, 5}.
    const Backprop3d c{1, 1, 1, 1, {1, 1, 3}, {1, 1, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 1, 1}};
    expect_values(evaluate("conv_3d_backprop_filter", {{DType::f16, {1, 1, 1, 1, 3}, {1, 2, 3}}, {DType::f16, {1, 1, 1, 1, 3}, {1, 1, 1}}},
                           backprop_attrs(c)),
                  {3, 6, 5});
    // An infinite gradient at the first position meets the left padding at tap 0 only.
    expect_values(evaluate("conv_3d_backprop_filter", {{DType::f16, {1, 1, 1, 1, 3}, {1, 2, 3}}, {DType::f16, {1, 1, 1, 1, 3}, {inf, 1, 1}}},
                           backprop_attrs(c)),
                  {nan_value, inf, inf});
}

TEST(OpsLevel3L3b, BackpropFilterChecksGradAgainstBothPads) {
    // Pads [front, back, ...] = [1, 0, ...] make Do = D + 1 - 3 + 1 = D - 1 (not D, as a
    // reading that takes the front pad for both sides would have it).
    Backprop3d c{1, 2, 2, 1, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 0, 1, 1, 1, 1}};
    const In x{DType::f16, {1, 2, 6, 6, 6}};
    EXPECT_EQ(problem_for("conv_3d_backprop_filter", {x, {DType::f16, {1, 2, 5, 6, 6}}}, backprop_attrs(c)).outputs.at(0).tensors.at(0).shape,
              (Shape{2, 2, 3, 3, 3}));
    EXPECT_THROW(problem_for("conv_3d_backprop_filter", {x, {DType::f16, {1, 2, 6, 6, 6}}}, backprop_attrs(c)), Error);
    // filter_size must start with grad's channels and Cin / groups.
    AttrMap attrs = backprop_attrs(c);
    attrs["filter_size"] = ints({2, 1, 3, 3, 3});
    EXPECT_THROW(problem_for("conv_3d_backprop_filter", {x, {DType::f16, {1, 2, 5, 6, 6}}}, attrs), Error);
    c.groups = 3;  // does not divide 2 channels
    EXPECT_THROW(problem_for("conv_3d_backprop_filter", {x, {DType::f16, {1, 2, 5, 6, 6}}}, backprop_attrs(c)), Error);
    c.groups = 1;
    EXPECT_THROW(problem_for("conv_3d_backprop_filter", {x, {DType::bf16, {1, 2, 5, 6, 6}}}, backprop_attrs(c)), Error);
}

TEST(OpsLevel3L3b, BackpropFilterWorkModelContractsOverImagesAndPositions) {
    const Backprop3d c{2, 4, 6, 2, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}};
    const ConvGeometry g = geometry_3d(c);
    const Problem p = problem_for("conv_3d_backprop_filter",
                                  {{DType::bf16, {2, 4, 5, 6, 7}}, {DType::bf16, {2, 6, g.out[0], g.out[1], g.out[2]}}},
                                  backprop_attrs(c));
    const WorkModel w = op_named("conv_3d_backprop_filter").work(p);
    ASSERT_EQ(w.contractions.size(), 1u);
    EXPECT_EQ(w.contractions[0].batch, 2);           // groups
    EXPECT_EQ(w.contractions[0].m, 3);               // Cout / groups
    EXPECT_EQ(w.contractions[0].n, 2 * 27);          // Cin / groups * taps
    EXPECT_EQ(w.contractions[0].k, 2 * 5 * 6 * 7);   // N * Do * Ho * Wo ("same" padding)
    EXPECT_EQ(w.bytes_written, 6 * 2 * 27 * 2.0);
}

TEST(OpsLevel3L3b, BackpropFilterCasesCoverGroupsPadsAndAlignment) {
    std::set<std::int64_t> groups;
    std::set<DType> dtypes;
    bool asymmetric = false, depthwise = false;
    int aligned = 0;
    for (const auto& c : generated_cases("conv_3d_backprop_filter", 20)) {
        const std::int64_t g = c.attrs.at("groups").i;
        groups.insert(g == c.inputs.at(0).shapes.at(0)[1] ? -1 : g);
        depthwise = depthwise || (g > 1 && g == c.inputs.at(0).shapes.at(0)[1]);
        dtypes.insert(c.inputs.at(0).dtype);
        const auto& pads = c.attrs.at("pads").ints;
        asymmetric = asymmetric || pads[0] != pads[1] || pads[2] != pads[3] || pads[4] != pads[5];
        aligned += is_aligned(c.inputs.at(0).shapes.at(0), c.inputs.at(0).dtype) &&
                   is_aligned(c.inputs.at(1).shapes.at(0), c.inputs.at(1).dtype);
    }
    EXPECT_GE(groups.size(), 4u);
    EXPECT_TRUE(depthwise);
    EXPECT_EQ(dtypes.size(), 2u);
    EXPECT_TRUE(asymmetric);
    EXPECT_GE(aligned, 1);
}

// ---------------------------------------------------------------- dilation_2d

AttrMap dilation_attrs(std::vector<std::int64_t> strides, std::vector<std::int64_t> rates, const std::string& mode,
                       std::vector<std::int64_t> pads = {0, 0, 0, 0}, bool ceil_mode = false, const std::string& format = "NHWC") {
    return {{"strides", ints(std::move(strides))}, {"rates", ints(std::move(rates))}, {"padding_mode", s(mode)},
            {"pads", ints(std::move(pads))},       {"ceil_mode", b(ceil_mode)},      {"data_format", s(format)}};
}

TEST(OpsLevel3L3b, DilationSameValidAndExplicitByHand) {
    // One channel, x = 1..5 along W (H = 1), filter {0, 10}: y[j] = max(x[j] + 0, x[j+1] + 10).
    const In x{DType::f16, {1, 1, 5, 1}, {1, 2, 3, 4, 5}};
    const In filter{DType::f16, {1, 2, 1}, {0, 10}};
    // SAME, stride 1: Wo = 5, pad 1 split as 0 left, 1 right; the last reads the padding.
    expect_values(evaluate("dilation_2d", {x, filter}, dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "SAME")), {12, 13, 14, 15, 5});
    // VALID: Wo = 4.
    expect_values(evaluate("dilation_2d", {x, filter}, dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "VALID")), {12, 13, 14, 15});
    // VALID with rate 2 (taps two apart) and stride 2: Wo = floor((5 - 3) / 2) + 1 = 2.
    expect_values(evaluate("dilation_2d", {x, filter}, dilation_attrs({1, 1, 2, 1}, {1, 1, 2, 1}, "VALID")), {13, 15});
    // EXPLICIT pads 2 left: y = {-inf + 0 vs 1 + 10, ...}.
    expect_values(evaluate("dilation_2d", {x, filter}, dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "EXPLICIT", {0, 0, 2, 0})),
                  {-inf, 11, 12, 13, 14, 15});
    // EXPLICIT with ceil_mode and stride 2. W = 5, pad right 1: floor and ceiling agree on 3
    // outputs, the last reading the padding. W = 4, no pad: 2 either way. W = 4, pad right 1:
    // the ceiling gives 3, but the third window would start in the padding, so 2.
    expect_values(evaluate("dilation_2d", {x, filter}, dilation_attrs({1, 1, 2, 1}, {1, 1, 1, 1}, "EXPLICIT", {0, 0, 0, 1}, true)),
                  {12, 14, 5});
    expect_values(evaluate("dilation_2d", {{DType::f16, {1, 1, 4, 1}, {1, 2, 3, 4}}, filter},
                           dilation_attrs({1, 1, 2, 1}, {1, 1, 1, 1}, "EXPLICIT", {0, 0, 0, 0}, true)),
                  {12, 14});
    expect_values(evaluate("dilation_2d", {{DType::f16, {1, 1, 4, 1}, {1, 2, 3, 4}}, filter},
                           dilation_attrs({1, 1, 2, 1}, {1, 1, 1, 1}, "EXPLICIT", {0, 0, 0, 1}, true)),
                  {12, 14});
}

TEST(OpsLevel3L3b, DilationLayoutsAgreeAndSpecialValuesPropagate) {
    // x [1, 2, 2, 2] NHWC; the NCHW case holds the same values transposed.
    const std::vector<double> nhwc = {1, -1, 2, -2, 3, -3, 4, -4};
    const std::vector<double> nchw = {1, 2, 3, 4, -1, -2, -3, -4};
    const std::vector<double> f_hwc = {0, 1, 0, 1, 0, 1, 0, 1};  // [2, 2, 2]: channel 1 gets +1
    const std::vector<double> f_chw = {0, 0, 0, 0, 1, 1, 1, 1};
    const auto a = evaluate("dilation_2d", {{DType::f16, {1, 2, 2, 2}, nhwc}, {DType::f16, {2, 2, 2}, f_hwc}},
                            dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"));
    const auto c = evaluate("dilation_2d", {{DType::f16, {1, 2, 2, 2}, nchw}, {DType::f16, {2, 2, 2}, f_chw}},
                            dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {0, 0, 0, 0}, false, "NCHW"));
    // NHWC y[i, j, c] against NCHW y[c, i, j].
    for (int ci = 0; ci < 2; ++ci)
        for (int p = 0; p < 4; ++p) EXPECT_EQ(a[static_cast<std::size_t>(p * 2 + ci)], c[static_cast<std::size_t>(ci * 4 + p)]);
    expect_values(a, {4, -0.0 + 0, 4, -1, 4, -2, 4, -3});
    // -inf padding + +inf filter = NaN on the border; a NaN input wins every maximum it enters.
    const auto special = evaluate("dilation_2d", {{DType::f16, {1, 1, 3, 1}, {1, nan_value, 3}}, {DType::f16, {1, 2, 1}, {0, inf}}},
                                  dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"));
    expect_values(special, {nan_value, nan_value, nan_value});
    const auto border = evaluate("dilation_2d", {{DType::f16, {1, 1, 3, 1}, {1, 2, 3}}, {DType::f16, {1, 2, 1}, {0, inf}}},
                                 dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"));
    expect_values(border, {inf, inf, nan_value});
}

TEST(OpsLevel3L3b, DilationRejectsMisplacedPadsStridesAndModes) {
    const In x{DType::f16, {1, 8, 8, 3}}, filter{DType::f16, {3, 3, 3}};
    EXPECT_EQ(problem_for("dilation_2d", {x, filter}, dilation_attrs({1, 2, 2, 1}, {1, 1, 1, 1}, "SAME")).outputs.at(0).tensors.at(0).shape,
              (Shape{1, 4, 4, 3}));
    EXPECT_THROW(problem_for("dilation_2d", {x, filter}, dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {1, 1, 1, 1})), Error);
    EXPECT_THROW(problem_for("dilation_2d", {x, filter}, dilation_attrs({2, 1, 1, 1}, {1, 1, 1, 1}, "SAME")), Error);
    EXPECT_THROW(problem_for("dilation_2d", {x, filter}, dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "FULL")), Error);
    EXPECT_THROW(problem_for("dilation_2d", {x, filter}, dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {0, 0, 0, 0}, false, "NDHWC")),
                 Error);
    EXPECT_THROW(problem_for("dilation_2d", {x, {DType::f16, {3, 3, 4}}}, dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "SAME")), Error);
    EXPECT_THROW(problem_for("dilation_2d", {{DType::f16, {1, 2, 2, 3}}, filter}, dilation_attrs({1, 1, 1, 1}, {1, 3, 3, 1}, "VALID")),
                 Error);
}

TEST(OpsLevel3L3b, DilationWorkModelAndCases) {
    const Problem p = problem_for("dilation_2d", {{DType::f16, {2, 10, 12, 5}}, {DType::f16, {3, 3, 5}}},
                                  dilation_attrs({1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"));
    const WorkModel w = op_named("dilation_2d").work(p);
    EXPECT_EQ(vector_elements(w, OpClass::add), 2 * 10 * 12 * 5 * 9);
    EXPECT_EQ(vector_elements(w, OpClass::cmp), 2 * 10 * 12 * 5 * 9);
    EXPECT_EQ(w.bytes_read, (2 * 10 * 12 * 5 + 45) * 2.0);
    std::set<std::string> modes, formats;
    std::set<bool> ceil;
    int aligned = 0;
    for (const auto& c : generated_cases("dilation_2d", 20)) {
        modes.insert(c.attrs.at("padding_mode").s);
        formats.insert(c.attrs.at("data_format").s);
        ceil.insert(c.attrs.at("ceil_mode").b);
        aligned += is_aligned(c.inputs.at(0).shapes.at(0), DType::f16) && is_aligned(c.inputs.at(1).shapes.at(0), DType::f16);
    }
    EXPECT_EQ(modes, (std::set<std::string>{"SAME", "VALID", "EXPLICIT"}));
    EXPECT_EQ(formats, (std::set<std::string>{"NHWC", "NCHW"}));
    EXPECT_EQ(ceil.size(), 2u);
    EXPECT_GE(aligned, 1);
}

// ---------------------------------------------------------------- adaptive_avg_pool_3d

TEST(OpsLevel3L3b, AdaptivePoolOverlappingWindowsAndUpsamplingByHand) {
    // W = 5 to 3 outputs: windows [0, 2), [1, 4), [3, 5) (overlapping, uneven).
    expect_values(evaluate("adaptive_avg_pool_3d", {{DType::f32, {1, 1, 1, 1, 5}, {1, 2, 3, 4, 5}}},
                           {{"output_size", ints({1, 1, 3})}}),
                  {1.5, 3, 4.5});
    // W = 2 to 5 outputs (up-sampling): windows [0,1), [0,1), [0,2), [1,2), [1,2).
    expect_values(evaluate("adaptive_avg_pool_3d", {{DType::f32, {1, 1, 1, 1, 2}, {2, 4}}}, {{"output_size", ints({1, 1, 5})}}),
                  {2, 2, 3, 4, 4});
    // 2 x 2 x 2 to global.
    expect_values(evaluate("adaptive_avg_pool_3d", {{DType::bf16, {1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}}},
                           {{"output_size", ints({1, 1, 1})}}),
                  {4.5});
    // Infinities of both signs in one window give NaN; alone they stay infinite.
    expect_values(evaluate("adaptive_avg_pool_3d", {{DType::f16, {1, 1, 1, 1, 4}, {inf, -inf, inf, 1}}},
                           {{"output_size", ints({1, 1, 2})}}),
                  {nan_value, inf});
}

TEST(OpsLevel3L3b, AdaptivePoolShapeErrorsAndSeparableWork) {
    const Problem p = problem_for("adaptive_avg_pool_3d", {{DType::f32, {2, 3, 4, 6, 8}}}, {{"output_size", ints({2, 3, 4})}});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{2, 3, 2, 3, 4}));
    const WorkModel w = op_named("adaptive_avg_pool_3d").work(p);
    EXPECT_EQ(w.bytes_read, 2 * 3 * 4 * 6 * 8 * 4.0);
    // Divisible windows: the cheapest order reduces W (4*6*8), then H (4*4*6), then D (3*4*4),
    // 192 + 96 + 48 = 336 additions per plane.
    EXPECT_EQ(vector_elements(w, OpClass::add), 6 * 336.0);
    EXPECT_EQ(vector_elements(w, OpClass::mul), 2 * 3 * 2 * 3 * 4.0);
    EXPECT_THROW(problem_for("adaptive_avg_pool_3d", {{DType::f32, {2, 3, 4, 6}}}, {{"output_size", ints({2, 3, 4})}}), Error);
    EXPECT_THROW(problem_for("adaptive_avg_pool_3d", {{DType::f32, {2, 3, 4, 6, 8}}}, {{"output_size", ints({2, 3})}}), Error);
    EXPECT_THROW(problem_for("adaptive_avg_pool_3d", {{DType::f32, {2, 3, 4, 6, 8}}}, {{"output_size", ints({2, 0, 1})}}), Error);
}

TEST(OpsLevel3L3b, AdaptivePoolCasesCoverEveryWindowKind) {
    bool divisible = false, overlapping = false, global = false, upsampling = false;
    std::set<DType> dtypes;
    int aligned = 0;
    for (const auto& c : generated_cases("adaptive_avg_pool_3d", 20)) {
        const Shape& x = c.inputs.at(0).shapes.at(0);
        const auto& o = c.attrs.at("output_size").ints;
        dtypes.insert(c.inputs.at(0).dtype);
        aligned += is_aligned(x, c.inputs.at(0).dtype);
        global = global || (o[0] == 1 && o[1] == 1 && o[2] == 1);
        for (std::size_t a = 0; a < 3; ++a) {
            divisible = divisible || (o[a] > 1 && o[a] < x[2 + a] && x[2 + a] % o[a] == 0);
            overlapping = overlapping || x[2 + a] % o[a] != 0;
            upsampling = upsampling || o[a] > x[2 + a];
        }
    }
    EXPECT_TRUE(divisible && overlapping && global && upsampling);
    EXPECT_EQ(dtypes.size(), 3u);
    EXPECT_GE(aligned, 1);
}

// ---------------------------------------------------------------- roi_align

AttrMap roi_attrs(std::int64_t oh, std::int64_t ow, double scale, std::int64_t ratio, bool aligned) {
    return {{"outputHeight", i(oh)}, {"outputWidth", i(ow)}, {"spatial_scale", f(scale)}, {"sampling_ratio", i(ratio)},
            {"aligned", b(aligned)}};
}

TEST(OpsLevel3L3b, RoiAlignSamplesBilinearlyByHand) {
    // x[r, c] = 10 r + c on a 4 x 5 map: bilinear sampling returns 10 yy + xx exactly, so a
    // bin's average is 10 * (its sample rows' mean) + (its columns' mean).
    std::vector<double> x;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 5; ++c) x.push_back(10 * r + c);
    // Box (batch 0, x0 1, y0 0.5, x1 3, y1 2.5), not aligned, 2 x 2 bins, one sample each:
    // bin size 1 x 1, samples at y = 1, 2 and x = 1.5, 2.5.
    expect_values(evaluate("roi_align", {{DType::f32, {1, 1, 4, 5}, x}, {DType::f32, {1, 5}, {0, 1, 0.5, 3, 2.5}}},
                           roi_attrs(2, 2, 1.0, 1, false)),
                  {11.5, 12.5, 21.5, 22.5}, 1e-12);
    // aligned shifts every coordinate by -0.5.
    expect_values(evaluate("roi_align", {{DType::f32, {1, 1, 4, 5}, x}, {DType::f32, {1, 5}, {0, 1, 0.5, 3, 2.5}}},
                           roi_attrs(2, 2, 1.0, 1, true)),
                  {6, 7, 16, 17}, 1e-12);
    // spatial_scale 0.5 halves the box; 2 samples per axis average positions 1/4 and 3/4 of a bin.
    expect_values(evaluate("roi_align", {{DType::f32, {1, 1, 4, 5}, x}, {DType::f32, {1, 5}, {0, 2, 2, 6, 6}}},
                           roi_attrs(1, 1, 0.5, 2, false)),
                  {22}, 1e-12);
    // Adaptive sampling: a 3-wide, 2-high box over 1 x 1 bins takes ceil(2) x ceil(3) samples.
    expect_values(evaluate("roi_align", {{DType::f32, {1, 1, 4, 5}, x}, {DType::f32, {1, 5}, {0, 0, 0, 3, 2}}},
                           roi_attrs(1, 1, 1.0, 0, false)),
                  {11.5}, 1e-12);
    // The last row is repeated past H - 1: a sample at y = 3.5 reads row 3.
    expect_values(evaluate("roi_align", {{DType::f32, {1, 1, 4, 5}, x}, {DType::f32, {1, 5}, {0, 0, 3, 1, 4}}},
                           roi_attrs(1, 1, 1.0, 1, false)),
                  {30.5}, 1e-12);
    // The second batch image; not-aligned boxes are at least 1 x 1.
    std::vector<double> two = x;
    for (double v : x) two.push_back(v + 100);
    expect_values(evaluate("roi_align", {{DType::f16, {2, 1, 4, 5}, two}, {DType::f16, {1, 5}, {1, 1, 1, 1, 1}}},
                           roi_attrs(1, 1, 1.0, 1, false)),
                  {100 + 15 + 1.5 - 0.0}, 1e-12);
}

TEST(OpsLevel3L3b, RoiAlignPropagatesNaNFromEveryTapTouched) {
    const std::vector<double> x = {1, nan_value, 3, 4};  // 2 x 2
    const auto y = evaluate("roi_align", {{DType::f32, {1, 1, 2, 2}, x}, {DType::f32, {1, 5}, {0, 0, 0, 1, 1}}},
                            roi_attrs(1, 1, 1.0, 1, false));
    EXPECT_TRUE(std::isnan(y[0]));  // sample (0.5, 0.5) weighs all four pixels
}

TEST(OpsLevel3L3b, RoiAlignShapeErrorsAndWorkModel) {
    const Problem p = problem_for("roi_align", {{DType::f16, {2, 8, 16, 20}}, {DType::f16, {30, 5}}}, roi_attrs(7, 5, 0.25, 2, true));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{30, 8, 7, 5}));
    const WorkModel w = op_named("roi_align").work(p);
    const double outputs = 30 * 8 * 7 * 5;
    EXPECT_EQ(vector_elements(w, OpClass::select), 4 * 4 * outputs);
    EXPECT_EQ(w.bytes_read, 30 * 5 * 2 + std::min(2 * 8 * 16 * 20 * 2.0, 4 * 4 * outputs * 2));
    EXPECT_THROW(problem_for("roi_align", {{DType::f16, {2, 8, 16, 20}}, {DType::f16, {30, 4}}}, roi_attrs(7, 5, 0.25, 2, true)), Error);
    EXPECT_THROW(problem_for("roi_align", {{DType::f16, {2, 8, 16, 20}}, {DType::f32, {30, 5}}}, roi_attrs(7, 5, 0.25, 2, true)), Error);
    EXPECT_THROW(problem_for("roi_align", {{DType::f16, {2, 8, 16, 20}}, {DType::f16, {30, 5}}}, roi_attrs(0, 5, 0.25, 2, true)), Error);
    EXPECT_THROW(problem_for("roi_align", {{DType::f16, {2, 8, 16, 20}}, {DType::f16, {30, 5}}}, roi_attrs(7, 5, 0, 2, true)), Error);
}

TEST(OpsLevel3L3b, RoiAlignInputHookDrawsBoxesInsideTheMapAwayFromGridTies) {
    const Problem p = problem_for("roi_align", {{DType::f16, {3, 4, 33, 40}}, {DType::f16, {500, 5}}}, roi_attrs(4, 3, 0.125, 0, false));
    const auto inputs = generate_inputs(p, op_named("roi_align"), 0);
    const Tensor& boxes = inputs.at(1).tensors.at(0);
    std::set<int> batches;
    for (std::int64_t k = 0; k < 500; ++k) {
        const auto row = static_cast<std::size_t>(k * 5);
        const double batch = boxes.get(row), x0 = boxes.get(row + 1), y0 = boxes.get(row + 2), x1 = boxes.get(row + 3),
                     y1 = boxes.get(row + 4);
        EXPECT_EQ(batch, std::floor(batch));
        batches.insert(static_cast<int>(batch));
        EXPECT_GE(x0, 0);
        EXPECT_GE(y0, 0);
        EXPECT_GT(x1, x0);
        EXPECT_GT(y1, y0);
        EXPECT_LE(x1 * 0.125, 39.0 * 1.001);
        EXPECT_LE(y1 * 0.125, 32.0 * 1.001);
        // Adaptive sampling: each bin size keeps away from an integer.
        const double bin_h = std::max(y1 * 0.125 - y0 * 0.125, 1.0) / 4, bin_w = std::max(x1 * 0.125 - x0 * 0.125, 1.0) / 3;
        EXPECT_GE(std::fabs(bin_h - std::nearbyint(bin_h)), 1e-3);
        EXPECT_GE(std::fabs(bin_w - std::nearbyint(bin_w)), 1e-3);
    }
    EXPECT_EQ(batches, (std::set<int>{0, 1, 2}));
}

TEST(OpsLevel3L3b, RoiAlignCasesCoverSamplingScalesAndAlignment) {
    std::set<std::int64_t> ratios;
    std::set<double> scales;
    std::set<bool> aligned;
    std::set<DType> dtypes;
    for (const auto& c : generated_cases("roi_align", 20)) {
        ratios.insert(c.attrs.at("sampling_ratio").i);
        scales.insert(c.attrs.at("spatial_scale").f);
        aligned.insert(c.attrs.at("aligned").b);
        dtypes.insert(c.inputs.at(0).dtype);
        EXPECT_EQ(c.inputs.at(1).shapes.at(0)[1], 5);
    }
    EXPECT_EQ(ratios, (std::set<std::int64_t>{-1, 0, 1, 2, 4}));
    EXPECT_EQ(scales.size(), 5u);
    EXPECT_EQ(aligned.size(), 2u);
    EXPECT_EQ(dtypes.size(), 2u);
}

}  // namespace
}  // namespace hb
