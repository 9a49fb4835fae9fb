// Level-1 operators gelu, mish, sigmoid and masked_scale: goldens against hand-computed
// values on every attribute path, output inference, work models, and case sampling through
// the hidden-split generator.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/case_sampler.hpp"
#include "spec/profile.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

const std::vector<DType> float_dtypes = {DType::f16, DType::f32, DType::bf16};
const std::vector<DType> mask_dtypes = {DType::i8, DType::u8, DType::f16, DType::bf16, DType::f32};

InputDef input_def(const std::string& name, std::vector<DType> dtypes) {
    InputDef d;
    d.name = name;
    d.dtypes = std::move(dtypes);
    return d;
}

AttrDef attr_def(const std::string& name, AttrType type, AttrValue default_value) {
    AttrDef a;
    a.name = name;
    a.type = type;
    a.default_value = std::move(default_value);
    return a;
}

// The interfaces of the reference protos, written out here (the reference files may not be
// read by tests).
Proto proto_for(const std::string& op) {
    Proto p;
    p.op = op;
    p.level = 1;
    p.file = "(test) " + op + "/proto.yaml";
    p.inputs.push_back(input_def("x", float_dtypes));
    if (op == "masked_scale") p.inputs.push_back(input_def("mask", mask_dtypes));
    if (op == "gelu") p.attrs.push_back(attr_def("approximate", AttrType::s, AttrValue::of_string("none")));
    if (op == "masked_scale") p.attrs.push_back(attr_def("scale", AttrType::f, AttrValue::of_float(1.0)));
    OutputDef y;
    y.name = "y";
    y.dtypes = float_dtypes;
    p.outputs.push_back(y);
    return p;
}

const Operator& op_named(const std::string& name) {
    const Operator* op = find_operator(name);
    if (!op) throw Error("operator " + name + " is not registered");
    return *op;
}

struct TensorInput {
    DType dtype;
    std::vector<double> values;
};

CaseSpec case_for(const Proto& proto, const std::vector<TensorInput>& inputs, const Shape& shape, AttrMap attrs) {
    CaseSpec c;
    c.op = proto.op;
    c.case_id = 1;
    c.attrs = std::move(attrs);
    for (const auto& in : inputs) {
        CaseInput ci;
        ci.shapes = {shape};
        ci.dtype = in.dtype;
        c.inputs.push_back(ci);
    }
    return c;
}

// The golden (or the same-precision reference) of a one-dimensional case.
std::vector<double> evaluate(const std::string& op_name, const std::vector<TensorInput>& inputs, AttrMap attrs = {},
                             bool same_precision = false) {
    const Operator& op = op_named(op_name);
    const Proto proto = proto_for(op_name);
    const Shape shape{static_cast<std::int64_t>(inputs.at(0).values.size())};
    const Problem problem = resolve_problem(proto, op, case_for(proto, inputs, shape, std::move(attrs)));
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = proto.inputs[k].name;
        in[k].tensors.push_back({TensorSpec{inputs[k].dtype, shape}, inputs[k].values});
    }
    ValueArgs<double> out = values_for_specs<double>(problem.outputs);
    if (same_precision) op.same_precision(problem, in, out);
    else op.golden(problem, in, out);
    return out.at(0).one().v;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        } else if (std::isinf(expected[i])) {
            EXPECT_EQ(got[i], expected[i]) << "element " << i;
        } else {
            EXPECT_NEAR(got[i], expected[i], 1e-14 * std::fabs(expected[i])) << "element " << i;
            EXPECT_EQ(std::signbit(got[i]), std::signbit(expected[i])) << "element " << i;
        }
    }
}

TEST(OpsLevel1A, GeluExactMatchesErfValues) {
    const std::vector<double> x = {1, -1, 2, -3, 0.5, 0, INFINITY, -INFINITY};
    // 0.5*x*(1 + erf(x/sqrt2)); at -inf the limit -0, not the formula's -inf * 0 = NaN.
    const auto y = evaluate("gelu", {{DType::f32, x}}, {{"approximate", AttrValue::of_string("none")}});
    expect_values(y, {0.8413447460685429, -0.15865525393145707, 1.9544997361036416, -0.00404969409489031,
                      0.34573123063700656, 0, INFINITY, -0.0});
    EXPECT_TRUE(std::signbit(y.back()));
    // The default is "none".
    expect_values(evaluate("gelu", {{DType::f32, {1}}}), {0.8413447460685429});
}

TEST(OpsLevel1A, GeluTanhMatchesTanhValues) {
    const std::vector<double> x = {1, -1, 2, -3, 0.5, 0};
    expect_values(evaluate("gelu", {{DType::f32, x}}, {{"approximate", AttrValue::of_string("tanh")}}),
                  {0.8411919906082768, -0.15880800939172324, 1.954597694087775, -0.0036373920817729943,
                   0.34571400982514394, 0});
}

