// Level-3 fused, routing and quantizing operators (add_rms_norm_dynamic_quant,
// dequant_swiglu_quant, engram_gate_fusion, mhc_sinkhorn, moe_finalize_routing,
// moe_gating_top_k_softmax): goldens against values worked out here on every attribute path,
// the int8 rules (round half to even, clamping, NaN to 0, the fp32 scale), ranking and ties,
// special values, shape inference and its errors, work models, input hooks and case sampling.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "ops/int8_quant.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/case_rules.hpp"
#include "suite/inputs.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"
#include "suite/split.hpp"

namespace hb {
namespace {

const double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();

Proto proto_for(const std::string& op) {
    return load_proto(std::string(HB_SOURCE_DIR) + "/suite/level3/" + op + "/proto.yaml", op, 3);
}

const Operator& op_named(const std::string& name) {
    const Operator* op = find_operator(name);
    if (!op) throw Error("operator " + name + " is not registered");
    return *op;
}

// One input: a tensor with its values, or absent.
struct In {
    Shape shape;
    std::vector<double> values;
    DType dtype = DType::f32;
    bool present = true;
};
const In absent{{}, {}, DType::f32, false};

Problem problem_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {}) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end()) it = protos.emplace(op, proto_for(op)).first;
    CaseSpec c;
    c.op = op;
    c.case_id = 1;
    c.attrs = std::move(attrs);
    for (const auto& in : inputs) {
        CaseInput ci;
        ci.present = in.present;
        if (in.present) ci.shapes = {in.shape};
        ci.dtype = in.dtype;
        c.inputs.push_back(ci);
    }
    return resolve_problem(it->second, op_named(op), c);
}

// Every output of the golden (or the same-precision reference).
std::vector<std::vector<double>> evaluate(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {},
                                          bool same_precision = false) {
    const Problem p = problem_for(op, inputs, std::move(attrs));
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = p.inputs[k].name;
        in[k].present = inputs[k].present;
        if (inputs[k].present)
            in[k].tensors.push_back({TensorSpec{inputs[k].dtype, inputs[k].shape}, inputs[k].values});
    }
    ValueArgs<double> out = values_for_specs<double>(p.outputs);
    if (same_precision) op_named(op).same_precision(p, in, out);
    else op_named(op).golden(p, in, out);
    std::vector<std::vector<double>> result;
    for (const auto& o : out) result.push_back(o.one().v);
    return result;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected, double rel = 1e-12) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        else if (std::isinf(expected[i])) EXPECT_EQ(got[i], expected[i]) << "element " << i;
        else EXPECT_NEAR(got[i], expected[i], rel * std::fabs(expected[i]) + 1e-300) << "element " << i;
    }
}

double fp32(double v) { return static_cast<double>(static_cast<float>(v)); }
double silu(double t) { return t / (1 + std::exp(-t)); }
double sigmoid(double t) { return 1 / (1 + std::exp(-t)); }

