// Level-3 contractions grouped_matmul, quant_matmul and weight_quant_batch_matmul: goldens
// against hand-computed values and against naive loops (every attribute path: empty groups,
// both weight layouts, both output structures, batch broadcasting, per-tensor and
// per-channel scales, offsets, per-token scales, integer and floating biases), the
// same-precision references, special values, shape inference and its errors, work models,
// and case sampling through the generator.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/dgemm.hpp"
#include "ops/matmul_sampling.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/case_rules.hpp"
#include "spec/case_sampler.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"
#include "suite/split.hpp"
#include "suite/task_dir.hpp"

namespace hb {
namespace {

const double inf = std::numeric_limits<double>::infinity();

const Proto& suite_proto(const std::string& op) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end())
        it = protos.emplace(op, load_proto(std::string(HB_SOURCE_DIR) + "/suite/level3/" + op + "/proto.yaml", op, 3)).first;
    return it->second;
}

const Operator& op_named(const std::string& name) {
    const Operator* op = find_operator(name);
    if (!op) throw Error("operator " + name + " is not registered");
    return *op;
}

// One input: absent (no shape), or a tensor with its values.
struct In {
    DType dtype = DType::f32;
    Shape shape;
    std::vector<double> values;
    bool present = true;
};
const In absent{DType::f32, {}, {}, false};

Problem problem_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs) {
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
    return resolve_problem(suite_proto(op), op_named(op), c);
}

// Every tensor of the first output of the golden (or the same-precision reference).
std::vector<std::vector<double>> evaluate(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {},
                                          bool same_precision = false) {
    const Problem p = problem_for(op, inputs, std::move(attrs));
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = p.inputs[k].name;
        in[k].present = inputs[k].present;
        if (inputs[k].present) in[k].tensors.push_back({TensorSpec{inputs[k].dtype, inputs[k].shape}, inputs[k].values});
    }
    ValueArgs<double> out = values_for_specs<double>(p.outputs);
    if (same_precision) op_named(op).same_precision(p, in, out);
    else op_named(op).golden(p, in, out);
    std::vector<std::vector<double>> tensors;
    for (const auto& t : out.at(0).tensors) tensors.push_back(t.v);
    return tensors;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected, double rel = 1e-12) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        else if (std::isinf(expected[i])) EXPECT_EQ(got[i], expected[i]) << "element " << i;
        else EXPECT_NEAR(got[i], expected[i], rel * std::fabs(expected[i]) + 1e-300) << "element " << i;
    }
}

// Values in [lo, hi] from a fixed stream, rounded to `dtype` (integers for int8).
std::vector<double> values(std::size_t n, double lo, double hi, DType dtype, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<double> v(n);
    for (auto& x : v) x = is_floating(dtype) ? round_to_dtype(rng.uniform(lo, hi), dtype)
                                             : static_cast<double>(rng.uniform_int(static_cast<std::int64_t>(lo),
                                                                                   static_cast<std::int64_t>(hi)));
    return v;
}