TEST(OpsLevel1A, GeluSamePrecisionRoundsToTheCaseDtype) {
    const auto out = evaluate("gelu", {{DType::f16, {1, -3}}}, {}, true);
    EXPECT_EQ(out[0], round_to_dtype(0.8413447460685429, DType::f16));
    EXPECT_EQ(out[1], round_to_dtype(-0.00404969409489031, DType::f16));
}

TEST(OpsLevel1A, GeluRejectsAnUnknownMode) {
    EXPECT_THROW(evaluate("gelu", {{DType::f32, {1}}}, {{"approximate", AttrValue::of_string("erf")}}), Error);
}

TEST(OpsLevel1A, MishMatchesSoftplusTanhValues) {
    // x*tanh(log1p(e^x)); above 20 softplus is x itself; at -inf the limit -0, not -inf * 0.
    expect_values(evaluate("mish", {{DType::f32, {1, -1, 2, -3, 0.5, 0, -20, 30, 1000, INFINITY, -INFINITY}}}),
                  {0.8650983882673103, -0.30340146137410895, 1.9439589595339946, -0.1456474612756246,
                   0.3752452113048951, 0, -4.122307240628762e-08, 30, 1000, INFINITY, -0.0});
}

TEST(OpsLevel1A, MishSamePrecisionDoesNotOverflowForLargeInputs) {
    const auto out = evaluate("mish", {{DType::f32, {100, 1e30, -200}}}, {}, true);
    EXPECT_EQ(out[0], 100);
    EXPECT_EQ(out[1], round_to_dtype(1e30, DType::f32));
    EXPECT_EQ(out[2], 0);  // -200 * e^-200 underflows fp32
}

TEST(OpsLevel1A, SigmoidMatchesLogisticValues) {
    expect_values(evaluate("sigmoid", {{DType::f32, {0, 1, -1, 2, -3, -100, INFINITY, -INFINITY}}}),
                  {0.5, 0.7310585786300049, 0.2689414213699951, 0.8807970779778823, 0.04742587317756678,
                   3.7200759760208356e-44, 1, 0});
}

TEST(OpsLevel1A, MaskedScaleWithIntegerMasks) {
    const std::vector<double> x = {1.5, -2, 3, 0.25};
    for (DType mask_dtype : {DType::i8, DType::u8}) {
        const std::vector<TensorInput> in = {{DType::f16, x}, {mask_dtype, {1, 0, 1, 1}}};
        expect_values(evaluate("masked_scale", in, {{"scale", AttrValue::of_float(-0.5)}}), {-0.75, 0, -1.5, -0.125});
        expect_values(evaluate("masked_scale", in, {{"scale", AttrValue::of_float(0.0)}}), {0, -0.0, 0, 0});
        expect_values(evaluate("masked_scale", in), {1.5, -0.0, 3, 0.25});  // default scale 1
    }
}

TEST(OpsLevel1A, MaskedScaleWithFloatMasks) {
    const std::vector<double> x = {1.5, -2, 3, 0.25};
    for (DType mask_dtype : {DType::f16, DType::bf16, DType::f32}) {
        const std::vector<TensorInput> in = {{DType::f32, x}, {mask_dtype, {0.5, 1, 0, 0.25}}};
        expect_values(evaluate("masked_scale", in, {{"scale", AttrValue::of_float(2.0)}}), {1.5, -4, 0, 0.125});
        expect_values(evaluate("masked_scale", in, {{"scale", AttrValue::of_float(-1.0)}}), {-0.75, 2, -0.0, -0.0625});
    }
}

TEST(OpsLevel1A, MaskedScaleOutputHasXsDtypeAndShape) {
    const Proto proto = proto_for("masked_scale");
    const Shape shape{2, 3, 5};
    const Problem p = resolve_problem(proto, op_named("masked_scale"),
                                      case_for(proto, {{DType::bf16, {}}, {DType::u8, {}}}, shape, {}));
    ASSERT_EQ(p.outputs.size(), 1u);
    EXPECT_EQ(p.outputs[0].name, "y");
    EXPECT_EQ(p.outputs[0].tensors.at(0).dtype, DType::bf16);
    EXPECT_EQ(p.outputs[0].tensors.at(0).shape, shape);

    CaseSpec mismatched = case_for(proto, {{DType::f32, {}}, {DType::i8, {}}}, shape, {});
    mismatched.inputs[1].shapes = {Shape{2, 3, 4}};
    EXPECT_THROW(resolve_problem(proto, op_named("masked_scale"), mismatched), Error);
}

TEST(OpsLevel1A, UnaryOutputsHaveTheInputsDtypeAndShape) {
    for (const char* name : {"gelu", "mish", "sigmoid"}) {
        const Proto proto = proto_for(name);
        for (const Shape& shape : {Shape{7}, Shape{2, 3, 4, 5, 6}, Shape{}}) {
            const Problem p = resolve_problem(proto, op_named(name), case_for(proto, {{DType::f16, {}}}, shape, {}));
            ASSERT_EQ(p.outputs.size(), 1u) << name;
            EXPECT_EQ(p.outputs[0].tensors.at(0).dtype, DType::f16) << name;
            EXPECT_EQ(p.outputs[0].tensors.at(0).shape, shape) << name;
        }
    }
}