double vector_elements(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

std::vector<CaseSpec> generated_cases(const std::string& name, int count = 20) {
    const Proto proto = proto_for(name);
    const auto cases = generate_cases(op_named(name), proto, profile_by_name("cpu"), 20260101, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(proto, op_named(name), c)) << name << " case " << c.case_id;
    const auto problems = check_case_rules(cases, proto, op_named(name), profile_by_name("cpu"));
    EXPECT_TRUE(problems.empty()) << problems.front();
    return cases;
}

// ---- the int8 rules ------------------------------------------------------------------------

TEST(OpsLevel3L3c, Int8QuantizationRoundsHalfToEvenClampsAndMapsNanToZero) {
    EXPECT_EQ(quantize_to_int8(2.5), 2);
    EXPECT_EQ(quantize_to_int8(3.5), 4);
    EXPECT_EQ(quantize_to_int8(-2.5), -2);
    EXPECT_EQ(quantize_to_int8(-0.5), 0);
    EXPECT_EQ(quantize_to_int8(126.7), 127);
    EXPECT_EQ(quantize_to_int8(127.5), 127);
    EXPECT_EQ(quantize_to_int8(-128.4), -128);
    EXPECT_EQ(quantize_to_int8(-1e30), -128);
    EXPECT_EQ(quantize_to_int8(inf), 127);
    EXPECT_EQ(quantize_to_int8(-inf), -128);
    EXPECT_EQ(quantize_to_int8(nan), 0);
    EXPECT_EQ(quantize_to_int8(2.5f), 2.0f);
    EXPECT_TRUE(std::isnan(nan_max(1.0, nan)));
    EXPECT_TRUE(std::isnan(nan_max(nan, 1.0)));
    EXPECT_EQ(nan_max(-1.0, 2.0), 2.0);
    EXPECT_EQ(as_fp32_scale(1.0 / 3), fp32(1.0 / 3));
}

// ---- add_rms_norm_dynamic_quant -------------------------------------------------------------

AttrMap epsilon(double e) { return {{"epsilon", AttrValue::of_float(e)}}; }

TEST(OpsLevel3L3c, AddRmsNormDynamicQuantByHand) {
    // Row 0: s = [2, 2], r = 2, u = [1, -3]: scale 3/127, y = [42.33 -> 42, -127].
    // Row 1: s = [1, -2], r = sqrt(2.5), u = [1, 6] / r: scale (6/r)/127, y = [21.17 -> 21, 127].
    const auto out = evaluate("add_rms_norm_dynamic_quant",
                              {{{2, 2}, {1, 2, 0.5, -3}, DType::f16}, {{2, 2}, {1, 0, 0.5, 1}, DType::f16},
                               {{2}, {1, -3}, DType::f16}},
                              epsilon(0));
    const double r1 = std::sqrt(2.5);
    expect_values(out[0], {42, -127, 21, 127});
    expect_values(out[1], {2, 2, 1, -2});
    expect_values(out[2], {fp32(3.0 / 127), fp32(6 / r1 / 127)});
}

TEST(OpsLevel3L3c, AddRmsNormDynamicQuantEpsilonEntersTheRootMean) {
    // s = [3, 4]: mean square 12.5; epsilon 0.5 makes r = sqrt(13); gamma [1, 1].
    const auto out = evaluate("add_rms_norm_dynamic_quant",
                              {{{1, 2}, {3, 4}, DType::bf16}, {{1, 2}, {0, 0}, DType::bf16}, {{2}, {1, 1}, DType::bf16}},
                              epsilon(0.5));
    const double u0 = 3 / std::sqrt(13.0), u1 = 4 / std::sqrt(13.0);
    const double scale = fp32(u1 / 127);
    expect_values(out[2], {scale});
    expect_values(out[0], {std::nearbyint(u0 / scale), 127});
}

TEST(OpsLevel3L3c, AddRmsNormDynamicQuantSpecialRows) {
    // A zero row: scale = 1e-12 / 127 (clamp before /127), y 0. A NaN row: scale NaN, y 0,
    // xOut keeps the NaN. A finite row against an infinite gamma: u = inf, scale inf, y 0.
    const auto out = evaluate("add_rms_norm_dynamic_quant",
                              {{{3, 2}, {0, 0, nan, 1, 1, 1}, DType::f16},
                               {{3, 2}, {0, 0, 0, 1, 0, 0}, DType::f16},
                               {{2}, {1, 1}, DType::f16}});
    expect_values(out[0], {0, 0, 0, 0, 127, 127});
    expect_values(out[1], {0, 0, nan, 2, 1, 1});
    EXPECT_EQ(out[2][0], fp32(1e-12 / 127));
    EXPECT_TRUE(std::isnan(out[2][1]));
    const auto inf_gamma = evaluate("add_rms_norm_dynamic_quant",
                                    {{{1, 2}, {1, 1}, DType::f16}, {{1, 2}, {0, 0}, DType::f16},
                                     {{2}, {inf, 1}, DType::f16}});
    expect_values(inf_gamma[0], {0, 0});
    EXPECT_EQ(inf_gamma[2][0], inf);
    // An infinite s: r = inf, inf / inf is NaN: scale NaN, every y 0.
    const auto inf_row = evaluate("add_rms_norm_dynamic_quant",
                                  {{{1, 2}, {inf, 1}, DType::f16}, {{1, 2}, {0, 0}, DType::f16}, {{2}, {1, 1}, DType::f16}});
    expect_values(inf_row[0], {0, 0});
    EXPECT_TRUE(std::isnan(inf_row[2][0]));
}

TEST(OpsLevel3L3c, AddRmsNormDynamicQuantSamePrecisionIsFp32AndScalesHaveLeadingShape) {
    const In x1{{2, 3, 4}, {}, DType::bf16}, gamma{{4}, {}, DType::bf16};
    const Problem p = problem_for("add_rms_norm_dynamic_quant", {x1, x1, gamma});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::i8);
    EXPECT_EQ(p.outputs.at(1).tensors.at(0).dtype, DType::bf16);
    EXPECT_EQ(p.outputs.at(2).tensors.at(0).shape, (Shape{2, 3}));
    EXPECT_EQ(p.outputs.at(2).tensors.at(0).dtype, DType::f32);
    // s = [0.5, 0.375, -0.125], u proportional to [0.5, 0.1875, 0.125]: y = [127, 48, 32], far
    // from rounding ties, so fp32 and fp64 agree exactly.
    const std::vector<In> in = {{{1, 3}, {0.125, 0.25, -0.375}, DType::f16}, {{1, 3}, {0.375, 0.125, 0.25}, DType::f16},
                                {{3}, {1, 0.5, -1}, DType::f16}};
    const auto golden = evaluate("add_rms_norm_dynamic_quant", in);
    const auto same = evaluate("add_rms_norm_dynamic_quant", in, {}, true);
    expect_values(same[0], golden[0]);
    expect_values(same[2], golden[2], 1e-6);
    expect_values(golden[0], {127, 48, 32});
    EXPECT_EQ(same[1][1], 0.375);  // xOut, rounded to the case dtype
}

TEST(OpsLevel3L3c, AddRmsNormDynamicQuantShapeErrors) {
    const In x{{4, 8}, {}, DType::f16}, g{{8}, {}, DType::f16};
    EXPECT_THROW(problem_for("add_rms_norm_dynamic_quant", {x, {{4, 7}, {}, DType::f16}, g}), Error);
    EXPECT_THROW(problem_for("add_rms_norm_dynamic_quant", {x, {{4, 8}, {}, DType::bf16}, g}), Error);
    EXPECT_THROW(problem_for("add_rms_norm_dynamic_quant", {x, x, {{7}, {}, DType::f16}}), Error);
    EXPECT_THROW(problem_for("add_rms_norm_dynamic_quant", {x, x, {{8}, {}, DType::bf16}}), Error);
    EXPECT_THROW(problem_for("add_rms_norm_dynamic_quant", {x, x, g}, epsilon(-1)), Error);
    EXPECT_THROW(problem_for("add_rms_norm_dynamic_quant", {{{}, {}, DType::f16}, {{}, {}, DType::f16}, g}), Error);
    try {
        problem_for("add_rms_norm_dynamic_quant", {x, x, {{7}, {}, DType::f16}});
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("gamma"), std::string::npos) << e.what();
    }
}

TEST(OpsLevel3L3c, AddRmsNormDynamicQuantWorkModel) {
    const In x{{6, 10}, {}, DType::bf16}, g{{10}, {}, DType::bf16};
    const WorkModel w = op_named("add_rms_norm_dynamic_quant").work(problem_for("add_rms_norm_dynamic_quant", {x, x, g}));
    EXPECT_EQ(w.bytes_read, 2 * 60 * 2 + 10 * 2);
    EXPECT_EQ(w.bytes_written, 60 + 60 * 2 + 6 * 4);
    EXPECT_EQ(w.parallel_items, 6);
    EXPECT_EQ(w.row_elements, 10);
    EXPECT_EQ(vector_elements(w, OpClass::sqrt), 6);
}

// ---- dequant_swiglu_quant ------------------------------------------------------------------

AttrMap left(bool activate_left) { return {{"activate_left", AttrValue::of_bool(activate_left)}}; }

// The int8 values and the scale of one row of s, as the operator defines them.
void expect_quantized(const std::vector<std::vector<double>>& out, const std::vector<double>& s, std::size_t row = 0) {
    double m = 0;
    for (double v : s) m = std::max(m, std::fabs(v));
    const double scale = fp32(std::max(m / 127, 1e-12));
    EXPECT_NEAR(out[1][row], scale, 1e-12 * scale) << "row " << row;
    for (std::size_t h = 0; h < s.size(); ++h)
        EXPECT_EQ(out[0][row * s.size() + h], std::nearbyint(s[h] / scale)) << "row " << row << " h " << h;
}