AttrValue int_list(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

double vector_elements(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

// ------------------------------------------------------------------------------ BLAS products

// hb::gemm against a naive loop, both transposes and strided rows (the goldens rely on it).
TEST(OpsLevel3L3a, BlasProductsMatchANaiveLoop) {
    const std::int64_t m = 5, n = 7, k = 9, pad = 3;
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            const std::int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
            const auto a = values(static_cast<std::size_t>((ta ? k : m) * lda), -2, 2, DType::f64, 1);
            const auto b = values(static_cast<std::size_t>((tb ? n : k) * ldb), -2, 2, DType::f64, 2);
            std::vector<double> c(static_cast<std::size_t>(m * ldc), 99);
            gemm(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
            const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
            std::vector<float> cf(static_cast<std::size_t>(m * ldc), 99);
            gemm(ta, tb, m, n, k, af.data(), lda, bf.data(), ldb, cf.data(), ldc);
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < n; ++j) {
                    long double want = 0;
                    for (std::int64_t r = 0; r < k; ++r)
                        want += static_cast<long double>(a[static_cast<std::size_t>(ta ? r * lda + i : i * lda + r)]) *
                                b[static_cast<std::size_t>(tb ? j * ldb + r : r * ldb + j)];
                    EXPECT_NEAR(c[static_cast<std::size_t>(i * ldc + j)], static_cast<double>(want), 1e-12) << ta << tb;
                    EXPECT_NEAR(cf[static_cast<std::size_t>(i * ldc + j)], static_cast<double>(want), 1e-4) << ta << tb;
                }
            EXPECT_EQ(c[static_cast<std::size_t>(n)], 99) << "the padding of C is left alone";
        }
}

// ---------------------------------------------------------------------------- grouped_matmul

AttrMap grouped(std::vector<std::int64_t> ends, std::int64_t split = 0, bool transpose = false) {
    return {{"group_list", int_list(std::move(ends))},
            {"split_item", AttrValue::of_int(split)},
            {"transpose_weight", AttrValue::of_bool(transpose)}};
}

TEST(OpsLevel3L3a, GroupedMatmulByHand) {
    // x rows 0 | 1, 2 with group_list [1, 3]; W_0 = [[1, 0], [0, 1]] (identity), W_1 = [[1, 1],
    // [0, 2]]; bias [[10, 20], [0, -1]].
    const In x{DType::f32, {3, 2}, {1, 2, 3, 4, 5, 6}};
    const In w{DType::f32, {2, 2, 2}, {1, 0, 0, 1, 1, 1, 0, 2}};
    const In bias{DType::f32, {2, 2}, {10, 20, 0, -1}};
    const auto split = evaluate("grouped_matmul", {x, w, bias}, grouped({1, 3}));
    ASSERT_EQ(split.size(), 2u);
    expect_values(split[0], {11, 22});
    expect_values(split[1], {3, 3 + 8 - 1, 5, 5 + 12 - 1});
    const auto single = evaluate("grouped_matmul", {x, w, bias}, grouped({1, 3}, 3));
    ASSERT_EQ(single.size(), 1u);
    expect_values(single[0], {11, 22, 3, 10, 5, 16});
    // transpose_weight: weight [E, N, K] holds W_g^T; the same products.
    const In wt{DType::f32, {2, 2, 2}, {1, 0, 0, 1, 1, 0, 1, 2}};
    expect_values(evaluate("grouped_matmul", {x, wt, bias}, grouped({1, 3}, 2, true))[0], {11, 22, 3, 10, 5, 16});
    // Without bias.
    expect_values(evaluate("grouped_matmul", {x, w, absent}, grouped({1, 3}, 2))[0], {1, 2, 3, 11, 5, 17});
}

// The golden against a naive loop: empty groups (first, middle, last), both layouts, both
// output structures, with and without bias.
TEST(OpsLevel3L3a, GroupedMatmulGoldenMatchesANaiveLoop) {
    const std::int64_t m = 11, k = 13, n = 6, e = 5;
    const std::vector<std::int64_t> ends = {0, 4, 4, 11, 11};
    const auto xv = values(static_cast<std::size_t>(m * k), -3, 3, DType::f32, 3);
    const auto wv = values(static_cast<std::size_t>(e * k * n), -3, 3, DType::f32, 4);
    const auto bv = values(static_cast<std::size_t>(e * n), -3, 3, DType::f32, 5);
    for (bool transpose : {false, true})
        for (std::int64_t split : {0, 1, 2, 3})
            for (bool with_bias : {false, true}) {
                SCOPED_TRACE(std::to_string(transpose) + " split " + std::to_string(split) + " bias " + std::to_string(with_bias));
                const In x{DType::f32, {m, k}, xv};
                const In w{DType::f32, transpose ? Shape{e, n, k} : Shape{e, k, n}, wv};
                const In b = with_bias ? In{DType::f32, {e, n}, bv} : absent;
                const auto out = evaluate("grouped_matmul", {x, w, b}, grouped(ends, split, transpose));
                ASSERT_EQ(out.size(), split >= 2 ? 1u : static_cast<std::size_t>(e));
                std::int64_t begin = 0;
                for (std::int64_t g = 0; g < e; ++g) {
                    const std::int64_t rows = ends[static_cast<std::size_t>(g)] - begin;
                    const auto& y = split >= 2 ? out[0] : out[static_cast<std::size_t>(g)];
                    if (split < 2) {
                        EXPECT_EQ(y.size(), static_cast<std::size_t>(rows * n));
                    }
                    for (std::int64_t r = 0; r < rows; ++r)
                        for (std::int64_t j = 0; j < n; ++j) {
                            long double want = with_bias ? bv[static_cast<std::size_t>(g * n + j)] : 0;
                            for (std::int64_t t = 0; t < k; ++t) {
                                const double wgt = wv[static_cast<std::size_t>(g * k * n + (transpose ? j * k + t : t * n + j))];
                                want += static_cast<long double>(xv[static_cast<std::size_t>((begin + r) * k + t)]) * wgt;
                            }
                            const std::int64_t row = split >= 2 ? begin + r : r;
                            EXPECT_NEAR(y[static_cast<std::size_t>(row * n + j)], static_cast<double>(want), 1e-11);
                        }
                    begin = ends[static_cast<std::size_t>(g)];
                }
            }
}

TEST(OpsLevel3L3a, GroupedMatmulSpecialValuesFollowIeee) {
    // inf x 0 is NaN, inf x 1 + finite is inf, and NaN spreads along its row.
    const In x{DType::f32, {2, 2}, {inf, 1, std::nan(""), 0}};
    const In w{DType::f32, {1, 2, 2}, {0, 1, 1, 1}};
    expect_values(evaluate("grouped_matmul", {x, w, absent}, grouped({2}, 2))[0], {std::nan(""), inf, std::nan(""), std::nan("")});
}

TEST(OpsLevel3L3a, GroupedMatmulSamePrecisionIsFp32RoundedToX) {
    // bf16 x with an fp32 bias: products in fp32, the bias added in fp32, one rounding.
    const In x{DType::bf16, {1, 2}, {1, 1}};
    const In w{DType::bf16, {1, 2, 1}, {256, 1}};
    const In bias{DType::f32, {1, 1}, {0.25}};
    const auto same = evaluate("grouped_matmul", {x, w, bias}, grouped({1}, 2), true)[0];
    EXPECT_EQ(same[0], round_to_dtype(257.25, DType::bf16));  // 257.25 -> 258 in bf16
    EXPECT_EQ(evaluate("grouped_matmul", {x, w, bias}, grouped({1}, 2))[0][0], 257.25);  // the golden is not rounded
}

TEST(OpsLevel3L3a, GroupedMatmulOutputsAndErrors) {
    const In x{DType::f16, {6, 4}, {}};
    const In w{DType::f16, {3, 4, 5}, {}};
    const Problem p = problem_for("grouped_matmul", {x, w, absent}, grouped({2, 2, 6}, 0));
    ASSERT_EQ(p.outputs.at(0).tensors.size(), 3u);
    EXPECT_EQ(p.outputs.at(0).tensors[1].shape, (Shape{0, 5}));  // the empty group is still there
    EXPECT_EQ(p.outputs.at(0).tensors[2].shape, (Shape{4, 5}));
    EXPECT_EQ(p.outputs.at(0).tensors[2].dtype, DType::f16);
    const Problem q = problem_for("grouped_matmul", {x, {DType::f16, {3, 5, 4}, {}}, absent}, grouped({2, 2, 6}, 2, true));
    ASSERT_EQ(q.outputs.at(0).tensors.size(), 1u);
    EXPECT_EQ(q.outputs.at(0).tensors[0].shape, (Shape{6, 5}));

    auto fails = [](const std::vector<In>& inputs, AttrMap attrs) {
        EXPECT_THROW(problem_for("grouped_matmul", inputs, std::move(attrs)), Error);
    };
    fails({x, w, absent}, grouped({2, 6}));            // one end per expert
    fails({x, w, absent}, grouped({3, 2, 6}));         // decreasing
    fails({x, w, absent}, grouped({2, 2, 5}));         // does not end at M
    fails({x, w, absent}, grouped({2, 2, 7}));         // beyond M
    fails({x, w, absent}, grouped({2, 2, 6}, 4));      // split_item
    fails({x, {DType::f16, {3, 5, 5}, {}}, absent}, grouped({2, 2, 6}));         // K mismatch
    fails({x, {DType::f16, {3, 4, 5}, {}}, absent}, grouped({2, 2, 6}, 0, true)); // [E, N, K] expected
    fails({x, {DType::bf16, {3, 4, 5}, {}}, absent}, grouped({2, 2, 6}));        // dtype mismatch
    fails({x, w, {DType::f16, {3, 4}, {}}}, grouped({2, 2, 6}));                 // bias [E, N]
    fails({x, w, {DType::f32, {3, 5}, {}}}, grouped({2, 2, 6}));                 // fp32 bias only with bf16 x
    EXPECT_NO_THROW(problem_for("grouped_matmul", {{DType::bf16, {6, 4}, {}}, {DType::bf16, {3, 4, 5}, {}}, {DType::f32, {3, 5}, {}}},
                                grouped({2, 2, 6})));
    try {
        problem_for("grouped_matmul", {x, w, absent}, grouped({2, 2, 5}));
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("group_list ends at 5 but x has M = 6"), std::string::npos) << e.what();
    }
}

