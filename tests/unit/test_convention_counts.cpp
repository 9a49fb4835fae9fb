// Each operator's count under the cann-bench convention on a small case, by hand from its
// formula (docs/hap.md, "Every operator's count"): the element-operations its work model
// states in WorkModel::formula, priced by the shipped cost table, per compute dtype, and the
// bytes the convention charges (every input, read in full).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "hap/convention.hpp"
#include "ops/formula_count.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/proto.hpp"
#include "suite/task_dir.hpp"

namespace hb {
namespace {

struct In {
    std::vector<Shape> shapes;  // one shape, or a list input's shapes
    DType dtype;
    std::optional<ValueRange> range = std::nullopt;
    bool is_list = false;
    bool present = true;  // false: an optional input left out
};

Problem problem_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {}) {
    const Operator* o = find_operator(op);
    EXPECT_NE(o, nullptr) << op;
    const std::string dir = std::string(HB_SOURCE_DIR) + "/suite/level" + std::to_string(o->level()) + "/" + op;
    static std::map<std::string, Proto> protos;  // resolve_problem keeps a pointer to it
    auto it = protos.find(op);
    if (it == protos.end()) it = protos.emplace(op, load_proto(dir + "/proto.yaml", op, o->level())).first;
    CaseSpec c;
    c.op = op;
    c.case_id = 1;
    c.attrs = std::move(attrs);
    for (const auto& in : inputs) {
        CaseInput ci;
        ci.shapes = in.shapes;
        ci.dtype = in.dtype;
        ci.range = in.range;
        ci.is_list = in.is_list;
        ci.present = in.present;
        c.inputs.push_back(ci);
    }
    return resolve_problem(it->second, *o, c);
}

// Element-operations of the formula in compute dtype `t`, priced by the shipped table.
double ops_in(const WorkModel& w, DType t) {
    double total = 0;
    for (const auto& term : w.formula)
        if (term.dtype == t) total += cann_bench_costs().cost.at(term.op_class).value * term.elements;
    return total;
}

double ops_total(const WorkModel& w) {
    double total = 0;
    for (const auto& term : w.formula) total += cann_bench_costs().cost.at(term.op_class).value * term.elements;
    return total;
}

WorkModel work_of(const Problem& p) { return find_operator(p.op())->work(p); }

AttrMap attrs(std::initializer_list<std::pair<const std::string, AttrValue>> a) { return AttrMap(a); }
AttrValue f(double v) { return AttrValue::of_float(v); }
AttrValue i(std::int64_t v) { return AttrValue::of_int(v); }
AttrValue s(const std::string& v) { return AttrValue::of_string(v); }

// ---- level 1 ----

// e^(scale*x + shift): mul, add, exp = 4; base > 0 multiplies by ln(base) inside: 5. fp32
// computes as itself; bf16 in fp32 with 2 casts (7); fp16 natively, no casts.
TEST(ConventionCounts, Exp) {
    EXPECT_EQ(ops_in(work_of(problem_for("exp", {{{{4}}, DType::f32}}, attrs({{"scale", f(2)}, {"shift", f(0.5)}}))), DType::f32), 4 * 4);
    EXPECT_EQ(ops_in(work_of(problem_for("exp", {{{{4}}, DType::bf16}}, attrs({{"base", f(2)}}))), DType::f32), 4 * 7);
    const WorkModel h = work_of(problem_for("exp", {{{{4}}, DType::f16}}, attrs({{"base", f(10)}})));
    EXPECT_EQ(ops_in(h, DType::f16), 4 * 5);
    EXPECT_EQ(ops_total(h), 4 * 5);
}

// x1 + scalar * x2 / x3: mul 1, div 4, add 1 (+2 casts for bf16) over every list element.
TEST(ConventionCounts, ForeachAddcdivScalar) {
    const In list{{{2, 3}, {4}}, DType::bf16, std::nullopt, true};
    const Problem p = problem_for("foreach_addcdiv_scalar", {list, list, list}, attrs({{"scalar", f(0.5)}}));
    EXPECT_EQ(ops_in(work_of(p), DType::f32), 10 * 8);
    EXPECT_EQ(all_input_bytes(p), 3 * 10 * 2);
}

// (sum |x|^p)^(1/p), a reduction, so fp16 computes in fp32 with 2 casts: p = 1.5 abs + pow 4 +
// add (+2) = 8; p = 2 abs + mul + add (+2) = 5; inf abs + max (+2) = 4; 0 compare + add (+2)
// = 4; p = 3 is a run-time power like 1.5.
TEST(ConventionCounts, ForeachNorm) {
    auto count = [](double p) {
        const In x{{{8}}, DType::f16, std::nullopt, true};
        return ops_in(work_of(problem_for("foreach_norm", {x}, attrs({{"scalar", f(p)}}))), DType::f32);
    };
    EXPECT_EQ(count(1.5), 8 * 8);
    EXPECT_EQ(count(3), 8 * 8);
    EXPECT_EQ(count(2), 8 * 5);
    EXPECT_EQ(count(1), 8 * 4);
    EXPECT_EQ(count(INFINITY), 8 * 4);
    EXPECT_EQ(count(0), 8 * 4);
}

// tanh: 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))) = 6 mul + 2 add + tanh 2 = 10;
// none: 0.5*x*(1 + erf(x/sqrt(2))) = 3 mul + add + erf 2 = 6; bf16 +2 casts.
TEST(ConventionCounts, Gelu) {
    EXPECT_EQ(ops_in(work_of(problem_for("gelu", {{{{5}}, DType::bf16}}, attrs({{"approximate", s("tanh")}}))), DType::f32), 5 * 12);
    EXPECT_EQ(ops_in(work_of(problem_for("gelu", {{{{5}}, DType::bf16}}, attrs({{"approximate", s("none")}}))), DType::f32), 5 * 8);
    EXPECT_EQ(ops_in(work_of(problem_for("gelu", {{{{5}}, DType::f16}}, attrs({{"approximate", s("tanh")}}))), DType::f16), 5 * 10);
}

// x * mask * scale: 2 mul, and a cast of the mask where its dtype is not the compute dtype.
TEST(ConventionCounts, MaskedScale) {
    const Problem p = problem_for("masked_scale", {{{{6}}, DType::f32}, {{{6}}, DType::i8}});
    EXPECT_EQ(ops_in(work_of(p), DType::f32), 6 * 3);
    EXPECT_EQ(all_input_bytes(p), 6 * 4 + 6);
    EXPECT_EQ(ops_in(work_of(problem_for("masked_scale", {{{{6}}, DType::f32}, {{{6}}, DType::f32}})), DType::f32), 6 * 2);
    // bf16 x computes in fp32, so a bf16 mask is converted too: 2 mul + 1 + 2 casts.
    EXPECT_EQ(ops_in(work_of(problem_for("masked_scale", {{{{6}}, DType::bf16}, {{{6}}, DType::bf16}})), DType::f32), 6 * 5);
}

// x * tanh(ln(1 + e^x)): mul, tanh 2, log 1, add, exp 2 = 7, fp16 natively.
TEST(ConventionCounts, Mish) {
    EXPECT_EQ(ops_in(work_of(problem_for("mish", {{{{3}}, DType::f16}})), DType::f16), 3 * 7);
    EXPECT_EQ(ops_in(work_of(problem_for("mish", {{{{3}}, DType::bf16}})), DType::f32), 3 * 9);
}

// 1 / (1 + e^-x): negate, exp 2, add, div 4 = 8; bf16 10 (the published 27.96 us of case 3).
TEST(ConventionCounts, Sigmoid) {
    EXPECT_EQ(ops_in(work_of(problem_for("sigmoid", {{{{2, 3}}, DType::bf16}})), DType::f32), 6 * 10);
    const WorkModel h = work_of(problem_for("sigmoid", {{{{2, 3}}, DType::f16}}));
    EXPECT_EQ(ops_in(h, DType::f16), 6 * 8);
    EXPECT_EQ(ops_total(h), 6 * 8);
}

// silu(a) * b per output element: 2 mul + sigmoid's 8 = 10, +2 casts for bf16.
TEST(ConventionCounts, SwiGlu) {
    EXPECT_EQ(ops_in(work_of(problem_for("swi_glu", {{{{2, 8}}, DType::bf16}}, attrs({{"dim", i(-1)}}))), DType::f32), 8 * 12);
}

// ---- level 2 ----

// Per element: 9 mul, 5 add, sqrt 1, div 4 = 19 (docs/hap.md writes the formula out).
TEST(ConventionCounts, ApplyAdamW) {
    const In v{{{10}}, DType::f32};
    const Problem p = problem_for("apply_adam_w", {v, v, v, v},
                                  attrs({{"lr", f(0.01)}, {"beta1", f(0.9)}, {"beta2", f(0.99)}, {"weight_decay", f(0)}}));
    EXPECT_EQ(ops_in(work_of(p), DType::f32), 10 * 19);
    EXPECT_EQ(all_input_bytes(p), 4 * 10 * 4);
}

// x * cos + rotate(x) * sin per output element of query and key: 2 mul, add, and the
// negation of half: 3.5, fp16 natively.
TEST(ConventionCounts, ApplyRotaryPosEmb) {
    const Problem p = problem_for("apply_rotary_pos_emb", {{{{1, 2, 1, 4}}, DType::f16}, {{{1, 2, 1, 4}}, DType::f16},
                                                           {{{2, 2}}, DType::f16}, {{{2, 2}}, DType::f16}});
    EXPECT_EQ(ops_in(work_of(p), DType::f16), 16 * 3.5);
    EXPECT_EQ(all_input_bytes(p), (8 + 8 + 4 + 4) * 2);
}

// A compare and an index select per element, no casts (bf16 at the fp32 rate).
TEST(ConventionCounts, ArgMax) {
    const WorkModel w = work_of(problem_for("arg_max", {{{{3, 4}}, DType::bf16}}, attrs({{"dim", i(1)}})));
    EXPECT_EQ(ops_in(w, DType::f32), 12 * 2);
    EXPECT_EQ(ops_total(w), 12 * 2);
}

// Per logit exp 2 and the sum's add; a reduction, so fp16 in fp32 with 2 casts: 5. The
// targets' bytes count (every input, in full).
TEST(ConventionCounts, CrossEntropyLoss) {
    const Problem p = problem_for("cross_entropy_loss", {{{{4, 5}}, DType::f16}, {{{4}}, DType::i64, ValueRange{0, 4}}});
    EXPECT_EQ(ops_in(work_of(p), DType::f32), 20 * 5);
    EXPECT_EQ(all_input_bytes(p), 20 * 2 + 4 * 8);
}

// A scan: ceil(log2 L) compares per element, no casts; fp16 natively, bf16 at the fp32 rate.
TEST(ConventionCounts, Cummin) {
    EXPECT_EQ(ops_in(work_of(problem_for("cummin", {{{{3, 5}}, DType::bf16}}, attrs({{"dim", i(1)}}))), DType::f32), 15 * 3);
    EXPECT_EQ(ops_in(work_of(problem_for("cummin", {{{{6, 4}}, DType::f16}}, attrs({{"dim", i(0)}}))), DType::f16), 24 * 3);
    EXPECT_EQ(ops_in(work_of(problem_for("cummin", {{{{8}}, DType::i32}}, attrs({{"dim", i(0)}}))), DType::i32), 8 * 3);
    EXPECT_EQ(ops_total(work_of(problem_for("cummin", {{{{1, 8}}, DType::f32}}, attrs({{"dim", i(0)}})))), 0);
}

// abs, the row max, a division by the scale and the rounding = 7, +2 casts: 9 (fp16 too).
TEST(ConventionCounts, DynamicQuant) {
    EXPECT_EQ(ops_in(work_of(problem_for("dynamic_quant", {{{{2, 8}}, DType::f16}})), DType::f32), 16 * 9);
}

// One element moved per output; all of x and the index are read.
TEST(ConventionCounts, Gather) {
    const Problem p = problem_for("gather", {{{{4, 5}}, DType::f16}, {{{2, 5}}, DType::i64, ValueRange{0, 3}}},
                                  attrs({{"dim", i(0)}}));
    EXPECT_EQ(ops_in(work_of(p), DType::f16), 10);
    EXPECT_EQ(all_input_bytes(p), 20 * 2 + 10 * 8);
}

// Euclid at Lame's bound: 5 steps per decimal digit of the largest magnitude (at least one),
// a step a division (4) and a compare: 25 per digit, in the integer dtype.
TEST(ConventionCounts, Gcd) {
    const Problem p = problem_for("gcd", {{{{6}}, DType::i32, ValueRange{-1000, 1000}}, {{{6}}, DType::i32, ValueRange{-10, 10}}});
    EXPECT_NEAR(ops_in(work_of(p), DType::i32), 6 * 25 * 3, 1e-9);
    const Problem zeros = problem_for("gcd", {{{{6}}, DType::i64, ValueRange{0, 0}}, {{{6}}, DType::i64, ValueRange{0, 0}}});
    EXPECT_NEAR(ops_in(work_of(zeros), DType::i64), 6 * 25, 1e-9);
}

// x [1, 2, 2, 2, 2], grid [1, 1, 1, 3, 3]: 3 points, 6 output values. Trilinear with zeros
// padding: per point 37 (unnormalize 6, bounds 6, floor 3, fractions and complements 6,
// 8 weights x 2 mul), per value 8 taps + 8 mul + 7 add = 23; reflection 43 a point; nearest
// 15 a point and 1 tap a value.
TEST(ConventionCounts, GridSampler3d) {
    auto count = [](const char* interp, const char* padding) {
        return ops_in(work_of(problem_for("grid_sampler_3d",
                                          {{{{1, 2, 2, 2, 2}}, DType::f32}, {{{1, 1, 1, 3, 3}}, DType::f32, ValueRange{-1, 1}}},
                                          attrs({{"interpolation_mode", s(interp)}, {"padding_mode", s(padding)}}))),
                      DType::f32);
    };
    EXPECT_EQ(count("bilinear", "zeros"), 3 * 37 + 6 * 23);
    EXPECT_EQ(count("bilinear", "border"), 3 * 37 + 6 * 23);
    EXPECT_EQ(count("bilinear", "reflection"), 3 * 43 + 6 * 23);
    EXPECT_EQ(count("nearest", "zeros"), 3 * 15 + 6 * 1);
}

// Per element: the statistics' sums (mean: add; E[x^2]: mul, add), x - mean, the multiply
// by the reciprocal root, gamma, beta = 7, +2 casts: 9.
TEST(ConventionCounts, GroupNorm) {
    const Problem p = problem_for("group_norm", {{{{2, 4, 3}}, DType::bf16}, {{{4}}, DType::bf16}, {{{4}}, DType::bf16}},
                                  attrs({{"num_groups", i(2)}}));
    EXPECT_EQ(ops_in(work_of(p), DType::f32), 24 * 9);
    EXPECT_EQ(all_input_bytes(p), (24 + 4 + 4) * 2);
}

// One max per output element of the broadcast, in the integer dtype.
TEST(ConventionCounts, Maximum) {
    EXPECT_EQ(ops_in(work_of(problem_for("maximum", {{{{4, 1}}, DType::i64}, {{{1, 3}}, DType::i64}})), DType::i64), 12);
}

// fp16 [1, 2, 4, 4] -> [8, 8], in fp32: per output value 4 taps + 4 mul + 3 add + 2 casts = 13
// (128 values); per output location 2 complements + 4 weights (64); per output row and
// column mul, add, floor, fraction (16).
TEST(ConventionCounts, ResizeBilinear) {
    AttrValue size;
    size.type = AttrType::int_list;
    size.ints = {8, 8};
    const Problem p = problem_for("resize_bilinear", {{{{1, 2, 4, 4}}, DType::f16}}, attrs({{"output_size", size}}));
    EXPECT_EQ(ops_in(work_of(p), DType::f32), 128 * 13 + 64 * 6 + 16 * 4);
}

// x^2 and the mean's sum, the multiply by the row's reciprocal root and gamma: 4, +2 casts.
TEST(ConventionCounts, RmsNorm) {
    EXPECT_EQ(ops_in(work_of(problem_for("rms_norm", {{{{3, 4}}, DType::f16}, {{{4}}, DType::f16}})), DType::f32), 12 * 6);
}

// y = copy of data (a move per element), one update moved per index, and the reduce's op.
TEST(ConventionCounts, Scatter) {
    auto count = [](DType t, const AttrValue& reduce) {
        const Problem p = problem_for("scatter", {{{{4, 3}}, t}, {{{2, 3}}, DType::i64, ValueRange{0, 3}}, {{{2, 3}}, t}},
                                      attrs({{"dim", i(0)}, {"reduce", reduce}}));
        return ops_total(work_of(p));
    };
    EXPECT_EQ(count(DType::f32, AttrValue{}), 12 + 6);
    EXPECT_EQ(count(DType::f32, s("add")), 12 + 6 + 6);
    EXPECT_EQ(count(DType::f32, s("amax")), 12 + 6 + 6);
    EXPECT_EQ(count(DType::bf16, s("add")), 12 + 6 + 6 * 3);  // the add in fp32, with its 2 casts
}

// exp(x_i) / sum(exp(x_j)): exp 2, the sum's add, div 4 = 7, +2 casts: 9.
TEST(ConventionCounts, Softmax) {
    EXPECT_EQ(ops_in(work_of(problem_for("softmax", {{{{3, 4}}, DType::bf16}}, attrs({{"dim", i(-1)}}))), DType::f32), 12 * 9);
}

// One add per data element, a reduction: fp16 in fp32 with 2 casts; integers as themselves.
TEST(ConventionCounts, UnsortedSegmentSum) {
    const AttrMap two = attrs({{"num_segments", i(2)}});
    EXPECT_EQ(ops_in(work_of(problem_for("unsorted_segment_sum", {{{{4, 3}}, DType::f16}, {{{4}}, DType::i32, ValueRange{0, 1}}}, two)),
                     DType::f32),
              12 * 3);
    EXPECT_EQ(ops_in(work_of(problem_for("unsorted_segment_sum", {{{{4, 3}}, DType::i32}, {{{4}}, DType::i32, ValueRange{0, 1}}}, two)),
                     DType::i32),
              12);
}

// ---- level 4 (l4b) ----

// gru per hidden unit and step: r, z (3 adds, then sigmoid: negate, exp, add, div), n (3 adds,
// mul, tanh), h' (2 adds, 2 muls) = add 15, mul 3, exp 2, div 2, tanh 1 = 32 with bias, 26 without
// (one add per gate); in fp32, +2 casts for half inputs. S = 3, B = 2, H = 4, 2 layers x 2
// directions: 24 units in each of 4 cells.
TEST(ConventionCounts, Gru) {
    auto count = [](DType t, bool bias) {
        const std::vector<Shape> ih = {{12, 5}, {12, 5}, {12, 8}, {12, 8}}, hh(4, Shape{12, 4}), b(4, Shape{12});
        std::vector<In> inputs = {{{{3, 2, 5}}, t}, {ih, t, std::nullopt, true}, {hh, t, std::nullopt, true}};
        const In none{{}, t, std::nullopt, true, false};
        if (bias) inputs.push_back({b, t, std::nullopt, true}), inputs.push_back({b, t, std::nullopt, true});
        else inputs.push_back(none), inputs.push_back(none);
        inputs.push_back({{}, t, std::nullopt, false, false});  // h0
        Problem p = problem_for("gru", inputs,
                                attrs({{"inputSize", i(5)}, {"hiddenSize", i(4)}, {"numLayers", i(2)},
                                       {"bidirectional", AttrValue::of_bool(true)}, {"bias", AttrValue::of_bool(bias)}}));
        return ops_in(work_of(p), DType::f32);
    };
    const double units = 3 * 2 * 4 * 4;
    EXPECT_EQ(count(DType::f32, true), units * 32);
    EXPECT_EQ(count(DType::f32, false), units * 26);
    EXPECT_EQ(count(DType::bf16, true), units * 34);
    EXPECT_EQ(count(DType::f16, true), units * 34);
}

// lstm per hidden unit and step: 4 gates x 3 adds, 3 sigmoids x (negate, exp, add, div), g's
// tanh, c' = f c + i g (2 muls, add), h' = o tanh(c') (mul, tanh) = add 19, mul 3, exp 3, div 3,
// tanh 2 = 44 with bias, 36 without; the projection is matrix work. S = 2, B = 3, H = 4, one cell.
TEST(ConventionCounts, Lstm) {
    auto count = [](DType t, bool bias, std::int64_t proj) {
        const std::int64_t hs = proj ? proj : 4;
        std::vector<In> inputs = {{{{2, 3, 6}}, t}, {{{16, 6}}, t, std::nullopt, true}, {{{16, hs}}, t, std::nullopt, true}};
        const In none{{}, t, std::nullopt, true, false};
        if (bias) inputs.push_back({{{16}}, t, std::nullopt, true}), inputs.push_back({{{16}}, t, std::nullopt, true});
        else inputs.push_back(none), inputs.push_back(none);
        inputs.push_back(proj ? In{{{proj, 4}}, t, std::nullopt, true} : none);
        inputs.push_back({{}, t, std::nullopt, false, false});  // h0
        inputs.push_back({{}, t, std::nullopt, false, false});  // c0
        Problem p = problem_for("lstm", inputs,
                                attrs({{"inputSize", i(6)}, {"hiddenSize", i(4)}, {"projSize", i(proj)},
                                       {"bias", AttrValue::of_bool(bias)}}));
        return ops_in(work_of(p), DType::f32);
    };
    const double units = 2 * 3 * 4;
    EXPECT_EQ(count(DType::f32, true, 0), units * 44);
    EXPECT_EQ(count(DType::f32, false, 0), units * 36);
    EXPECT_EQ(count(DType::f32, true, 2), units * 44);
    EXPECT_EQ(count(DType::f16, true, 0), units * 46);
}

// grouped_matmul_swiglu_quant per activation (M x N/2): dequantize both halves (2 casts, 4 muls),
// SiLU t sigmoid(t) (negate, exp, add, div, mul), the gating mul, |act| and the row max, the
// division by y_scale and its rounding: cast 3 + mul 6 + add 2 + exp 2 + div 8 + abs 1 + cmp 1 =
// 23, in fp32; the products are matrix work.
TEST(ConventionCounts, GroupedMatmulSwigluQuant) {
    AttrValue groups;
    groups.type = AttrType::int_list;
    groups.ints = {3, 3, 5};
    Problem p = problem_for("grouped_matmul_swiglu_quant",
                            {{{{5, 7}}, DType::i8}, {{{3, 7, 8}}, DType::i8}, {{{3, 8}}, DType::f32}, {{{5}}, DType::f32}},
                            attrs({{"group_list", groups}}));
    EXPECT_EQ(ops_in(work_of(p), DType::f32), 5 * 4 * 23.0);
    EXPECT_EQ(ops_total(work_of(p)), 5 * 4 * 23.0);
}

// ---- level 4 (l4a): attention ----

// Per allowed score the scale's mul, softmax's exp (2), sum add and div (4) = 8 at the fp32 rate,
// without casts (the softmax reads the scores' fp32 contraction); per masked score the mask's
// select. S = 2, Skv = 3, causal: 2 + 3 allowed of 6 per head; 2 heads.
TEST(ConventionCounts, MhaAndGqa) {
    const AttrMap causal = attrs({{"is_causal", AttrValue::of_bool(true)}});
    for (const std::string op : {"mha", "gqa"}) {
        const WorkModel w =
            work_of(problem_for(op, {{{{1, 2, 2, 4}}, DType::bf16}, {{{1, 3, 2, 4}}, DType::bf16}, {{{1, 3, 2, 4}}, DType::bf16}}, causal));
        EXPECT_EQ(ops_in(w, DType::f32), 2 * (5 * 8 + 1)) << op;
        EXPECT_EQ(ops_total(w), ops_in(w, DType::f32)) << op;
    }
    // Not causal, fp16: 6 scores a head, no select; still fp32 (the scores are fp32).
    const WorkModel h =
        work_of(problem_for("gqa", {{{{1, 2, 4, 4}}, DType::f16}, {{{1, 3, 2, 4}}, DType::f16}, {{{1, 3, 2, 4}}, DType::f16}}));
    EXPECT_EQ(ops_in(h, DType::f32), 4 * 6 * 8);
    EXPECT_EQ(ops_in(h, DType::f16), 0);
}

TEST(ConventionCounts, Mla) {
    const Problem p = problem_for("mla",
                                  {{{{1, 3, 2, 8}}, DType::f16}, {{{1, 3, 2, 2}}, DType::f16}, {{{1, 3, 1, 8}}, DType::f16},
                                   {{{1, 3, 1, 2}}, DType::f16}, {{{1, 3, 1, 8}}, DType::f16}},
                                  attrs({{"is_causal", AttrValue::of_bool(true)}}));
    // S = Skv = 3, causal: 6 allowed and 3 masked scores per head.
    EXPECT_EQ(ops_in(work_of(p), DType::f32), 2 * (6 * 8 + 3));
    EXPECT_EQ(all_input_bytes(p), (3 * 2 * 10 + 3 * 18) * 2.0);
}

// The gather moves topK (Dk + Dv) elements per (b, s1, n2), a select each in the input dtype
// (fp16 natively); then the attention count per listed score (8 allowed, select masked).
TEST(ConventionCounts, SparseFlashAttention) {
    const Problem p = problem_for("sparse_flash_attention",
                                  {{{{1, 2, 4, 6}}, DType::f16}, {{{1, 10, 2, 6}}, DType::f16}, {{{1, 10, 2, 4}}, DType::f16},
                                   {{{1, 2, 2, 3}}, DType::i32, ValueRange{0, 9}}},
                                  attrs({{"scaleValue", f(0.5)}}));
    const WorkModel w = work_of(p);
    EXPECT_EQ(ops_in(w, DType::f16), 2 * 2 * 3 * 10);
    EXPECT_EQ(ops_in(w, DType::f32), 4 * 2 * 3 * 8);
    EXPECT_EQ(all_input_bytes(p), (2 * 4 * 6 + 10 * 2 * 10) * 2.0 + 2 * 2 * 3 * 4);
}

// RMSNorm x^2, the mean's sum, the reciprocal root and gamma = 4 per normalized element (Hcq +
// Hckv per token); RoPE 2 mul, add and half a negation = 3.5 per rotated element ((N + 1) Dr per
// token); fp32 without casts.
TEST(ConventionCounts, MlaProlog) {
    const std::int64_t t = 3, he = 16, cq = 8, n = 2, d = 4, ckv = 6, dr = 4;
    const Problem p = problem_for("mla_prolog",
                                  {{{{1, t, he}}, DType::bf16}, {{{he, cq}}, DType::bf16}, {{{cq, n * (d + dr)}}, DType::bf16},
                                   {{{n, d, ckv}}, DType::bf16}, {{{he, ckv + dr}}, DType::bf16}, {{{cq}}, DType::bf16},
                                   {{{ckv}}, DType::bf16}, {{{1, t, dr}}, DType::bf16}, {{{1, t, dr}}, DType::bf16}},
                                  attrs({{"n_heads", i(n)}}));
    EXPECT_EQ(ops_in(work_of(p), DType::f32), t * (4.0 * (cq + ckv) + 3.5 * (n + 1) * dr));
}

// Every registered operator counts its formula: the convention refuses a work model without
// one, so an operator added without it shows here (docs/hap.md, "Adding an operator under
// both conventions").
TEST(ConventionCounts, EveryShippedCaseHasAFormulaCount) {
    const HardwareModel b2 = load_hardware_model("ascend910b2");
    const TaskDir dir = load_task_dir(std::string(HB_SOURCE_DIR) + "/suite", "cpu");
    int solved = 0;
    for (const auto& entry : dir.tasks) {
        const Operator* op = find_operator(entry.op);
        if (!op) continue;
        for (const auto& c : entry.cases) {
            const Problem p = resolve_problem(entry.proto, *op, c);
            try {
                const HapResult r = t_hw_under(Convention::cann_bench, p, op->work(p), b2);
                EXPECT_GE(r.t_hw_us, 1.0) << entry.op << " case " << c.case_id;
                ++solved;
            } catch (const Error& e) {
                ADD_FAILURE() << e.what();
            }
        }
    }
    EXPECT_GE(solved, 480);
}

}  // namespace
}  // namespace hb