TEST(OpsLevel3L3c, DequantSwigluQuantFloatPathActivatesTheRightHalfByDefault) {
    // x = [A | B] = [1, 2 | 0.5, -1]: activate_left false: s = SiLU(B) * A.
    const std::vector<In> in = {{{1, 4}, {1, 2, 0.5, -1}, DType::f16}, absent, absent, absent};
    expect_quantized(evaluate("dequant_swiglu_quant", in), {silu(0.5) * 1, silu(-1) * 2});
    expect_quantized(evaluate("dequant_swiglu_quant", in, left(true)), {silu(1) * 0.5, silu(2) * -1});
}

TEST(OpsLevel3L3c, DequantSwigluQuantQuantScaleAndTheInt32Path) {
    // quant_scale multiplies s per column.
    const std::vector<In> with_qs = {{{1, 4}, {1, 2, 0.5, -1}, DType::bf16}, absent, absent, {{1, 2}, {2, -0.5}}};
    expect_quantized(evaluate("dequant_swiglu_quant", with_qs), {silu(0.5) * 1 * 2, silu(-1) * 2 * -0.5});
    // int32: d = (x * weight_scale) * activation_scale[t], two rows.
    const std::vector<double> x = {10, -20, 30, 40, -5, 6, 7, -8};
    const std::vector<double> ws = {0.1, 0.05, -0.02, 0.01}, as = {0.5, 2};
    const std::vector<In> int_path = {{{2, 4}, x, DType::i32}, {{1, 4}, ws}, {{2}, as}, absent};
    const auto out = evaluate("dequant_swiglu_quant", int_path, left(true));
    for (std::size_t t = 0; t < 2; ++t) {
        auto d = [&](std::size_t j) { return (x[t * 4 + j] * ws[j]) * as[t]; };
        expect_quantized(out, {silu(d(0)) * d(2), silu(d(1)) * d(3)}, t);
    }
}

TEST(OpsLevel3L3c, DequantSwigluQuantClampsAfterDividingAndQuantizesNanToZero) {
    // A zero row: scale = max(0 / 127, 1e-12) = 1e-12 (not 1e-12 / 127); y 0.
    const auto zero = evaluate("dequant_swiglu_quant", {{{1, 4}, {0, 0, 0, 0}, DType::f16}, absent, absent, absent});
    EXPECT_EQ(zero[1][0], fp32(1e-12));
    expect_values(zero[0], {0, 0});
    // A NaN activation scale: the row's scale is NaN and its y 0; the other row is fine.
    const auto out = evaluate("dequant_swiglu_quant",
                              {{{2, 2}, {3, 4, 3, 4}, DType::i32}, {{1, 2}, {1, 1}}, {{2}, {nan, 1}}, absent});
    EXPECT_TRUE(std::isnan(out[1][0]));
    EXPECT_EQ(out[0][0], 0);
    EXPECT_EQ(out[0][1], 127);
    // SiLU(-inf) is NaN (-inf / inf), SiLU(+inf) * finite is inf: scales NaN and inf, y 0.
    const auto specials = evaluate("dequant_swiglu_quant",
                                   {{{2, 4}, {1, 1, -inf, 1, 1, 1, inf, 1}, DType::f16}, absent, absent, absent});
    EXPECT_TRUE(std::isnan(specials[1][0]));
    EXPECT_EQ(specials[1][1], inf);
    expect_values(specials[0], {0, 0, 0, 0});
}

TEST(OpsLevel3L3c, DequantSwigluQuantShapeErrors) {
    EXPECT_THROW(problem_for("dequant_swiglu_quant", {{{4, 7}, {}, DType::f16}, absent, absent, absent}), Error);
    EXPECT_THROW(problem_for("dequant_swiglu_quant", {{{2, 4, 8}, {}, DType::f16}, absent, absent, absent}), Error);
    EXPECT_THROW(problem_for("dequant_swiglu_quant", {{{4, 8}, {}, DType::i32}, absent, absent, absent}), Error);
    EXPECT_THROW(problem_for("dequant_swiglu_quant", {{{4, 8}, {}, DType::f16}, {{1, 8}, {}}, {{4}, {}}, absent}), Error);
    EXPECT_THROW(problem_for("dequant_swiglu_quant", {{{4, 8}, {}, DType::i32}, {{8}, {}}, {{4}, {}}, absent}), Error);
    EXPECT_THROW(problem_for("dequant_swiglu_quant", {{{4, 8}, {}, DType::i32}, {{1, 8}, {}}, {{3}, {}}, absent}), Error);
    EXPECT_THROW(problem_for("dequant_swiglu_quant", {{{4, 8}, {}, DType::f16}, absent, absent, {{1, 8}, {}}}), Error);
    const Problem p = problem_for("dequant_swiglu_quant", {{{4, 8}, {}, DType::i32}, {{1, 8}, {}}, {{4}, {}}, {{1, 4}, {}}});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{4, 4}));
    EXPECT_EQ(p.outputs.at(1).tensors.at(0).shape, (Shape{4}));
    const WorkModel w = op_named("dequant_swiglu_quant").work(p);
    EXPECT_EQ(w.bytes_read, 32 * 4 + 8 * 4 + 4 * 4 + 4 * 4);
    EXPECT_EQ(w.bytes_written, 16 + 4 * 4);
    EXPECT_EQ(vector_elements(w, OpClass::exp), 16);
}

// ---- mhc_sinkhorn --------------------------------------------------------------------------

AttrMap sinkhorn(std::int64_t iterations, double eps) {
    return {{"iter_step", AttrValue::of_int(iterations)}, {"eps", AttrValue::of_float(eps)}};
}

TEST(OpsLevel3L3c, MhcSinkhornFirstAndSecondIterationByHand) {
    // Rows of x = [[0, ln 3], [0, 0]] softmax to [1/4, 3/4] and [1/2, 1/2]; eps = 0.01 is
    // added to the entries, then each column is divided by (its sum + eps).
    const double e = 0.01;
    const std::vector<In> in = {{{1, 2, 2}, {0, std::log(3.0), 0, 0}}};
    double m[2][2] = {{0.25 + e, 0.75 + e}, {0.5 + e, 0.5 + e}};
    auto columns = [&] {
        for (int j = 0; j < 2; ++j) {
            const double s = m[0][j] + m[1][j] + e;
            m[0][j] /= s;
            m[1][j] /= s;
        }
    };
    columns();
    expect_values(evaluate("mhc_sinkhorn", in, sinkhorn(1, e))[0], {m[0][0], m[0][1], m[1][0], m[1][1]});
    for (int i = 0; i < 2; ++i) {
        const double s = m[i][0] + m[i][1] + e;
        m[i][0] /= s;
        m[i][1] /= s;
    }
    columns();
    expect_values(evaluate("mhc_sinkhorn", in, sinkhorn(2, e))[0], {m[0][0], m[0][1], m[1][0], m[1][1]});
}