TEST(OpsLevel3L3a, GroupedMatmulWorkModelSkipsEmptyExperts) {
    const Problem p = problem_for("grouped_matmul", {{DType::bf16, {40, 64}, {}}, {DType::bf16, {3, 64, 32}, {}}, {DType::f32, {3, 32}, {}}},
                                  grouped({8, 8, 40}));
    const WorkModel w = op_named("grouped_matmul").work(p);
    // x, two experts' weights and bias rows; y.
    EXPECT_EQ(w.bytes_read, 40 * 64 * 2 + 2 * (64 * 32 * 2 + 32 * 4));
    EXPECT_EQ(w.bytes_written, 40 * 32 * 2);
    ASSERT_EQ(w.contractions.size(), 2u);
    EXPECT_EQ(w.contractions[0].m, 8);
    EXPECT_TRUE(w.contractions[0].vector_ok);
    EXPECT_EQ(w.contractions[1].m, 32);
    EXPECT_FALSE(w.contractions[1].vector_ok);
    EXPECT_EQ(w.contractions[1].k, 64);
    EXPECT_EQ(w.contractions[1].dtype, DType::bf16);
    EXPECT_EQ(w.parallel_items, 1 * 2 + 2 * 2);  // 16x16 output tiles
    EXPECT_EQ(vector_elements(w, OpClass::add), 40 * 32);
}

// ------------------------------------------------------------------------------ quant_matmul

AttrMap out_dtype(const char* name) { return {{"output_dtype", AttrValue::of_string(name)}}; }