double vector_elements(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

TEST(OpsLevel1A, WorkModelsCountBytesAndTranscendentals) {
    const Shape shape{10, 20};
    {
        const Proto proto = proto_for("masked_scale");
        const Problem p = resolve_problem(proto, op_named("masked_scale"),
                                          case_for(proto, {{DType::f16, {}}, {DType::i8, {}}}, shape, {}));
        const WorkModel w = op_named("masked_scale").work(p);
        EXPECT_EQ(w.bytes_read, 200 * 2 + 200 * 1);  // x and the mask at its own size
        EXPECT_EQ(w.bytes_written, 200 * 2);
        EXPECT_EQ(vector_elements(w, OpClass::mul), 400);
        EXPECT_EQ(vector_elements(w, OpClass::cast), 200);
    }
    {
        const Proto proto = proto_for("gelu");
        const Problem exact = resolve_problem(proto, op_named("gelu"), case_for(proto, {{DType::f32, {}}}, shape, {}));
        const WorkModel w = op_named("gelu").work(exact);
        EXPECT_EQ(w.bytes_read, 800);
        EXPECT_EQ(w.bytes_written, 800);
        EXPECT_EQ(vector_elements(w, OpClass::erf), 200);
        const Problem tanh = resolve_problem(proto, op_named("gelu"),
                                             case_for(proto, {{DType::f32, {}}}, shape,
                                                      {{"approximate", AttrValue::of_string("tanh")}}));
        EXPECT_EQ(vector_elements(op_named("gelu").work(tanh), OpClass::exp), 200);
        EXPECT_EQ(vector_elements(op_named("gelu").work(tanh), OpClass::erf), 0);
    }
    for (const char* name : {"mish", "sigmoid"}) {
        const Proto proto = proto_for(name);
        const Problem p = resolve_problem(proto, op_named(name), case_for(proto, {{DType::bf16, {}}}, shape, {}));
        const WorkModel w = op_named(name).work(p);
        EXPECT_EQ(w.bytes_read, 400) << name;
        EXPECT_EQ(vector_elements(w, OpClass::exp), 200) << name;
        EXPECT_EQ(vector_elements(w, OpClass::div), 200) << name;
    }
}

TEST(OpsLevel1A, BoundaryRangesAreClassifiedAsTypeBoundary) {
    for (const char* name : {"gelu", "mish", "sigmoid", "masked_scale"})
        for (DType dtype : float_dtypes)
            EXPECT_EQ(classify_range(op_named(name).boundary_range(dtype), dtype), RangeGroup::type_boundary)
                << name << " " << dtype_name(dtype);
}

// Draws `count` cases through the generator and checks what every case of the operator must
// satisfy; returns them for operator-specific checks.
std::vector<CaseSpec> generated_cases(const std::string& name, int count) {
    const Proto proto = proto_for(name);
    const auto cases = generate_cases(op_named(name), proto, profile_by_name("cpu"), 20260101, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) {
        EXPECT_NO_THROW(resolve_problem(proto, op_named(name), c)) << name << " case " << c.case_id;
        const auto& x = c.inputs.at(0);
        EXPECT_EQ(x.shapes.size(), 1u);
        EXPECT_GE(x.shapes.at(0).size(), 1u);
        EXPECT_LE(x.shapes.at(0).size(), 5u);
    }
    return cases;
}

TEST(OpsLevel1A, GeneratorAcceptsGeluCasesWithBothModes) {
    std::set<std::string> modes;
    for (const auto& c : generated_cases("gelu", 20)) modes.insert(c.attrs.at("approximate").s);
    EXPECT_EQ(modes, (std::set<std::string>{"none", "tanh"}));
}

TEST(OpsLevel1A, GeneratorAcceptsMaskedScaleCases) {
    std::set<DType> seen_masks;
    std::set<double> seen_scales;
    for (const auto& c : generated_cases("masked_scale", 20)) {
        const auto& x = c.inputs.at(0);
        const auto& mask = c.inputs.at(1);
        EXPECT_EQ(mask.shapes, x.shapes);
        ASSERT_TRUE(mask.range.has_value());
        EXPECT_EQ(*mask.range, (ValueRange{0, 1}));
        seen_masks.insert(mask.dtype);
        seen_scales.insert(c.attrs.at("scale").f);
    }
    EXPECT_GE(seen_masks.size(), 3u);
    EXPECT_GE(seen_scales.size(), 4u);
}

TEST(OpsLevel1A, GeneratorAcceptsMishAndSigmoidCasesWithTheirBoundaryRange) {
    for (const char* name : {"mish", "sigmoid"}) {
        int boundary_cases = 0;
        for (const auto& c : generated_cases(name, 20)) {
            const auto& x = c.inputs.at(0);
            if (x.range && classify_range(*x.range, x.dtype) == RangeGroup::type_boundary) {
                EXPECT_EQ(*x.range, (ValueRange{-90, 90})) << name;
                ++boundary_cases;
            }
        }
        EXPECT_GE(boundary_cases, 1) << name;
    }
}

}  // namespace
}  // namespace hb