TEST(OpsLevel3L3c, MhcSinkhornConvergesToDoublyStochastic) {
    const auto out = evaluate("mhc_sinkhorn", {{{1, 3, 3}, {0.3, -0.2, 0.9, 0.1, 0.5, -0.7, -0.4, 0.2, 0.6}}},
                              sinkhorn(40, 0))[0];
    for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(out[i * 3] + out[i * 3 + 1] + out[i * 3 + 2], 1, 1e-9);
        EXPECT_NEAR(out[i] + out[3 + i] + out[6 + i], 1, 1e-12);
    }
}

TEST(OpsLevel3L3c, MhcSinkhornSpecialValuesPoisonOnlyTheirMatrix) {
    // Matrix 0 has +inf in a row (inf - inf), matrix 1 a row of only -inf, matrix 2 a NaN:
    // each whole matrix is NaN; matrix 3 with one -inf among finite values is fine.
    const auto out = evaluate("mhc_sinkhorn", {{{4, 2, 2}, {inf, 0, 0, 0, -inf, -inf, 0, 0, 1, nan, 0, 0, -inf, 0, 0, 0}}},
                              sinkhorn(3, 1e-6))[0];
    for (int i = 0; i < 12; ++i) EXPECT_TRUE(std::isnan(out[i])) << i;
    for (int i = 12; i < 16; ++i) EXPECT_TRUE(std::isfinite(out[i])) << i;
    EXPECT_LT(out[12], 1e-3);  // e^-inf = 0, then + eps
}

TEST(OpsLevel3L3c, MhcSinkhornShapeErrorsAndWorkModel) {
    EXPECT_THROW(problem_for("mhc_sinkhorn", {{{4, 3, 4}, {}}}), Error);
    EXPECT_THROW(problem_for("mhc_sinkhorn", {{{4, 4}, {}}}), Error);
    EXPECT_THROW(problem_for("mhc_sinkhorn", {{{4, 4, 4}, {}, DType::f16}}), Error);
    EXPECT_THROW(problem_for("mhc_sinkhorn", {{{4, 4, 4}, {}}}, sinkhorn(0, 1e-6)), Error);
    EXPECT_THROW(problem_for("mhc_sinkhorn", {{{4, 4, 4}, {}}}, sinkhorn(5, -1)), Error);
    const WorkModel w = op_named("mhc_sinkhorn").work(problem_for("mhc_sinkhorn", {{{10, 4, 4}, {}}}, sinkhorn(5, 1e-6)));
    EXPECT_EQ(w.bytes_read, 160 * 4);
    EXPECT_EQ(w.bytes_written, 160 * 4);
    EXPECT_EQ(vector_elements(w, OpClass::exp), 160);
    EXPECT_EQ(vector_elements(w, OpClass::mul), 160 * 2 * 5);
    EXPECT_EQ(w.parallel_items, 10);
    EXPECT_EQ(w.row_elements, 16);
}

// ---- moe_finalize_routing ------------------------------------------------------------------

AttrMap mode(std::int64_t m) { return {{"drop_pad_mode", AttrValue::of_int(m)}}; }

// NUM_ROWS = 2, K = 2, H = 2: rows R0..R3 = [1, 2], [10, 20], [100, 200], [1000, 2000].
const std::vector<double> expert_rows = {1, 2, 10, 20, 100, 200, 1000, 2000};
const In skip1_in{{2, 2}, {0.5, 0.25, 3, 4}}, skip2_in{{2, 2}, {0.5, 0.75, 1, 1}};
const In bias_in{{2, 2}, {7, 8, 70, 80}};               // E = 2
const In scales_in{{2, 2}, {0.5, 0.25, 1, 2}};
const In experts_in{{2, 2}, {0, 1, 1, 2}, DType::i32};  // 2 is the sentinel E: no bias

TEST(OpsLevel3L3c, MoeFinalizeRoutingColumnAndRowLayouts) {
    // Mode 0 (column layout, p = k * NUM_ROWS + r), idx = [2, 0, 3, 1]:
    // out[0] = skips + 0.5 (R2 + b0) + 0.25 (R3 + b1); out[1] = skips + 1 (R0 + b1) + 2 R1.
    const In idx{{4}, {2, 0, 3, 1}, DType::i32};
    const auto col = evaluate("moe_finalize_routing",
                              {{{4, 2}, expert_rows}, idx, skip1_in, skip2_in, bias_in, scales_in, experts_in}, mode(0));
    expect_values(col[0], {1 + 0.5 * 107 + 0.25 * 1070, 1 + 0.5 * 208 + 0.25 * 2080, 4 + 71 + 20, 5 + 82 + 40});
    // Mode 2 (row layout, p = r * K + k): r0 takes idx[0], idx[1] = R2, R0; r1 idx[2], idx[3] = R3, R1.
    const auto row = evaluate("moe_finalize_routing",
                              {{{4, 2}, expert_rows}, idx, skip1_in, skip2_in, bias_in, scales_in, experts_in}, mode(2));
    expect_values(row[0], {1 + 0.5 * 107 + 0.25 * 71, 1 + 0.5 * 208 + 0.25 * 82, 4 + 1070 + 20, 5 + 2080 + 40});
}