TEST(OpsLevel3L3a, QuantMatmulByHandInTheReferenceOrder) {
    // acc = [[1, 2], [3, 4]] . [[1, 0], [1, 1]] = [[3, 2], [7, 4]]; int32 bias [1, -1] before the
    // scale; scale [2, 0.5]; offset [1, 1] before the per-token scale [1, 2]; float bias
    // after everything.
    const In x1{DType::i8, {2, 2}, {1, 2, 3, 4}};
    const In x2{DType::i8, {2, 2}, {1, 0, 1, 1}};
    const In scale{DType::f32, {2}, {2, 0.5}};
    const In offset{DType::f32, {2}, {1, 1}};
    const In pt{DType::f32, {2}, {1, 2}};
    expect_values(evaluate("quant_matmul", {x1, x2, scale, absent, absent, {DType::i32, {2}, {1, -1}}}, out_dtype("float16"))[0],
                  {8, 0.5, 16, 1.5});
    expect_values(evaluate("quant_matmul", {x1, x2, scale, offset, pt, absent}, out_dtype("float16"))[0],
                  {7, 2, (14 + 1) * 2, (2 + 1) * 2});
    expect_values(evaluate("quant_matmul", {x1, x2, scale, offset, pt, {DType::bf16, {1, 2}, {0.5, -2}}}, out_dtype("bfloat16"))[0],
                  {7.5, 0, 30.5, 4});
    // Per-tensor scale and offset; the default output dtype is float16 (none).
    const Problem p = problem_for("quant_matmul", {x1, x2, {DType::bf16, {1}, {}}, absent, absent, absent}, {});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::f16);
    expect_values(evaluate("quant_matmul", {x1, x2, {DType::bf16, {1}, {0.25}}, {DType::f32, {1}, {-1}}, absent, absent}, {})[0],
                  {-0.25, -0.5, 0.75, 0});
}

TEST(OpsLevel3L3a, QuantMatmulGoldenRoundsToTheOutputDtype) {
    // acc 3 * scale 0.1 = 0.3 (fp64), rounded to fp16 (0.2998046875) or bf16 (0.30078125).
    const In x1{DType::i8, {1, 1}, {3}};
    const In x2{DType::i8, {1, 1}, {1}};
    const In scale{DType::f32, {1}, {round_to_dtype(0.1, DType::f32)}};
    const double exact = 3 * round_to_dtype(0.1, DType::f32);
    EXPECT_EQ(evaluate("quant_matmul", {x1, x2, scale, absent, absent, absent}, out_dtype("float16"))[0][0],
              round_to_dtype(exact, DType::f16));
    EXPECT_EQ(evaluate("quant_matmul", {x1, x2, scale, absent, absent, absent}, out_dtype("bfloat16"))[0][0],
              round_to_dtype(exact, DType::bf16));
}

// The golden against a naive loop with broadcast batch dims, every epilogue input, and a
// [batch, 1, n] bias.
TEST(OpsLevel3L3a, QuantMatmulGoldenMatchesANaiveLoopWithBatchBroadcasting) {
    const std::int64_t m = 3, k = 37, n = 5;
    struct Layout {
        Shape x1_batch, x2_batch, out_batch;
    };
    for (const Layout& layout : {Layout{{}, {}, {}}, Layout{{2, 1}, {4}, {2, 4}}, Layout{{3}, {}, {3}}, Layout{{}, {2}, {2}},
                                 Layout{{4}, {4}, {4}}}) {
        SCOPED_TRACE(shape_to_string(layout.out_batch));
        Shape s1 = layout.x1_batch, s2 = layout.x2_batch;
        s1.insert(s1.end(), {m, k});
        s2.insert(s2.end(), {k, n});
        const auto a = values(static_cast<std::size_t>(numel(s1)), -128, 127, DType::i8, 6);
        const auto b = values(static_cast<std::size_t>(numel(s2)), -128, 127, DType::i8, 7);
        const auto scale = values(static_cast<std::size_t>(n), 0.001, 0.01, DType::f32, 8);
        const auto offset = values(static_cast<std::size_t>(n), -1, 1, DType::f32, 9);
        const auto pt = values(static_cast<std::size_t>(m), 0.5, 2, DType::f32, 10);
        const std::int64_t batch = numel(layout.out_batch);
        const bool batched_bias = layout.out_batch.size() == 1;
        const Shape bias_shape = batched_bias ? Shape{batch, 1, n} : Shape{1, n};
        const auto bias = values(static_cast<std::size_t>(numel(bias_shape)), -1, 1, DType::f32, 11);
        const auto out = evaluate("quant_matmul",
                                  {{DType::i8, s1, a}, {DType::i8, s2, b}, {DType::f32, {n}, scale}, {DType::f32, {n}, offset},
                                   {DType::f32, {m}, pt}, {DType::f32, bias_shape, bias}},
                                  out_dtype("bfloat16"))[0];
        ASSERT_EQ(out.size(), static_cast<std::size_t>(batch * m * n));
        const std::int64_t b1 = numel(layout.x1_batch), b2 = numel(layout.x2_batch);
        for (std::int64_t bi = 0; bi < batch; ++bi) {
            // Output batch index -> x1 / x2 matrix (the layouts above broadcast at most one way per dim).
            std::int64_t i1 = 0, i2 = 0;
            if (layout.out_batch.size() == 2) {
                i1 = bi / layout.out_batch[1];
                i2 = bi % layout.out_batch[1];
            } else {
                i1 = b1 > 1 ? bi : 0;
                i2 = b2 > 1 ? bi : 0;
            }
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < n; ++j) {
                    double acc = 0;
                    for (std::int64_t t = 0; t < k; ++t)
                        acc += a[static_cast<std::size_t>((i1 * m + i) * k + t)] * b[static_cast<std::size_t>((i2 * k + t) * n + j)];
                    const double want = (acc * scale[static_cast<std::size_t>(j)] + offset[static_cast<std::size_t>(j)]) *
                                            pt[static_cast<std::size_t>(i)] +
                                        bias[static_cast<std::size_t>((batched_bias ? bi * n : 0) + j)];
                    EXPECT_EQ(out[static_cast<std::size_t>((bi * m + i) * n + j)], round_to_dtype(want, DType::bf16));
                }
        }
    }
}

TEST(OpsLevel3L3a, QuantMatmulSpecialScalesPropagateAndSamePrecisionIsFp32) {
    const In x1{DType::i8, {1, 2}, {1, 0}};
    const In x2{DType::i8, {2, 3}, {1, 0, 2, 5, 5, 5}};  // acc = [1, 0, 2]
    const In scale{DType::f32, {3}, {inf, inf, std::nan("")}};
    expect_values(evaluate("quant_matmul", {x1, x2, scale, absent, absent, absent}, out_dtype("float16"))[0],
                  {inf, std::nan(""), std::nan("")});  // 0 x inf is NaN
    // fp32 epilogue: 16777217 (2^24 + 1) is not an fp32 value, so acc * 1 rounds before the
    // offset; the fp64 golden keeps it. acc = 127 * 127 * 1040 + 137 (2^24 + 1 with the bias).
    const std::int64_t k = 1040;
    const In a{DType::i8, {1, k}, std::vector<double>(k, 127)};
    const In b{DType::i8, {k, 1}, std::vector<double>(k, 127)};
    const In bias{DType::i32, {1}, {16777217.0 - 127 * 127 * 1040}};
    const In one{DType::f32, {1}, {1}};
    const In offset{DType::f32, {1}, {-16777216}};
    EXPECT_EQ(evaluate("quant_matmul", {a, b, one, offset, absent, bias}, out_dtype("float16"))[0][0], 1);
    EXPECT_EQ(evaluate("quant_matmul", {a, b, one, offset, absent, bias}, out_dtype("float16"), true)[0][0], 0);
}

TEST(OpsLevel3L3a, QuantMatmulOutputsAndErrors) {
    const In x1{DType::i8, {2, 3, 4, 8}, {}};
    const In x2{DType::i8, {3, 8, 5}, {}};
    const In scale{DType::f32, {5}, {}};
    const Problem p = problem_for("quant_matmul", {x1, x2, scale, absent, absent, absent}, out_dtype("bfloat16"));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{2, 3, 4, 5}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::bf16);
    auto fails = [&](const std::vector<In>& inputs, AttrMap attrs = out_dtype("float16")) {
        EXPECT_THROW(problem_for("quant_matmul", inputs, std::move(attrs)), Error);
    };
    fails({{DType::f16, {4, 8}, {}}, {DType::i8, {8, 5}, {}}, scale, absent, absent, absent});   // x1 not int8
    fails({{DType::i8, {4, 8}, {}}, {DType::i8, {7, 5}, {}}, scale, absent, absent, absent});    // k mismatch
    fails({{DType::i8, {2, 4, 8}, {}}, {DType::i8, {3, 8, 5}, {}}, scale, absent, absent, absent});  // batch 2 vs 3
    fails({{DType::i8, {1, 1, 1, 1, 1, 4, 8}, {}}, {DType::i8, {8, 5}, {}}, scale, absent, absent, absent});  // 7 dims
    fails({{DType::i8, {4, 8}, {}}, {DType::i8, {8, 5}, {}}, {DType::f32, {4}, {}}, absent, absent, absent});  // scale [t]
    fails({{DType::i8, {4, 8}, {}}, {DType::i8, {8, 5}, {}}, {DType::f16, {5}, {}}, absent, absent, absent});  // scale dtype
    fails({{DType::i8, {4, 8}, {}}, {DType::i8, {8, 5}, {}}, scale, {DType::bf16, {5}, {}}, absent, absent});  // offset dtype
    fails({{DType::i8, {4, 8}, {}}, {DType::i8, {8, 5}, {}}, scale, absent, {DType::f32, {5}, {}}, absent});   // pertoken [m]
    fails({{DType::i8, {4, 8}, {}}, {DType::i8, {8, 5}, {}}, scale, absent, absent, {DType::f32, {2, 5}, {}}});  // bias
    fails({{DType::i8, {4, 8}, {}}, {DType::i8, {8, 5}, {}}, scale, absent, absent, {DType::i8, {5}, {}}});     // bias dtype
    fails({{DType::i8, {4, 8}, {}}, {DType::i8, {8, 5}, {}}, scale, absent, absent, absent}, out_dtype("float32"));
    EXPECT_NO_THROW(problem_for("quant_matmul",
                                {{DType::i8, {3, 4, 8}, {}}, {DType::i8, {8, 5}, {}}, scale, absent, absent, {DType::i32, {3, 1, 5}, {}}},
                                {}));
}