TEST(OpsLevel3L3c, MoeFinalizeRoutingDropPadSkipsMinusOneAndAbsentInputs) {
    // Mode 1: R [E=2, C=2, H=2] seen as 4 rows; idx [-1, 3, 0, -1] in column layout:
    // r0 takes idx[0] (-1: nothing) and idx[2] = R0; r1 takes idx[1] = R3 and idx[3] (-1).
    const In idx{{4}, {-1, 3, 0, -1}, DType::i32};
    const auto out = evaluate("moe_finalize_routing",
                              {{{2, 2, 2}, expert_rows}, idx, absent, absent, absent, scales_in, absent}, mode(1));
    expect_values(out[0], {0.25 * 1, 0.25 * 2, 1 * 1000, 1 * 2000});
    // Mode 3 (row layout): r0 takes idx[0], idx[1] = -, R3; r1 takes idx[2], idx[3] = R0, -.
    const auto row = evaluate("moe_finalize_routing",
                              {{{2, 2, 2}, expert_rows}, idx, skip1_in, absent, absent, scales_in, absent}, mode(3));
    expect_values(row[0], {0.5 + 0.25 * 1000, 0.25 + 0.25 * 2000, 3 + 1, 4 + 2});
    // Without scales K = 1 and every term has weight 1; bias with expert ids, added before.
    const auto k1 = evaluate("moe_finalize_routing",
                             {{{2, 2}, {1, 2, 3, 4}}, {{2}, {1, 0}, DType::i32}, absent, absent, {{1, 2}, {10, 20}},
                              absent, {{2, 1}, {0, 1}, DType::i32}});
    expect_values(k1[0], {3 + 10, 4 + 20, 1, 2});  // row 1's expert 1 is outside [0, E = 1): no bias
}

TEST(OpsLevel3L3c, MoeFinalizeRoutingRejectsBadArguments) {
    const In rows{{4, 2}, {}}, idx{{4}, {}, DType::i32};
    auto fails = [&](std::vector<In> in, AttrMap attrs = {}) {
        EXPECT_THROW(problem_for("moe_finalize_routing", in, attrs), Error);
    };
    fails({rows, idx, absent, skip2_in, absent, scales_in, absent});                // skip2 without skip1
    fails({rows, idx, absent, absent, bias_in, scales_in, absent});                 // bias without expert ids
    fails({rows, idx, absent, absent, absent, absent, absent}, mode(4));            // no such mode
    fails({rows, idx, absent, absent, absent, absent, absent}, mode(1));            // mode 1 wants [E, C, H]
    fails({{{5, 2}, {}}, idx, absent, absent, absent, absent, absent});             // 5 rows for 4 entries
    fails({rows, {{4}, {}, DType::i64}, absent, absent, absent, absent, absent});   // int64 idx
    fails({rows, {{3}, {}, DType::i32}, absent, absent, absent, scales_in, absent});  // 3 not a multiple of K
    fails({rows, idx, {{2, 3}, {}}, absent, absent, scales_in, absent});              // skip1 of another H
    fails({rows, idx, absent, absent, absent, {{2, 2}, {}, DType::i32}, absent});     // int scales
    fails({rows, idx, absent, absent, bias_in, scales_in, {{2, 1}, {}, DType::i32}});  // ids not [NUM_ROWS, K]
    EXPECT_NO_THROW(problem_for("moe_finalize_routing",
                                {{{4, 2}, {}, DType::bf16}, idx, absent, absent, absent, {{2, 2}, {}, DType::f32}, absent}));
    // An index outside [0, num_dst) that is not -1 is an input error the golden names.
    EXPECT_THROW(evaluate("moe_finalize_routing",
                          {{{4, 2}, expert_rows}, {{4}, {0, 1, 2, 4}, DType::i32}, absent, absent, absent, absent, absent}),
                 Error);
}

TEST(OpsLevel3L3c, MoeFinalizeRoutingInputsAreInjectiveWithKnownDrops) {
    const Operator& op = op_named("moe_finalize_routing");
    for (std::int64_t m : {0, 1, 2, 3}) {
        const bool pad = m == 1 || m == 3;
        const In rows = pad ? In{{8, 50, 16}, {}} : In{{300, 16}, {}};
        const Problem p = problem_for("moe_finalize_routing",
                                      {rows, {{300}, {}, DType::i32}, absent, absent, {{8, 16}, {}},
                                       {{100, 3}, {}}, {{100, 3}, {}, DType::i32}},
                                      mode(m));
        const auto inputs = generate_inputs(p, op, 0);
        const Tensor& idx = inputs.at(1).tensors.at(0);
        std::set<double> seen;
        int dropped = 0;
        for (std::int64_t i = 0; i < idx.numel(); ++i) {
            const double v = idx.get(static_cast<std::size_t>(i));
            if (v == -1) {
                ++dropped;
                continue;
            }
            EXPECT_GE(v, 0);
            EXPECT_LT(v, pad ? 400 : 300);
            EXPECT_TRUE(seen.insert(v).second) << "destination " << v << " twice";
        }
        EXPECT_EQ(dropped, pad ? 300 - (300 - 300 / 8) : 0) << "mode " << m;
        // Some source rows are finished: every expert id at the sentinel E = 8.
        const Tensor& experts = inputs.at(6).tensors.at(0);
        int finished = 0;
        for (std::int64_t r = 0; r < 100; ++r) finished += experts.get(static_cast<std::size_t>(r * 3)) == 8;
        EXPECT_GT(finished, 0);
        EXPECT_LT(finished, 30);
        // The work model reads exactly the kept rows of R.
        const double kept = pad ? 300 - 300 / 8 : 300;
        EXPECT_EQ(op.work(p).bytes_read, kept * 16 * 4 + 300 * 4 + 8 * 16 * 4 + 300 * 4 + 300 * 4);
    }
}

// ---- moe_gating_top_k_softmax --------------------------------------------------------------

AttrMap top(std::int64_t k) { return {{"k", AttrValue::of_int(k)}}; }

TEST(OpsLevel3L3c, MoeGatingRanksByLogitWithTiesToTheLowerExpert) {
    // Row 0 [1, 3, 3, 2]: experts 1, 2 (tied, lower first), 3. Row 1 all equal: 0, 1, 2.
    const auto out = evaluate("moe_gating_top_k_softmax", {{{2, 4}, {1, 3, 3, 2, 0, 0, 0, 0}}, absent}, top(3));
    const double s = std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0);
    expect_values(out[0], {std::exp(3.0) / s, std::exp(3.0) / s, std::exp(2.0) / s, 0.25, 0.25, 0.25});
    expect_values(out[1], {1, 2, 3, 0, 1, 2});
    expect_values(out[2], {0, 2, 4, 1, 3, 5});  // j * R + r with R = 2
}

TEST(OpsLevel3L3c, MoeGatingFinishedRowsGetTheSentinelAndKeepTheirValues) {
    const std::vector<In> in = {{{2, 3}, {0.5, -1, 2, 4, 0, 1}, DType::f16}, {{2}, {1, 0}, DType::boolean}};
    const auto out = evaluate("moe_gating_top_k_softmax", in, top(2));
    const auto unfinished = evaluate("moe_gating_top_k_softmax", {in[0], absent}, top(2));
    expect_values(out[0], unfinished[0]);
    expect_values(out[1], {3, 3, 0, 2});
    expect_values(unfinished[1], {2, 0, 0, 2});
}