TEST(OpsLevel3L3a, QuantMatmulWorkModelFoldsASharedWeight) {
    const In scale{DType::f32, {64}, {}};
    const WorkModel shared = op_named("quant_matmul").work(problem_for(
        "quant_matmul", {{DType::i8, {4, 8, 128}, {}}, {DType::i8, {128, 64}, {}}, scale, absent, {DType::f32, {8}, {}}, absent},
        out_dtype("float16")));
    ASSERT_EQ(shared.contractions.size(), 1u);
    EXPECT_EQ(shared.contractions[0].dtype, DType::i8);
    EXPECT_EQ(shared.contractions[0].batch, 1);
    EXPECT_EQ(shared.contractions[0].m, 32);
    EXPECT_EQ(shared.bytes_read, 4 * 8 * 128 + 128 * 64 + 64 * 4 + 8 * 4);
    EXPECT_EQ(shared.bytes_written, 32 * 64 * 2);
    EXPECT_EQ(vector_elements(shared, OpClass::mul), 2 * 32 * 64);  // scale and per-token scale
    const WorkModel batched = op_named("quant_matmul").work(problem_for(
        "quant_matmul", {{DType::i8, {4, 8, 128}, {}}, {DType::i8, {4, 128, 64}, {}}, scale, absent, absent, absent}, {}));
    EXPECT_EQ(batched.contractions[0].batch, 4);
    EXPECT_EQ(batched.contractions[0].m, 8);
    EXPECT_TRUE(batched.contractions[0].vector_ok);
}

// ---------------------------------------------------------------------- weight_quant_batch_matmul

TEST(OpsLevel3L3a, WeightQuantBatchMatmulByHand) {
    // W' = (w + offset) * scale per column: w [[1, -2], [3, 4]], offset [1, 0], scale [0.5, 2]
    // -> [[1, -4], [2, 8]]; x [[1, 1], [2, 0]]; bias [0.25, 0].
    const In x{DType::f16, {2, 2}, {1, 1, 2, 0}};
    const In w{DType::i8, {2, 2}, {1, -2, 3, 4}};
    const In scale{DType::f16, {2}, {0.5, 2}};
    const In offset{DType::f16, {1, 2}, {1, 0}};
    const In bias{DType::f16, {2}, {0.25, 0}};
    expect_values(evaluate("weight_quant_batch_matmul", {x, w, scale, offset, bias})[0], {3.25, 4, 2.25, -8});
    expect_values(evaluate("weight_quant_batch_matmul", {x, w, scale, absent, absent})[0], {0.5 + 1.5, -4 + 8, 1, -8});
}

TEST(OpsLevel3L3a, WeightQuantBatchMatmulGoldenMatchesANaiveLoop) {
    const std::int64_t m = 4, k = 300, n = 7;
    const auto x = values(static_cast<std::size_t>(m * k), -1, 1, DType::bf16, 12);
    const auto w = values(static_cast<std::size_t>(k * n), -128, 127, DType::i8, 13);
    const auto scale = values(static_cast<std::size_t>(n), 0.001, 0.1, DType::bf16, 14);
    const auto offset = values(static_cast<std::size_t>(n), -0.1, 0.1, DType::bf16, 15);
    const auto bias = values(static_cast<std::size_t>(n), -0.1, 0.1, DType::f32, 16);
    const auto y = evaluate("weight_quant_batch_matmul", {{DType::bf16, {m, k}, x}, {DType::i8, {k, n}, w},
                                                          {DType::bf16, {n}, scale}, {DType::bf16, {n}, offset},
                                                          {DType::f32, {n}, bias}})[0];
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            long double want = bias[static_cast<std::size_t>(j)];
            for (std::int64_t t = 0; t < k; ++t)
                want += static_cast<long double>(x[static_cast<std::size_t>(i * k + t)]) *
                        ((w[static_cast<std::size_t>(t * n + j)] + offset[static_cast<std::size_t>(j)]) * scale[static_cast<std::size_t>(j)]);
            EXPECT_NEAR(y[static_cast<std::size_t>(i * n + j)], static_cast<double>(want), 1e-12);
        }
}

TEST(OpsLevel3L3a, WeightQuantBatchMatmulSamePrecisionRoundsTheDequantizedWeight) {
    // fp16: 1 + 0.1 (0.0999755859375 in fp16) rounds to 1.099609375; times scale 1.
    const In x{DType::f16, {1, 1}, {1}};
    const In w{DType::i8, {1, 1}, {1}};
    const In scale{DType::f16, {1}, {1}};
    const double offset = round_to_dtype(0.1, DType::f16);
    const In off{DType::f16, {1}, {offset}};
    EXPECT_EQ(evaluate("weight_quant_batch_matmul", {x, w, scale, off, absent})[0][0], 1 + offset);
    EXPECT_EQ(evaluate("weight_quant_batch_matmul", {x, w, scale, off, absent}, {}, true)[0][0], 1.099609375);
    // Special values: an infinite x against a zero column gives NaN.
    const In xs{DType::f16, {1, 2}, {inf, 1}};
    const In ws{DType::i8, {2, 2}, {0, 1, 1, 1}};
    expect_values(evaluate("weight_quant_batch_matmul", {xs, ws, {DType::f16, {2}, {1, 1}}, absent, absent})[0],
                  {std::nan(""), inf});
}

TEST(OpsLevel3L3a, WeightQuantBatchMatmulOutputsErrorsAndWork) {
    const In x{DType::bf16, {20, 64}, {}};
    const In w{DType::i8, {64, 48}, {}};
    const In scale{DType::bf16, {48}, {}};
    const Problem p = problem_for("weight_quant_batch_matmul", {x, w, scale, absent, {DType::f32, {1, 48}, {}}}, {});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{20, 48}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::bf16);
    const WorkModel work = op_named("weight_quant_batch_matmul").work(p);
    EXPECT_EQ(work.bytes_read, 20 * 64 * 2 + 64 * 48 + 48 * 2 + 48 * 4);
    EXPECT_EQ(work.cube_vector_bytes, 64 * 48 * 2);  // 20 rows: the cube path, fed through the vector stage
    EXPECT_EQ(vector_elements(work, OpClass::mul), 64 * 48);
    const WorkModel decode = op_named("weight_quant_batch_matmul").work(
        problem_for("weight_quant_batch_matmul", {{DType::bf16, {2, 64}, {}}, w, scale, absent, absent}, {}));
    EXPECT_TRUE(decode.contractions.at(0).vector_ok);
    EXPECT_EQ(decode.cube_vector_bytes, 0);
    auto fails = [](const std::vector<In>& inputs) { EXPECT_THROW(problem_for("weight_quant_batch_matmul", inputs, {}), Error); };
    fails({{DType::f32, {20, 64}, {}}, w, {DType::f32, {48}, {}}, absent, absent});  // x fp16/bf16 only
    fails({x, {DType::i8, {63, 48}, {}}, scale, absent, absent});                     // K mismatch
    fails({x, w, {DType::f16, {48}, {}}, absent, absent});                            // scale in x's dtype
    fails({x, w, {DType::bf16, {47}, {}}, absent, absent});                           // scale [N]
    fails({x, w, scale, {DType::bf16, {2, 48}, {}}, absent});                         // offset [N] or [1, N]
    fails({x, w, scale, absent, {DType::bf16, {48}, {}}});                            // bias fp32 with bf16 x
    fails({{DType::f16, {20, 64}, {}}, w, {DType::f16, {48}, {}}, absent, {DType::f32, {48}, {}}});  // fp16 bias with fp16 x
}

// ------------------------------------------------------------------------------ case sampling

// Every case resolves, stays within the MAC cap and the list meets the rules.
void check_sampled(const std::string& op, const std::vector<CaseSpec>& cases) {
    for (const auto& c : cases) {
        const Problem p = resolve_problem(suite_proto(op), op_named(op), c);
        double macs = 0;
        for (const auto& k : op_named(op).work(p).contractions)
            macs += k.batch * static_cast<double>(k.m) * static_cast<double>(k.n) * static_cast<double>(k.k);
        EXPECT_LE(macs, cpu_case_mac_cap) << op << " case " << c.case_id;
    }
    const auto problems = check_case_rules(cases, suite_proto(op), op_named(op), profile_by_name("cpu"));
    EXPECT_TRUE(problems.empty()) << problems.front();
}