TEST(OpsLevel3L3c, MoeGatingNanRanksFirstAndMakesTheRowNan) {
    // NaN above +inf, among NaNs the lower index; zeros of either sign tie by index.
    const auto out = evaluate("moe_gating_top_k_softmax", {{{2, 4}, {1, nan, 2, nan, -0.0, 0.0, -inf, -1}}, absent}, top(3));
    for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(out[0][j]));
    expect_values(out[1], {1, 3, 2, 0, 1, 3});
    // +inf makes the probabilities NaN (inf - inf) and ranks first; only -inf: NaN, by index.
    const auto specials = evaluate("moe_gating_top_k_softmax", {{{2, 3}, {0, inf, 1, -inf, -inf, -inf}}, absent}, top(2));
    for (double v : specials[0]) EXPECT_TRUE(std::isnan(v));
    expect_values(specials[1], {1, 2, 0, 1});
}

TEST(OpsLevel3L3c, MoeGatingThreeDimsAndSamePrecision) {
    const std::vector<double> x = {0.1, 0.7, 0.3, 0.9, 0.2, 0.4, -1, -2, -3, 5, 5, 1};
    const auto out = evaluate("moe_gating_top_k_softmax", {{{2, 2, 3}, x}, {{2, 2}, {0, 0, 1, 0}, DType::boolean}}, top(1));
    expect_values(out[1], {1, 0, 3, 0});
    expect_values(out[2], {0, 1, 2, 3});
    const auto same = evaluate("moe_gating_top_k_softmax", {{{2, 2, 3}, x}, {{2, 2}, {0, 0, 1, 0}, DType::boolean}}, top(1), true);
    expect_values(same[0], out[0], 1e-6);
    expect_values(same[1], out[1]);
    const Problem p = problem_for("moe_gating_top_k_softmax", {{{2, 5, 8}, {}, DType::bf16}, absent}, top(3));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{2, 5, 3}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::bf16);
    EXPECT_EQ(p.outputs.at(1).tensors.at(0).dtype, DType::i32);
    EXPECT_EQ(p.outputs.at(2).tensors.at(0).dtype, DType::i32);
    const WorkModel w = op_named("moe_gating_top_k_softmax").work(p);
    EXPECT_EQ(w.bytes_read, 80 * 2);
    EXPECT_EQ(w.bytes_written, 30 * (2 + 8));
    EXPECT_EQ(vector_elements(w, OpClass::exp), 80);
    EXPECT_EQ(w.parallel_items, 10);
}

TEST(OpsLevel3L3c, MoeGatingComparesEveryOutputExactlyButY) {
    const Proto proto = proto_for("moe_gating_top_k_softmax");
    ASSERT_EQ(proto.outputs.size(), 3u);
    EXPECT_TRUE(proto.outputs[1].compare);  // expert_idx
    EXPECT_TRUE(proto.outputs[2].compare);  // row_idx
    EXPECT_FALSE(proto.outputs[1].index_gather.has_value());
}

TEST(OpsLevel3L3c, MoeGatingShapeErrors) {
    EXPECT_THROW(problem_for("moe_gating_top_k_softmax", {{{2, 4}, {}}, absent}, top(0)), Error);
    EXPECT_THROW(problem_for("moe_gating_top_k_softmax", {{{2, 4}, {}}, absent}, top(5)), Error);
    EXPECT_THROW(problem_for("moe_gating_top_k_softmax", {{{8}, {}}, absent}, top(1)), Error);
    EXPECT_THROW(problem_for("moe_gating_top_k_softmax", {{{2, 2, 2, 4}, {}}, absent}, top(1)), Error);
    EXPECT_THROW(problem_for("moe_gating_top_k_softmax", {{{2, 4}, {}}, {{4}, {}, DType::boolean}}, top(1)), Error);
    EXPECT_THROW(problem_for("moe_gating_top_k_softmax", {{{2, 4}, {}}, {{2}, {}, DType::i8}}, top(1)), Error);
    EXPECT_THROW(problem_for("moe_gating_top_k_softmax", {{{2, 2048}, {}}, absent}, top(1025)), Error);
}

// ---- engram_gate_fusion --------------------------------------------------------------------

AttrMap engram(std::int64_t heads, std::int64_t dim, std::int64_t taps, std::int64_t dilation, double eps = 0) {
    return {{"hc_mult", AttrValue::of_int(heads)},    {"hidden_size", AttrValue::of_int(dim)},
            {"kernel_size", AttrValue::of_int(taps)}, {"dilation", AttrValue::of_int(dilation)},
            {"norm_eps", AttrValue::of_float(eps)}};
}

// B = 1, HC = 1, D = 2: the operator worked out step by step in fp64.
struct EngramByHand {
    std::vector<double> keys, hidden, value, w1, w2, wc, conv_weight, state;
    std::int64_t length, taps, dilation;

    static std::vector<double> rms_norm(const double* v, const std::vector<double>& w) {
        const double r = std::sqrt((v[0] * v[0] + v[1] * v[1]) / 2);
        return {v[0] / r * w[0], v[1] / r * w[1]};
    }
    // output [L, 2] then conv_state_out [2, S].
    std::pair<std::vector<double>, std::vector<double>> run() const {
        const std::int64_t s_n = (taps - 1) * dilation;
        std::vector<double> vg(2 * length), n(2 * length), output(2 * length), state_out(2 * s_n);
        for (std::int64_t l = 0; l < length; ++l) {
            const auto k = rms_norm(&keys[2 * l], w1), q = rms_norm(&hidden[2 * l], w2);
            const double r = (k[0] * q[0] + k[1] * q[1]) / std::sqrt(2.0);
            const double sign = r > 0 ? 1 : r < 0 ? -1 : 0;
            const double gate = sigmoid(std::sqrt(std::max(std::fabs(r), 1e-6)) * sign);
            for (int d = 0; d < 2; ++d) vg[2 * l + d] = gate * value[2 * l + d];
            const auto nn = rms_norm(&vg[2 * l], wc);
            n[2 * l] = nn[0];
            n[2 * l + 1] = nn[1];
        }
        for (int c = 0; c < 2; ++c) {
            auto xc = [&](std::int64_t t) { return t < s_n ? (state.empty() ? 0.0 : state[c * s_n + t]) : n[2 * (t - s_n) + c]; };
            for (std::int64_t l = 0; l < length; ++l) {
                double conv = 0;
                for (std::int64_t k = 0; k < taps; ++k) conv += conv_weight[c * taps + k] * xc(l + k * dilation);
                output[2 * l + c] = vg[2 * l + c] + silu(conv);
            }
            for (std::int64_t s = 0; s < s_n; ++s) state_out[c * s_n + s] = xc(length + s);
        }
        return {output, state_out};
    }
    std::vector<In> inputs() const {
        return {{{1, length, 1, 2}, keys, DType::bf16},
                {{1, length, 1, 2}, hidden, DType::bf16},
                {{1, length, 2}, value, DType::bf16},
                {{1, 2}, w1},
                {{1, 2}, w2},
                {{1, 2}, wc},
                {{2, 1, taps}, conv_weight},
                state.empty() ? absent : In{{1, 2, (taps - 1) * dilation}, state, DType::bf16}};
    }
};