// Cases drawn by the generator with the operator's own proto, checked as above.
std::vector<CaseSpec> generated_cases(const std::string& op, int count, std::uint64_t seed) {
    const auto cases = generate_cases(op_named(op), suite_proto(op), profile_by_name("cpu"), seed, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    check_sampled(op, cases);
    return cases;
}

// The 20 public cases (suite/level3/<op>/cases.cpu.yaml), which must cover every attribute
// value and dtype; checked as above.
std::vector<CaseSpec> shipped_cases(const std::string& op) {
    const TaskDir dir = load_task_dir(std::string(HB_SOURCE_DIR) + "/suite", "cpu", {op});
    const auto& cases = dir.tasks.at(0).cases;
    EXPECT_EQ(cases.size(), 20u);
    check_sampled(op, cases);
    // Drawn again from the same seed, the generator reproduces them: the shipped file is its output.
    const auto again = generate_cases(op_named(op), dir.tasks.at(0).proto, profile_by_name("cpu"), 2026, 20);
    for (std::size_t i = 0; i < std::min(again.size(), cases.size()); ++i)
        EXPECT_EQ(again[i].total_input_elements(), cases[i].total_input_elements()) << op << " case " << cases[i].case_id;
    return cases;
}

TEST(OpsLevel3L3a, GeneratedSplitsStayInsideTheCapAndTheRules) {
    for (const char* op : {"grouped_matmul", "quant_matmul", "weight_quant_batch_matmul"}) {
        SCOPED_TRACE(op);
        generated_cases(op, 20, 20260101);
        generated_cases(op, 80, 987654321);
    }
}

TEST(OpsLevel3L3a, GroupedMatmulSamplerCoversEveryAttributeAndDtype) {
    std::set<std::int64_t> splits;
    std::set<bool> transposes;
    std::set<std::string> biases;
    bool empty_group = false;
    std::set<DType> dtypes;
    for (const auto& c : shipped_cases("grouped_matmul")) {
        splits.insert(c.attrs.at("split_item").i);
        transposes.insert(c.attrs.at("transpose_weight").b);
        const auto& bias = c.inputs.at(2);
        biases.insert(bias.present ? std::string(dtype_name(c.inputs[0].dtype)) + "+" + std::string(dtype_name(bias.dtype)) : "none");
        const auto& ends = c.attrs.at("group_list").ints;
        for (std::size_t g = 0; g < ends.size(); ++g) empty_group |= ends[g] == (g ? ends[g - 1] : 0);
        dtypes.insert(c.inputs[0].dtype);
    }
    EXPECT_EQ(splits, (std::set<std::int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(transposes, (std::set<bool>{false, true}));
    EXPECT_TRUE(biases.count("none") && biases.count("bfloat16+float32") && biases.count("bfloat16+bfloat16") &&
                biases.count("float16+float16") && biases.count("float32+float32"));
    EXPECT_TRUE(empty_group);
    EXPECT_EQ(dtypes, (std::set<DType>{DType::f16, DType::bf16, DType::f32}));
}

TEST(OpsLevel3L3a, QuantMatmulSamplerCoversEveryAttributeAndEpilogue) {
    std::set<std::string> outputs;
    std::set<DType> scale_dtypes, bias_dtypes;
    std::set<std::size_t> ranks, bias_ranks;
    bool per_tensor = false, per_channel = false, offset = false, pertoken = false, broadcast = false;
    for (const auto& c : shipped_cases("quant_matmul")) {
        outputs.insert(c.attrs.at("output_dtype").s);
        scale_dtypes.insert(c.inputs[2].dtype);
        per_tensor |= c.inputs[2].shapes[0] == Shape{1};
        per_channel |= c.inputs[2].shapes[0] != Shape{1};
        offset |= c.inputs[3].present;
        pertoken |= c.inputs[4].present;
        if (c.inputs[5].present) {
            bias_dtypes.insert(c.inputs[5].dtype);
            bias_ranks.insert(c.inputs[5].shapes[0].size());
        }
        ranks.insert(c.inputs[0].shapes[0].size());
        broadcast |= c.inputs[0].shapes[0].size() != c.inputs[1].shapes[0].size();
    }
    EXPECT_EQ(outputs, (std::set<std::string>{"float16", "bfloat16"}));
    EXPECT_EQ(scale_dtypes, (std::set<DType>{DType::f32, DType::bf16}));
    EXPECT_EQ(bias_dtypes, (std::set<DType>{DType::i32, DType::f16, DType::bf16, DType::f32}));
    EXPECT_EQ(bias_ranks, (std::set<std::size_t>{1, 2, 3}));
    EXPECT_TRUE(per_tensor && per_channel && offset && pertoken && broadcast);
    EXPECT_TRUE(ranks.count(2) && ranks.count(3) && ranks.count(4));
}

TEST(OpsLevel3L3a, WeightQuantBatchMatmulSamplerCoversOptionalInputsAndDtypes) {
    bool offset = false, no_offset = false, bias = false, no_bias = false, row_shape = false;
    std::set<DType> dtypes;
    for (const auto& c : shipped_cases("weight_quant_batch_matmul")) {
        dtypes.insert(c.inputs[0].dtype);
        (c.inputs[3].present ? offset : no_offset) = true;
        (c.inputs[4].present ? bias : no_bias) = true;
        row_shape |= c.inputs[2].shapes[0].size() == 2;
        EXPECT_LE(c.inputs[0].shapes[0][0], 128);  // decode-like rows
    }
    EXPECT_TRUE(offset && no_offset && bias && no_bias && row_shape);
    EXPECT_EQ(dtypes, (std::set<DType>{DType::f16, DType::bf16}));
}

// The generated ranges keep typical results within typical_result_cap, where the gate's
// verdict does not depend on a kernel's accumulation order (special values aside: their
// finite part is [-1, 1]).
TEST(OpsLevel3L3a, TypicalResultsStayWithinTheCap) {
    auto finite = [](const std::optional<ValueRange>& r) {
        const ValueRange v = r.value_or(ValueRange{0, 1});
        return std::isfinite(v.lo) && std::isfinite(v.hi) ? v : ValueRange{-1, 1};
    };
    for (const auto& c : generated_cases("grouped_matmul", 80, 5150)) {
        const std::int64_t k = c.inputs[0].shapes[0][1];
        const double typical = typical_dot(uniform_moments(finite(c.inputs[0].range)), uniform_moments(finite(c.inputs[1].range)), k);
        EXPECT_LE(typical, 1.01 * typical_result_cap(c.inputs[0].dtype, k)) << "grouped_matmul case " << c.case_id;
    }
    for (const auto& c : generated_cases("weight_quant_batch_matmul", 80, 5150)) {
        const std::int64_t k = c.inputs[0].shapes[0][1];
        const ValueMoments scale = uniform_moments(*c.inputs[2].range);
        const double typical = typical_dot(uniform_moments(finite(c.inputs[0].range)), {-0.5 * scale.mean, 74 * scale.rms}, k);
        EXPECT_LE(typical, 1.01 * typical_result_cap(c.inputs[0].dtype, k)) << "weight_quant_batch_matmul case " << c.case_id;
    }
}

// int8 matmuls cannot hold an aligned case in the small regime: the generator plans their
// aligned cases elsewhere, and the 80-case hidden split still meets every rule.
TEST(OpsLevel3L3a, QuantMatmulAlignedCasesLeaveTheSmallRegime) {
    EXPECT_GT(op_named("quant_matmul").min_aligned_elements(DType::i8), profile_by_name("cpu").small_below);
    const auto cases = generated_cases("quant_matmul", 80, 4242);
    for (const auto& c : cases) {
        bool aligned = true;
        for (const auto& in : c.inputs)
            if (in.present)
                for (const auto& s : in.shapes) aligned = aligned && is_aligned(s, in.dtype);
        if (aligned) {
            EXPECT_GE(c.total_input_elements(), profile_by_name("cpu").small_below) << c.case_id;
        }
    }
}

}  // namespace
}  // namespace hb