TEST(OpsLevel3L3c, EngramGateFusionByHandWithoutState) {
    EngramByHand e{{1, 2, -0.5, 0.25, 3, -1},  {0.5, 1, 2, -2, 1, 1},  {0.3, -0.2, 0.1, 0.4, -0.6, 0.5},
                   {1, -0.5}, {0.8, 1.2}, {-1, 0.5}, {0.3, -0.4, 0.9, 0.2}, {}, 3, 2, 1};
    const auto [output, state_out] = e.run();
    const auto got = evaluate("engram_gate_fusion", e.inputs(), engram(1, 2, 2, 1));
    expect_values(got[0], output);
    expect_values(got[1], state_out);  // S = 1: the last normalized step
}

TEST(OpsLevel3L3c, EngramGateFusionStateLongerThanTheSequence) {
    // K = 3, dilation 2: S = 4 > L = 2, so conv_state_out keeps two old steps and n.
    EngramByHand e{{1, 2, -0.5, 0.25}, {0.5, 1, 2, -2}, {0.3, -0.2, 0.1, 0.4}, {1, -0.5}, {0.8, 1.2}, {-1, 0.5},
                   {0.3, -0.4, 0.9, 0.2, 0.5, -0.1}, {0.1, 0.2, 0.3, 0.4, -0.1, -0.2, -0.3, -0.4}, 2, 3, 2};
    const auto [output, state_out] = e.run();
    const auto got = evaluate("engram_gate_fusion", e.inputs(), engram(1, 2, 3, 2));
    expect_values(got[0], output);
    expect_values(got[1], state_out);
    EXPECT_EQ(got[1][0], 0.3);
    EXPECT_EQ(got[1][1], 0.4);
}

TEST(OpsLevel3L3c, EngramGateFusionZeroScoreGivesHalfGate) {
    // norm2 = 0 makes r = 0: sign(0) = 0, gate = sigmoid(0) = 1/2.
    EngramByHand e{{1, 2}, {0.5, 1}, {0.3, -0.2}, {1, -0.5}, {0, 0}, {-1, 0.5}, {0.3, -0.4, 0.9, 0.2}, {}, 1, 2, 1};
    const auto [output, state_out] = e.run();
    expect_values(evaluate("engram_gate_fusion", e.inputs(), engram(1, 2, 2, 1))[0], output);
    // The first step of output is vg + SiLU(w[last tap] * n) (the state is zeros): vg = 0.15, -0.1.
    const double r = std::sqrt((0.15 * 0.15 + 0.1 * 0.1) / 2);
    EXPECT_NEAR(output[0], 0.15 + silu(-0.4 * (0.15 / r * -1)), 1e-12);  // channel 0's last tap, -0.4
}

TEST(OpsLevel3L3c, EngramGateFusionInfinitySpreadsAlongTheConvolution) {
    // keys of token 0 hold inf: its norm is NaN, so its gate, vg, n and every output step
    // whose window reaches it (tokens 0 and 1 with K = 2, dilation 1); token 2 is finite.
    EngramByHand e{{inf, 2, -0.5, 0.25, 3, -1}, {0.5, 1, 2, -2, 1, 1}, {0.3, -0.2, 0.1, 0.4, -0.6, 0.5},
                   {1, -0.5}, {0.8, 1.2}, {-1, 0.5}, {0.3, -0.4, 0.9, 0.2}, {}, 3, 2, 1};
    const auto got = evaluate("engram_gate_fusion", e.inputs(), engram(1, 2, 2, 1));
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(got[0][i])) << i;
    EXPECT_TRUE(std::isfinite(got[0][4]) && std::isfinite(got[0][5]));
}

TEST(OpsLevel3L3c, EngramGateFusionShapeErrors) {
    const EngramByHand e{{1, 2}, {0.5, 1}, {0.3, -0.2}, {1, -0.5}, {0, 0}, {-1, 0.5}, {0.3, -0.4, 0.9, 0.2}, {}, 1, 2, 1};
    auto in = e.inputs();
    EXPECT_NO_THROW(problem_for("engram_gate_fusion", in, engram(1, 2, 2, 1)));
    EXPECT_THROW(problem_for("engram_gate_fusion", in, engram(2, 2, 2, 1)), Error);  // hc_mult
    EXPECT_THROW(problem_for("engram_gate_fusion", in, engram(1, 3, 2, 1)), Error);  // hidden_size
    EXPECT_THROW(problem_for("engram_gate_fusion", in, engram(1, 2, 3, 1)), Error);  // conv_weight's K
    EXPECT_THROW(problem_for("engram_gate_fusion", in, engram(1, 2, 2, 0)), Error);  // dilation
    auto one_tap = in;
    one_tap[6] = In{{2, 1, 1}, {}};
    EXPECT_THROW(problem_for("engram_gate_fusion", one_tap, engram(1, 2, 1, 1)), Error);
    auto bad_value = in;
    bad_value[2] = In{{1, 1, 3}, {}, DType::bf16};
    EXPECT_THROW(problem_for("engram_gate_fusion", bad_value, engram(1, 2, 2, 1)), Error);
    auto bad_state = in;
    bad_state[7] = In{{1, 2, 2}, {}, DType::bf16};  // S must be (2 - 1) * 1 = 1
    EXPECT_THROW(problem_for("engram_gate_fusion", bad_state, engram(1, 2, 2, 1)), Error);
    auto f32_keys = in;
    f32_keys[0].dtype = DType::f32;
    EXPECT_THROW(problem_for("engram_gate_fusion", f32_keys, engram(1, 2, 2, 1)), Error);
    const Problem p = problem_for("engram_gate_fusion", in, engram(1, 2, 2, 1));
    EXPECT_EQ(p.outputs.at(1).tensors.at(0).shape, (Shape{1, 2, 1}));
    const WorkModel w = op_named("engram_gate_fusion").work(p);
    EXPECT_EQ(w.bytes_read, 2 * 2 * 2 + 2 * 2 + 3 * 2 * 4 + 4 * 4);
    EXPECT_EQ(w.bytes_written, 2 * 2 + 2 * 2);
    EXPECT_EQ(w.parallel_items, 1);
}

// ---- case sampling -------------------------------------------------------------------------

std::set<DType> first_dtypes(const std::vector<CaseSpec>& cases) {
    std::set<DType> s;
    for (const auto& c : cases) s.insert(c.inputs.at(0).dtype);
    return s;
}

TEST(OpsLevel3L3c, AddRmsNormDynamicQuantCasesCoverRanksEpsilonsAndDtypes) {
    const auto cases = generated_cases("add_rms_norm_dynamic_quant");
    std::set<std::size_t> ranks;
    std::set<double> epsilons;
    for (const auto& c : cases) {
        ranks.insert(c.inputs.at(0).shapes.at(0).size());
        epsilons.insert(c.attrs.at("epsilon").f);
    }
    EXPECT_EQ(ranks, (std::set<std::size_t>{2, 3, 4}));
    EXPECT_EQ(epsilons, (std::set<double>{1e-8, 1e-6, 1e-5, 1e-3}));
    EXPECT_EQ(first_dtypes(cases), (std::set<DType>{DType::f16, DType::bf16}));
}

TEST(OpsLevel3L3c, DequantSwigluQuantCasesCoverBothPathsAndEveryOption) {
    const auto cases = generated_cases("dequant_swiglu_quant");
    std::set<std::pair<bool, bool>> options;
    for (const auto& c : cases) {
        options.insert({c.attrs.at("activate_left").b, c.inputs.at(3).present});
        const bool int_path = c.inputs.at(0).dtype == DType::i32;
        EXPECT_EQ(c.inputs.at(1).present, int_path);
        EXPECT_EQ(c.inputs.at(2).present, int_path);
    }
    EXPECT_EQ(options.size(), 4u);
    EXPECT_EQ(first_dtypes(cases), (std::set<DType>{DType::i32, DType::f16, DType::bf16}));
}

TEST(OpsLevel3L3c, MhcSinkhornCasesCoverSizesIterationsAndEps) {
    const auto cases = generated_cases("mhc_sinkhorn");
    std::set<std::int64_t> sizes, iterations;
    std::set<double> eps;
    for (const auto& c : cases) {
        sizes.insert(c.inputs.at(0).shapes.at(0).at(1));
        iterations.insert(c.attrs.at("iter_step").i);
        eps.insert(c.attrs.at("eps").f);
    }
    EXPECT_EQ(sizes, (std::set<std::int64_t>{2, 3, 4, 6, 8, 12, 16}));
    EXPECT_EQ(iterations, (std::set<std::int64_t>{1, 5, 20, 40}));
    EXPECT_EQ(eps.size(), 3u);
}

TEST(OpsLevel3L3c, MoeFinalizeRoutingCasesCoverEveryModeAndOptionalInput) {
    const auto cases = generated_cases("moe_finalize_routing");
    std::set<std::int64_t> modes;
    std::set<std::string> presence;
    bool fp32_scales_with_half_rows = false;
    for (const auto& c : cases) {
        modes.insert(c.attrs.at("drop_pad_mode").i);
        std::string key;
        for (int a = 2; a < 7; ++a) key += c.inputs.at(static_cast<std::size_t>(a)).present ? "1" : "0";
        presence.insert(key);
        fp32_scales_with_half_rows = fp32_scales_with_half_rows ||
                                     (c.inputs.at(5).present && c.inputs.at(5).dtype == DType::f32 &&
                                      c.inputs.at(0).dtype != DType::f32);
    }
    EXPECT_EQ(modes, (std::set<std::int64_t>{0, 1, 2, 3}));
    EXPECT_GE(presence.size(), 6u);
    EXPECT_TRUE(presence.count("11111") && presence.count("00000") && presence.count("11010") && presence.count("11101"));
    EXPECT_TRUE(fp32_scales_with_half_rows);
}

TEST(OpsLevel3L3c, MoeGatingCasesCoverRanksFinishedAndK) {
    const auto cases = generated_cases("moe_gating_top_k_softmax");
    std::set<std::size_t> ranks;
    std::set<bool> finished;
    std::set<std::int64_t> ks;
    for (const auto& c : cases) {
        ranks.insert(c.inputs.at(0).shapes.at(0).size());
        finished.insert(c.inputs.at(1).present);
        ks.insert(c.attrs.at("k").i);
    }
    EXPECT_EQ(ranks, (std::set<std::size_t>{2, 3}));
    EXPECT_EQ(finished, (std::set<bool>{false, true}));
    EXPECT_GE(ks.size(), 5u);
    EXPECT_EQ(first_dtypes(cases), (std::set<DType>{DType::f16, DType::bf16, DType::f32}));
}

TEST(OpsLevel3L3c, EngramGateFusionCasesCoverStateHeadsTapsAndDilations) {
    const auto cases = generated_cases("engram_gate_fusion");
    std::set<std::int64_t> heads, dims, taps, dilations;
    std::set<bool> state;
    for (const auto& c : cases) {
        heads.insert(c.attrs.at("hc_mult").i);
        dims.insert(c.attrs.at("hidden_size").i);
        taps.insert(c.attrs.at("kernel_size").i);
        dilations.insert(c.attrs.at("dilation").i);
        state.insert(c.inputs.at(7).present);
    }
    EXPECT_EQ(heads, (std::set<std::int64_t>{2, 4, 8}));
    EXPECT_EQ(dims.size(), 5u);
    EXPECT_EQ(taps, (std::set<std::int64_t>{2, 4, 8}));
    EXPECT_EQ(dilations, (std::set<std::int64_t>{1, 2, 3}));
    EXPECT_EQ(state, (std::set<bool>{false, true}));
}

}  // namespace
}  // namespace hb
