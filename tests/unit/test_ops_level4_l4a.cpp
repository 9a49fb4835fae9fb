// Level-4 attention operators (gqa, mha, mla, mla_prolog, sparse_flash_attention): goldens
// against values worked out here and against naive loops on every attribute path (default and
// explicit scales, bottom-right causal masks with S < Skv and S > Skv, GQA head mapping from
// MHA to MQA, MLA's two parts and both layouts, sparse sets with duplicates and causal drops),
// masks and tie-free softmax, special values, shape inference and its errors, work models,
// input hooks (sparse lists and value = key prefix, paired RoPE tables) and case sampling.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"
#include "suite/case_rules.hpp"
#include "suite/inputs.hpp"
#include "suite/split.hpp"
#include "suite/task_dir.hpp"

namespace hb {
namespace {

const double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();

Proto proto_for(const std::string& op) {
    return load_proto(std::string(HB_SOURCE_DIR) + "/suite/level4/" + op + "/proto.yaml", op, 4);
}

const Operator& op_named(const std::string& name) {
    const Operator* op = find_operator(name);
    if (!op) throw Error("operator " + name + " is not registered");
    return *op;
}

struct In {
    Shape shape;
    std::vector<double> values;
    DType dtype = DType::f16;
};

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
        ci.shapes = {in.shape};
        ci.dtype = in.dtype;
        c.inputs.push_back(ci);
    }
    return resolve_problem(it->second, op_named(op), c);
}

std::vector<std::vector<double>> evaluate(const std::string& op, const std::vector<In>& inputs, AttrMap attrs = {},
                                          bool same_precision = false) {
    const Problem p = problem_for(op, inputs, std::move(attrs));
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = p.inputs[k].name;
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
        else EXPECT_NEAR(got[i], expected[i], rel * std::fabs(expected[i]) + 1e-14) << "element " << i;
    }
}

std::vector<double> random_values(std::int64_t n, std::uint64_t seed, double lo = -1, double hi = 1) {
    Rng rng(seed);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = rng.uniform(lo, hi);
    return v;
}

AttrMap attention_attrs(double scale, bool causal) {
    return {{"scaleValue", AttrValue::of_float(scale)}, {"is_causal", AttrValue::of_bool(causal)}};
}

// The family's definition in naive loops, BSND: query [B, S, Nq, Dqk] (parts side by side as
// one tensor), key [B, Skv, Nkv, Dqk], value [B, Skv, Nkv, Dv].
std::vector<double> naive_attention(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                                    std::int64_t b_n, std::int64_t s, std::int64_t skv, std::int64_t nq, std::int64_t nkv,
                                    std::int64_t dqk, std::int64_t dv, double scale, bool causal) {
    std::vector<double> y(static_cast<std::size_t>(b_n * s * nq * dv), 0.0);
    for (std::int64_t b = 0; b < b_n; ++b)
        for (std::int64_t i = 0; i < s; ++i)
            for (std::int64_t h = 0; h < nq; ++h) {
                const std::int64_t kvh = h / (nq / nkv);
                std::vector<std::int64_t> keys;
                for (std::int64_t j = 0; j < skv; ++j)
                    if (!causal || j <= i + skv - s) keys.push_back(j);
                std::vector<double> sc;
                double max = -inf;
                for (auto j : keys) {
                    double dot = 0;
                    for (std::int64_t d = 0; d < dqk; ++d)
                        dot += q[static_cast<std::size_t>(((b * s + i) * nq + h) * dqk + d)] *
                               k[static_cast<std::size_t>(((b * skv + j) * nkv + kvh) * dqk + d)];
                    sc.push_back(dot * scale);
                    max = std::max(max, sc.back());
                }
                if (keys.empty() || max == -inf) continue;
                double sum = 0;
                for (auto& x : sc) sum += (x = std::exp(x - max));
                for (std::size_t t = 0; t < keys.size(); ++t)
                    for (std::int64_t d = 0; d < dv; ++d)
                        y[static_cast<std::size_t>(((b * s + i) * nq + h) * dv + d)] +=
                            sc[t] / sum * v[static_cast<std::size_t>(((b * skv + keys[t]) * nkv + kvh) * dv + d)];
            }
    return y;
}

// [B, S, N, D] <-> [B, N, S, D].
std::vector<double> swap_seq_heads(const std::vector<double>& x, std::int64_t b_n, std::int64_t s, std::int64_t n,
                                   std::int64_t d) {
    std::vector<double> out(x.size());
    for (std::int64_t b = 0; b < b_n; ++b)
        for (std::int64_t i = 0; i < s; ++i)
            for (std::int64_t h = 0; h < n; ++h)
                for (std::int64_t e = 0; e < d; ++e)
                    out[static_cast<std::size_t>(((b * n + h) * s + i) * d + e)] =
                        x[static_cast<std::size_t>(((b * s + i) * n + h) * d + e)];
    return out;
}

double contraction_macs(const WorkModel& w) {
    double macs = 0;
    for (const auto& c : w.contractions)
        macs += c.batch * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
    return macs;
}

double vector_elements(const WorkModel& w, OpClass c) {
    double n = 0;
    for (const auto& v : w.vector)
        if (v.op_class == c) n += v.elements;
    return n;
}

// ---- mha ------------------------------------------------------------------------------------

TEST(OpsLevel4L4a, MhaByHandWithTheDefaultAndExplicitScales) {
    // One query [1, 0] against keys [1, 0] and [0, 1]: scores [scale, 0].
    const std::vector<In> in = {{{1, 1, 1, 2}, {1, 0}}, {{1, 2, 1, 2}, {1, 0, 0, 1}}, {{1, 2, 1, 2}, {1, 2, 3, 4}}};
    auto expected = [](double scale) {
        const double w0 = std::exp(scale) / (std::exp(scale) + 1);
        return std::vector<double>{w0 * 1 + (1 - w0) * 3, w0 * 2 + (1 - w0) * 4};
    };
    // Any scaleValue <= 0 selects 1/sqrt(D) = 1/sqrt(2).
    for (double given : {-1.0, 0.0, -5.0})
        expect_values(evaluate("mha", in, attention_attrs(given, false))[0], expected(1 / std::sqrt(2.0)));
    expect_values(evaluate("mha", in, attention_attrs(0.5, false))[0], expected(0.5));
    expect_values(evaluate("mha", in)[0], expected(1 / std::sqrt(2.0)));  // the proto's defaults
}

TEST(OpsLevel4L4a, MhaCausalMaskIsBottomRightAligned) {
    // S = 2 queries, Skv = 3 keys [0, 1, 2], values [10, 20, 30], D = 1, scale 1: query 0 sees
    // keys 0 and 1 (j <= 0 + 3 - 2), query 1 sees all three.
    const std::vector<In> in = {{{1, 2, 1, 1}, {1, 1}}, {{1, 3, 1, 1}, {0, 1, 2}}, {{1, 3, 1, 1}, {10, 20, 30}}};
    const double e = std::exp(1.0), e2 = std::exp(2.0);
    const double full = (10 + 20 * e + 30 * e2) / (1 + e + e2);
    expect_values(evaluate("mha", in, attention_attrs(1, true))[0], {(10 + 20 * e) / (1 + e), full});
    expect_values(evaluate("mha", in, attention_attrs(1, false))[0], {full, full});
}

TEST(OpsLevel4L4a, MhaQueriesThatSeeNoKeyAreZeroAndMaskedKeysTakeNoPart) {
    // S = 3 > Skv = 2, causal: query 0 sees nothing (0), query 1 key 0 only, query 2 both. Key 1
    // holds NaN and its value +inf: query 1 never touches them, query 2 gets NaN.
    const std::vector<In> in = {{{1, 3, 1, 1}, {1, 1, 1}}, {{1, 2, 1, 1}, {0.5, nan}}, {{1, 2, 1, 1}, {7, inf}}};
    expect_values(evaluate("mha", in, attention_attrs(1, true))[0], {0, 7, nan});
    // Finite values behind the mask: query 2 averages both keys.
    const std::vector<In> finite = {{{1, 3, 1, 1}, {1, 1, 1}}, {{1, 2, 1, 1}, {0, 0}}, {{1, 2, 1, 1}, {7, 9}}};
    expect_values(evaluate("mha", finite, attention_attrs(1, true))[0], {0, 7, 8});
}

TEST(OpsLevel4L4a, MhaSoftmaxIsTieFreeAndSubtractsTheRowMaximum) {
    // Scores 1000, 999, -1000 (scale 1): a softmax without the max shift would overflow; the
    // weights are e^0, e^-1, e^-2000 over their sum, exactly as written.
    const std::vector<In> in = {{{1, 1, 1, 1}, {1}}, {{1, 3, 1, 1}, {1000, 999, -1000}}, {{1, 3, 1, 1}, {1, 2, 3}}};
    const double w1 = std::exp(-1.0);
    expect_values(evaluate("mha", in, attention_attrs(1, false))[0], {(1 + 2 * w1) / (1 + w1)});
    // +inf among the scores makes the row NaN (inf - inf); a NaN score too; all -inf gives 0.
    expect_values(evaluate("mha", {{{1, 1, 1, 1}, {1}}, {{1, 2, 1, 1}, {inf, 0}}, {{1, 2, 1, 1}, {1, 2}}})[0], {nan});
    expect_values(evaluate("mha", {{{1, 1, 1, 1}, {nan}}, {{1, 2, 1, 1}, {1, 0}}, {{1, 2, 1, 1}, {1, 2}}})[0], {nan});
    expect_values(evaluate("mha", {{{1, 1, 1, 1}, {1}}, {{1, 2, 1, 1}, {-inf, -inf}}, {{1, 2, 1, 1}, {1, 2}}})[0], {0});
    // One -inf key: weight 0, its finite value adds nothing.
    expect_values(evaluate("mha", {{{1, 1, 1, 1}, {1}}, {{1, 2, 1, 1}, {-inf, 0}}, {{1, 2, 1, 1}, {5, 2}}})[0], {2});
}

TEST(OpsLevel4L4a, MhaMatchesTheDefinitionOnRandomShapes) {
    struct Shape5 {
        std::int64_t b, s, skv, n, d;
    };
    for (const Shape5 c : {Shape5{2, 3, 5, 2, 4}, Shape5{1, 7, 3, 3, 5}, Shape5{3, 1, 9, 1, 8}, Shape5{1, 4, 4, 2, 3}})
        for (bool causal : {false, true}) {
            SCOPED_TRACE(std::to_string(c.s) + " x " + std::to_string(c.skv) + (causal ? " causal" : ""));
            const auto q = random_values(c.b * c.s * c.n * c.d, 1), k = random_values(c.b * c.skv * c.n * c.d, 2),
                       v = random_values(c.b * c.skv * c.n * c.d, 3);
            const auto got = evaluate("mha", {{{c.b, c.s, c.n, c.d}, q}, {{c.b, c.skv, c.n, c.d}, k}, {{c.b, c.skv, c.n, c.d}, v}},
                                      attention_attrs(-1, causal))[0];
            expect_values(got, naive_attention(q, k, v, c.b, c.s, c.skv, c.n, c.n, c.d, c.d, 1 / std::sqrt(double(c.d)), causal),
                          1e-10);
        }
}

TEST(OpsLevel4L4a, MhaSamePrecisionIsFp32) {
    const auto q = random_values(2 * 5 * 2 * 16, 4), k = random_values(2 * 9 * 2 * 16, 5), v = random_values(2 * 9 * 2 * 16, 6);
    const std::vector<In> in = {{{2, 5, 2, 16}, q}, {{2, 9, 2, 16}, k}, {{2, 9, 2, 16}, v}};
    const auto golden = evaluate("mha", in, attention_attrs(-1, true))[0];
    const auto same = evaluate("mha", in, attention_attrs(-1, true), true)[0];
    double worst = 0;
    for (std::size_t i = 0; i < golden.size(); ++i) worst = std::max(worst, std::fabs(same[i] - golden[i]));
    EXPECT_GT(worst, 0);     // rounded to float16 and computed in fp32: not the golden
    EXPECT_LT(worst, 2e-3);  // but close to it
}

TEST(OpsLevel4L4a, MhaShapeErrors) {
    const In q{{2, 3, 4, 8}, {}}, kv{{2, 5, 4, 8}, {}};
    EXPECT_NO_THROW(problem_for("mha", {q, kv, kv}));
    EXPECT_THROW(problem_for("mha", {q, {{2, 5, 2, 8}, {}}, {{2, 5, 2, 8}, {}}}), Error);  // fewer KV heads: gqa
    EXPECT_THROW(problem_for("mha", {q, {{2, 5, 4, 6}, {}}, {{2, 5, 4, 6}, {}}}), Error);  // D differs
    EXPECT_THROW(problem_for("mha", {q, kv, {{2, 6, 4, 8}, {}}}), Error);                 // key != value
    EXPECT_THROW(problem_for("mha", {q, kv, {{2, 5, 4, 8}, {}, DType::bf16}}), Error);    // mixed dtypes
    EXPECT_THROW(problem_for("mha", {{{2, 3, 4, 8}, {}, DType::f32}, {{2, 5, 4, 8}, {}, DType::f32},
                                     {{2, 5, 4, 8}, {}, DType::f32}}),
                 Error);                                                                   // not a half type
    EXPECT_THROW(problem_for("mha", {{{2, 3, 32}, {}}, kv, kv}), Error);                   // rank 3
    EXPECT_THROW(problem_for("mha", {q, kv, kv}, attention_attrs(inf, false)), Error);     // infinite scale
    try {
        problem_for("mha", {q, {{2, 5, 2, 8}, {}}, {{2, 5, 2, 8}, {}}});
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("gqa"), std::string::npos) << e.what();
    }
    const Problem p = problem_for("mha", {q, kv, kv});
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{2, 3, 4, 8}));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).dtype, DType::f16);
}

TEST(OpsLevel4L4a, MhaWorkModelCountsOnlyTheAllowedPairs) {
    // B 2, S 4, Skv 6, N 3, D 8, causal: query i sees i + 3 keys: 3 + 4 + 5 + 6 = 18 pairs a head.
    const In q{{2, 4, 3, 8}, {}, DType::bf16}, kv{{2, 6, 3, 8}, {}, DType::bf16};
    const Problem p = problem_for("mha", {q, kv, kv}, attention_attrs(-1, true));
    const WorkModel w = op_named("mha").work(p);
    const double pairs = 2 * 3 * 18.0;
    // Each row is given floor(18 / 4) = 4 keys: never more MACs than the allowed pairs.
    EXPECT_EQ(contraction_macs(w), 2 * 3 * 4 * 4 * (8 + 8.0));
    EXPECT_LE(contraction_macs(w), pairs * 16);
    EXPECT_EQ(vector_elements(w, OpClass::exp), pairs);
    EXPECT_EQ(vector_elements(w, OpClass::cmp), pairs);
    EXPECT_EQ(w.bytes_read, (2 * 4 * 3 * 8 + 2 * 2 * 6 * 3 * 8) * 2.0);
    EXPECT_EQ(w.bytes_written, 2 * 4 * 3 * 8 * 2.0);
    EXPECT_EQ(w.cube_vector_bytes, 0);  // the scores' crossing is the QK contraction's result
    // Without the mask every pair counts.
    const WorkModel full = op_named("mha").work(problem_for("mha", {q, kv, kv}));
    EXPECT_EQ(contraction_macs(full), 2 * 3 * 4 * 6 * 16.0);
}

// ---- gqa ------------------------------------------------------------------------------------

TEST(OpsLevel4L4a, GqaConsecutiveQueryHeadsShareAKvHead) {
    // Nq = 4, Nkv = 2, D = 1, one query: heads 0 and 1 read KV head 0, heads 2 and 3 KV head 1.
    // Each KV head's two keys and values differ, so a wrong mapping changes y.
    const std::vector<In> in = {{{1, 1, 4, 1}, {1, 2, 1, 2}},
                                {{1, 2, 2, 1}, {0, 5, 1, -5}},         // key[j][kvh]
                                {{1, 2, 2, 1}, {10, 100, 20, 200}}};  // value[j][kvh]
    auto mix = [](double s0, double s1, double v0, double v1) {
        const double m = std::max(s0, s1), e0 = std::exp(s0 - m), e1 = std::exp(s1 - m);
        return (e0 * v0 + e1 * v1) / (e0 + e1);
    };
    // KV head 0: keys 0, 1, values 10, 20; KV head 1: keys 5, -5, values 100, 200; scale 1.
    expect_values(evaluate("gqa", in, attention_attrs(1, false))[0],
                  {mix(0, 1, 10, 20), mix(0, 2, 10, 20), mix(5, -5, 100, 200), mix(10, -10, 100, 200)});
}

TEST(OpsLevel4L4a, GqaMatchesTheDefinitionFromMhaToMqa) {
    for (std::int64_t nkv : {6, 3, 2, 1})  // G = 1 (MHA), 2, 3, 6 (MQA)
        for (bool causal : {false, true}) {
            SCOPED_TRACE("Nkv " + std::to_string(nkv) + (causal ? " causal" : ""));
            const std::int64_t b = 2, s = 3, skv = 4, nq = 6, d = 5;
            const auto q = random_values(b * s * nq * d, 7), k = random_values(b * skv * nkv * d, 8),
                       v = random_values(b * skv * nkv * d, 9);
            const auto got = evaluate("gqa", {{{b, s, nq, d}, q}, {{b, skv, nkv, d}, k}, {{b, skv, nkv, d}, v}},
                                      attention_attrs(0.3, causal))[0];
            expect_values(got, naive_attention(q, k, v, b, s, skv, nq, nkv, d, d, 0.3, causal), 1e-10);
        }
}

TEST(OpsLevel4L4a, GqaShapeErrors) {
    const In q{{1, 2, 6, 4}, {}}, kv{{1, 3, 2, 4}, {}};
    EXPECT_NO_THROW(problem_for("gqa", {q, kv, kv}));
    try {
        problem_for("gqa", {q, {{1, 3, 4, 4}, {}}, {{1, 3, 4, 4}, {}}});
        ADD_FAILURE() << "4 KV heads cannot serve 6 query heads";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("divide"), std::string::npos) << e.what();
    }
    EXPECT_THROW(problem_for("gqa", {q, {{2, 3, 2, 4}, {}}, {{2, 3, 2, 4}, {}}}), Error);  // B differs
    EXPECT_THROW(problem_for("gqa", {q, {{1, 3, 2, 5}, {}}, {{1, 3, 2, 5}, {}}}), Error);  // D differs
    EXPECT_THROW(problem_for("gqa", {q, kv, {{1, 3, 3, 4}, {}}}), Error);                 // value's heads
    EXPECT_THROW(problem_for("gqa", {q, {{1, 0, 2, 4}, {}}, {{1, 0, 2, 4}, {}}}), Error);  // no keys
}

// ---- mla ------------------------------------------------------------------------------------

AttrMap mla_attrs(std::int64_t kv_heads, double scale, const std::string& layout, bool causal) {
    return {{"numKVHeads", AttrValue::of_int(kv_heads)},
            {"scaleValue", AttrValue::of_float(scale)},
            {"inputLayout", AttrValue::of_string(layout)},
            {"is_causal", AttrValue::of_bool(causal)}};
}

// q = [q_nope | q_rope] per row of `dn` and `dr` values.
std::vector<double> concat_last(const std::vector<double>& a, std::int64_t da, const std::vector<double>& b,
                                std::int64_t db) {
    std::vector<double> out;
    for (std::size_t r = 0; r < a.size() / static_cast<std::size_t>(da); ++r) {
        out.insert(out.end(), a.begin() + static_cast<std::ptrdiff_t>(r) * da, a.begin() + static_cast<std::ptrdiff_t>(r + 1) * da);
        out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(r) * db, b.begin() + static_cast<std::ptrdiff_t>(r + 1) * db);
    }
    return out;
}

TEST(OpsLevel4L4a, MlaConcatenatesItsPartsScalesByTheirWidthAndUsesVAsGiven) {
    const std::int64_t b = 2, s = 3, skv = 5, nq = 4, dn = 6, dr = 2;
    for (std::int64_t nkv : {1, 2})
        for (bool causal : {false, true}) {
            SCOPED_TRACE("Nkv " + std::to_string(nkv) + (causal ? " causal" : ""));
            const auto qn = random_values(b * s * nq * dn, 11), qr = random_values(b * s * nq * dr, 12);
            const auto kn = random_values(b * skv * nkv * dn, 13), kr = random_values(b * skv * nkv * dr, 14);
            const auto v = random_values(b * skv * nkv * dn, 15);  // independent of k_nope
            const auto got = evaluate("mla",
                                      {{{b, s, nq, dn}, qn}, {{b, s, nq, dr}, qr}, {{b, skv, nkv, dn}, kn},
                                       {{b, skv, nkv, dr}, kr}, {{b, skv, nkv, dn}, v}},
                                      mla_attrs(nkv, -1, "BSND", causal))[0];
            expect_values(got,
                          naive_attention(concat_last(qn, dn, qr, dr), concat_last(kn, dn, kr, dr), v, b, s, skv, nq, nkv,
                                          dn + dr, dn, 1 / std::sqrt(double(dn + dr)), causal),
                          1e-10);
        }
}

TEST(OpsLevel4L4a, MlaBnsdIsBsndWithSequenceAndHeadsSwapped) {
    const std::int64_t b = 2, s = 2, skv = 3, nq = 2, nkv = 1, dn = 4, dr = 2;
    const auto qn = random_values(b * s * nq * dn, 21), qr = random_values(b * s * nq * dr, 22);
    const auto kn = random_values(b * skv * nkv * dn, 23), kr = random_values(b * skv * nkv * dr, 24);
    const auto v = random_values(b * skv * nkv * dn, 25);
    const auto bsnd = evaluate("mla",
                               {{{b, s, nq, dn}, qn}, {{b, s, nq, dr}, qr}, {{b, skv, nkv, dn}, kn}, {{b, skv, nkv, dr}, kr},
                                {{b, skv, nkv, dn}, v}},
                               mla_attrs(nkv, 0.25, "BSND", true))[0];
    const Problem p = problem_for("mla",
                                  {{{b, nq, s, dn}, {}}, {{b, nq, s, dr}, {}}, {{b, nkv, skv, dn}, {}}, {{b, nkv, skv, dr}, {}},
                                   {{b, nkv, skv, dn}, {}}},
                                  mla_attrs(nkv, 0.25, "BNSD", true));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{b, nq, s, dn}));
    const auto bnsd = evaluate("mla",
                               {{{b, nq, s, dn}, swap_seq_heads(qn, b, s, nq, dn)}, {{b, nq, s, dr}, swap_seq_heads(qr, b, s, nq, dr)},
                                {{b, nkv, skv, dn}, swap_seq_heads(kn, b, skv, nkv, dn)},
                                {{b, nkv, skv, dr}, swap_seq_heads(kr, b, skv, nkv, dr)},
                                {{b, nkv, skv, dn}, swap_seq_heads(v, b, skv, nkv, dn)}},
                               mla_attrs(nkv, 0.25, "BNSD", true))[0];
    expect_values(bnsd, swap_seq_heads(bsnd, b, s, nq, dn), 1e-12);
}

TEST(OpsLevel4L4a, MlaShapeErrors) {
    const std::vector<In> ok = {{{1, 2, 4, 8}, {}}, {{1, 2, 4, 2}, {}}, {{1, 3, 1, 8}, {}}, {{1, 3, 1, 2}, {}}, {{1, 3, 1, 8}, {}}};
    EXPECT_NO_THROW(problem_for("mla", ok, mla_attrs(1, -1, "BSND", false)));
    try {
        problem_for("mla", ok, mla_attrs(2, -1, "BSND", false));
        ADD_FAILURE() << "numKVHeads 2 against one KV head";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("numKVHeads"), std::string::npos) << e.what();
    }
    EXPECT_THROW(problem_for("mla", ok, mla_attrs(1, -1, "SBND", false)), Error);
    auto with = [&](std::size_t at, In replacement) {
        auto in = ok;
        in[at] = std::move(replacement);
        return in;
    };
    EXPECT_THROW(problem_for("mla", with(1, {{1, 2, 4, 3}, {}}), mla_attrs(1, -1, "BSND", false)), Error);  // dr differs
    EXPECT_THROW(problem_for("mla", with(4, {{1, 3, 1, 6}, {}}), mla_attrs(1, -1, "BSND", false)), Error);  // v's dim
    EXPECT_THROW(problem_for("mla", with(2, {{1, 3, 3, 8}, {}}), mla_attrs(3, -1, "BSND", false)), Error);  // 3 !| 4
    EXPECT_THROW(problem_for("mla", with(3, {{1, 3, 1, 2}, {}, DType::bf16}), mla_attrs(1, -1, "BSND", false)), Error);
}

// ---- sparse_flash_attention -----------------------------------------------------------------

AttrMap sparse_attrs(double scale, const std::string& layout, bool causal) {
    return {{"scaleValue", AttrValue::of_float(scale)},
            {"inputLayout", AttrValue::of_string(layout)},
            {"is_causal", AttrValue::of_bool(causal)}};
}

TEST(OpsLevel4L4a, SparseListsAreSetsAndCausalDropsLateKeys) {
    // S1 = 2, S2 = 4, one head, D = 1, keys = values = [0, 1, 2, 3], scale 1. Row 0 lists
    // [1, 1, 3] = {1, 3}, row 1 [0, 2, 2] = {0, 2}.
    const std::vector<In> in = {{{1, 2, 1, 1}, {1, 1}},
                                {{1, 4, 1, 1}, {0, 1, 2, 3}},
                                {{1, 4, 1, 1}, {0, 1, 2, 3}},
                                {{1, 2, 1, 3}, {1, 1, 3, 0, 2, 2}, DType::i32}};
    const double e = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0);
    expect_values(evaluate("sparse_flash_attention", in, sparse_attrs(1, "BSND", false))[0],
                  {(e + 3 * e3) / (e + e3), 2 * e2 / (1 + e2)});
    // Causal: row 0 sees j <= 0 + 4 - 2 = 2, so only key 1; row 1 (j <= 3) keeps {0, 2}.
    expect_values(evaluate("sparse_flash_attention", in, sparse_attrs(1, "BSND", true))[0], {1, 2 * e2 / (1 + e2)});
    // scaleValue is used as given, also when it is <= 0 (no default rule): 0 averages the set.
    expect_values(evaluate("sparse_flash_attention", in, sparse_attrs(0, "BSND", false))[0], {2, 1});
    expect_values(evaluate("sparse_flash_attention", in, sparse_attrs(-1, "BSND", false))[0],
                  {(std::exp(-1.0) + 3 * std::exp(-3.0)) / (std::exp(-1.0) + std::exp(-3.0)), 2 * std::exp(-2.0) / (1 + std::exp(-2.0))});
}

TEST(OpsLevel4L4a, SparseEmptySetsGiveZeroAndBadIndicesAreErrors) {
    // S1 = 3 > S2 = 2, causal: row 0's limit is -1, so its set is empty.
    const std::vector<In> in = {{{1, 3, 1, 1}, {1, 1, 1}},
                                {{1, 2, 1, 1}, {0, 1}},
                                {{1, 2, 1, 1}, {5, 6}},
                                {{1, 3, 1, 2}, {0, 1, 1, 0, 1, 0}, DType::i32}};
    const double e = std::exp(1.0);
    expect_values(evaluate("sparse_flash_attention", in, sparse_attrs(1, "BSND", true))[0], {0, 5, (5 + 6 * e) / (1 + e)});
    auto bad = in;
    bad[3].values = {0, 2, 1, 0, 1, 0};
    try {
        evaluate("sparse_flash_attention", bad, sparse_attrs(1, "BSND", false));
        ADD_FAILURE() << "index 2 of S2 = 2 accepted";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("[0, 2)"), std::string::npos) << error.what();
    }
    bad[3].values = {0, -1, 1, 0, 1, 0};
    EXPECT_THROW(evaluate("sparse_flash_attention", bad, sparse_attrs(1, "BSND", false)), Error);
}

TEST(OpsLevel4L4a, SparseQueryHeadsUseTheirKvHeadsListInEitherLayout) {
    // N1 = 4, N2 = 2 (G = 2), S1 = 1, S2 = 3, D = 2: KV head 0 lists key 0 only, KV head 1
    // keys {1, 2}; heads 0, 1 read KV head 0.
    const std::int64_t s2 = 3;
    const auto q = random_values(4 * 2, 31), k = random_values(s2 * 2 * 2, 32);
    const std::vector<double> v = k;  // value = key (Dv = Dk)
    const std::vector<In> in = {{{1, 1, 4, 2}, q}, {{1, s2, 2, 2}, k}, {{1, s2, 2, 2}, v}, {{1, 1, 2, 2}, {0, 0, 1, 2}, DType::i32}};
    const auto y = evaluate("sparse_flash_attention", in, sparse_attrs(0.7, "BSND", false))[0];
    // Heads 0 and 1: one key, so y = value of key 0 in KV head 0.
    for (std::int64_t h : {0, 1})
        for (std::int64_t d : {0, 1}) EXPECT_DOUBLE_EQ(y[static_cast<std::size_t>(h * 2 + d)], v[static_cast<std::size_t>(d)]);
    // Heads 2 and 3: keys 1 and 2 of KV head 1, as dense attention over those two keys.
    for (std::int64_t h : {2, 3}) {
        double s1v = 0, s2v = 0;
        for (std::int64_t d = 0; d < 2; ++d) {
            s1v += q[static_cast<std::size_t>(h * 2 + d)] * k[static_cast<std::size_t>((1 * 2 + 1) * 2 + d)];
            s2v += q[static_cast<std::size_t>(h * 2 + d)] * k[static_cast<std::size_t>((2 * 2 + 1) * 2 + d)];
        }
        const double w1 = 1 / (1 + std::exp(0.7 * (s2v - s1v)));
        for (std::int64_t d = 0; d < 2; ++d)
            EXPECT_NEAR(y[static_cast<std::size_t>(h * 2 + d)],
                        w1 * v[static_cast<std::size_t>((1 * 2 + 1) * 2 + d)] + (1 - w1) * v[static_cast<std::size_t>((2 * 2 + 1) * 2 + d)],
                        1e-12);
    }
    // BNSD: the same data with axes 1 and 2 swapped in every tensor, indices [B, N2, S1, topK].
    const std::vector<In> bnsd = {{{1, 4, 1, 2}, swap_seq_heads(q, 1, 1, 4, 2)},
                                  {{1, 2, s2, 2}, swap_seq_heads(k, 1, s2, 2, 2)},
                                  {{1, 2, s2, 2}, swap_seq_heads(v, 1, s2, 2, 2)},
                                  {{1, 2, 1, 2}, {0, 0, 1, 2}, DType::i32}};
    expect_values(evaluate("sparse_flash_attention", bnsd, sparse_attrs(0.7, "BNSD", false))[0], swap_seq_heads(y, 1, 1, 4, 2));
}

TEST(OpsLevel4L4a, SparseShapeErrors) {
    const std::vector<In> ok = {{{1, 2, 4, 8}, {}}, {{1, 9, 2, 8}, {}}, {{1, 9, 2, 6}, {}}, {{1, 2, 2, 5}, {}, DType::i32}};
    const AttrMap a = sparse_attrs(0.1, "BSND", false);
    EXPECT_NO_THROW(problem_for("sparse_flash_attention", ok, a));
    auto with = [&](std::size_t at, In replacement) {
        auto in = ok;
        in[at] = std::move(replacement);
        return in;
    };
    EXPECT_THROW(problem_for("sparse_flash_attention", with(2, {{1, 9, 2, 10}, {}}), a), Error);            // Dv > Dk
    EXPECT_THROW(problem_for("sparse_flash_attention", with(3, {{1, 2, 2, 5}, {}, DType::i64}), a), Error);  // int64 indices
    EXPECT_THROW(problem_for("sparse_flash_attention", with(3, {{1, 2, 1, 5}, {}, DType::i32}), a), Error);  // N2 of indices
    EXPECT_THROW(problem_for("sparse_flash_attention", with(1, {{1, 9, 3, 8}, {}}), a), Error);              // 3 !| 4
    EXPECT_THROW(problem_for("sparse_flash_attention", ok, sparse_attrs(nan, "BSND", false)), Error);
    // scaleValue is required: there is no default.
    EXPECT_THROW(problem_for("sparse_flash_attention", ok, {{"inputLayout", AttrValue::of_string("BSND")}}), Error);
}

// Draws a case's inputs as the harness does and checks the input contract.
TEST(OpsLevel4L4a, SparseInputsMeetTheContract) {
    const Operator& op = op_named("sparse_flash_attention");
    struct Shape6 {
        std::int64_t s1, s2, top_k;
        bool causal;
        const char* layout;
    };
    for (const Shape6 c : {Shape6{5, 40, 8, false, "BSND"}, Shape6{7, 30, 12, true, "BNSD"}, Shape6{3, 6, 9, true, "BSND"},
                           Shape6{40, 20, 16, true, "BSND"}}) {
        SCOPED_TRACE(std::to_string(c.s1) + " x " + std::to_string(c.s2) + " top " + std::to_string(c.top_k));
        const bool bsnd = std::string(c.layout) == "BSND";
        const std::int64_t b = 2, n2 = 2, dk = 6, dv = 4;
        auto shape = [&](std::int64_t seq, std::int64_t heads, std::int64_t dim) {
            return bsnd ? Shape{b, seq, heads, dim} : Shape{b, heads, seq, dim};
        };
        const Problem p = problem_for("sparse_flash_attention",
                                      {{shape(c.s1, 4, dk), {}}, {shape(c.s2, n2, dk), {}}, {shape(c.s2, n2, dv), {}},
                                       {shape(c.s1, n2, c.top_k), {}, DType::i32}},
                                      sparse_attrs(0.2, c.layout, c.causal));
        const auto inputs = generate_inputs(p, op, 0);
        const Tensor& key = inputs.at(1).tensors.at(0);
        const Tensor& value = inputs.at(2).tensors.at(0);
        for (std::int64_t r = 0; r < b * c.s2 * n2; ++r)
            for (std::int64_t d = 0; d < dv; ++d)
                ASSERT_EQ(value.get(static_cast<std::size_t>(r * dv + d)), key.get(static_cast<std::size_t>(r * dk + d)));
        const Tensor& idx = inputs.at(3).tensors.at(0);
        double allowed_total = 0;
        for (std::int64_t bb = 0; bb < b; ++bb)
            for (std::int64_t h = 0; h < n2; ++h)
                for (std::int64_t i = 0; i < c.s1; ++i) {
                    const std::int64_t base = bsnd ? ((bb * c.s1 + i) * n2 + h) * c.top_k : ((bb * n2 + h) * c.s1 + i) * c.top_k;
                    std::set<std::int64_t> seen;
                    std::int64_t within = 0, last = -1;
                    const std::int64_t limit = c.causal ? i + c.s2 - c.s1 : c.s2 - 1;
                    for (std::int64_t t = 0; t < c.top_k; ++t) {
                        const auto j = static_cast<std::int64_t>(idx.get(static_cast<std::size_t>(base + t)));
                        ASSERT_GE(j, 0);
                        ASSERT_LT(j, c.s2);
                        if (t < std::min(c.top_k, c.s2)) EXPECT_TRUE(seen.insert(j).second) << "key " << j << " twice";
                        else EXPECT_EQ(j, last) << "padding repeats the last entry";
                        if (t < std::min(c.top_k, c.s2)) within += j <= limit;
                        last = j;
                    }
                    // The stratified draw: the mean count of a uniform draw, rounded.
                    const std::int64_t inside = std::clamp<std::int64_t>(limit + 1, 0, c.s2);
                    const std::int64_t distinct = std::min(c.top_k, c.s2);
                    const std::int64_t want = std::clamp<std::int64_t>(
                        std::llround(double(distinct) * double(inside) / double(c.s2)),
                        std::max<std::int64_t>(0, distinct - (c.s2 - inside)), std::min(distinct, inside));
                    EXPECT_EQ(within, want) << "row " << i;
                    allowed_total += static_cast<double>(within);
                }
        // The work model's MACs are those allowed pairs' exactly (4 query heads, 2 per KV head).
        const WorkModel w = op.work(p);
        EXPECT_EQ(vector_elements(w, OpClass::exp), 2 * allowed_total);
        EXPECT_LE(contraction_macs(w), 2 * allowed_total * (dk + dv));
    }
}

TEST(OpsLevel4L4a, SparseWorkModelReadsQueryIndicesAndOneListOfKeyRows) {
    const Problem p = problem_for("sparse_flash_attention",
                                  {{{2, 3, 4, 8}, {}}, {{2, 50, 2, 8}, {}}, {{2, 50, 2, 6}, {}}, {{2, 3, 2, 10}, {}, DType::i32}},
                                  sparse_attrs(0.3, "BSND", false));
    const WorkModel w = op_named("sparse_flash_attention").work(p);
    EXPECT_EQ(w.bytes_read, (2 * 3 * 4 * 8) * 2.0 + 2 * 3 * 2 * 10 * 4.0 + 2 * 2 * 10 * 8 * 2.0);
    EXPECT_EQ(w.bytes_written, 2 * 3 * 4 * 6 * 2.0);
    EXPECT_EQ(contraction_macs(w), 2 * 4 * 3 * 10 * (8 + 6.0));
}

// ---- mla_prolog -----------------------------------------------------------------------------

AttrMap prolog_attrs(std::int64_t heads, double eps_cq = 1e-5, double eps_ckv = 1e-5) {
    return {{"n_heads", AttrValue::of_int(heads)},
            {"rmsnorm_epsilon_cq", AttrValue::of_float(eps_cq)},
            {"rmsnorm_epsilon_ckv", AttrValue::of_float(eps_ckv)}};
}

std::vector<In> prolog_inputs(std::int64_t t, std::int64_t he, std::int64_t cq, std::int64_t n, std::int64_t d,
                              std::int64_t ckv, std::int64_t dr, std::uint64_t seed) {
    auto r = [&](Shape s, std::uint64_t k) { return In{s, random_values(numel(s), seed + k), DType::bf16}; };
    return {r({1, t, he}, 1), r({he, cq}, 2), r({cq, n * (d + dr)}, 3), r({n, d, ckv}, 4), r({he, ckv + dr}, 5),
            r({cq}, 6),       r({ckv}, 7),    r({1, t, dr}, 8),          r({1, t, dr}, 9)};
}

TEST(OpsLevel4L4a, MlaPrologByHand) {
    // One token, He = 2, Hcq = 2, N = 1, D = 1, Hckv = 2, Dr = 2, eps 0.
    const std::vector<In> in = {
        {{1, 1, 2}, {1, 2}, DType::bf16},
        {{2, 2}, {1, 0, 0, 1}, DType::bf16},                 // w_dq = I: a = x = [1, 2]
        {{2, 3}, {1, 0, 0, 0, 1, 1}, DType::bf16},           // qr = c_q w_uq_qr
        {{1, 1, 2}, {2, 3}, DType::bf16},                    // w_uk[0] = [[2, 3]]
        {{2, 4}, {1, 0, 1, 0, 0, 1, 0, 1}, DType::bf16},     // u = [x0, x1, x0, x1]
        {{2}, {1, 1}, DType::bf16},
        {{2}, {2, 1}, DType::bf16},
        {{1, 1, 2}, {0.5, 0.5}, DType::bf16},                // sin
        {{1, 1, 2}, {0.25, 0.25}, DType::bf16}};             // cos
    const auto out = evaluate("mla_prolog", in, prolog_attrs(1, 0, 0));
    // c_q = [1, 2] / sqrt(2.5); qr = [c0, c1, c1]; query = c0 * [2, 3]; query_rope = RoPE([c1, c1]).
    const double r = std::sqrt(2.5), c0 = 1 / r, c1 = 2 / r;
    expect_values(out[0], {2 * c0, 3 * c0});
    expect_values(out[1], {c1 * 0.25 - c1 * 0.5, c1 * 0.25 + c1 * 0.5});
    // c_kv = ([2, 1] * [1, 2]) / sqrt(2.5); k_rope = RoPE([1, 2]) = [1 cos - 2 sin, 2 cos + 1 sin].
    expect_values(out[2], {2 / r, 2 / r});
    expect_values(out[3], {0.25 - 1.0, 0.5 + 0.5});
    // epsilon enters the root: with 0.5, r = sqrt(3).
    expect_values(evaluate("mla_prolog", in, prolog_attrs(1, 0.5, 0))[0], {2 / std::sqrt(3.0), 3 / std::sqrt(3.0)});
}

TEST(OpsLevel4L4a, MlaPrologHeadsOwnTheirColumnsAndSamePrecisionIsFp32) {
    const auto in = prolog_inputs(3, 16, 8, 2, 4, 6, 4, 40);
    const auto golden = evaluate("mla_prolog", in, prolog_attrs(2));
    // query[t, n] = qr[t, n, :D] w_uk[n] with qr[t] = RMSNorm(x w_dq) w_uq_qr, head-major.
    std::vector<double> a(3 * 8), c_q(3 * 8), qr(3 * 16);
    for (int t = 0; t < 3; ++t) {
        double ms = 0;
        for (int o = 0; o < 8; ++o) {
            for (int e = 0; e < 16; ++e) a[t * 8 + o] += in[0].values[t * 16 + e] * in[1].values[e * 8 + o];
            ms += a[t * 8 + o] * a[t * 8 + o] / 8;
        }
        for (int o = 0; o < 8; ++o) c_q[t * 8 + o] = in[5].values[o] * a[t * 8 + o] / std::sqrt(ms + 1e-5);
        for (int o = 0; o < 16; ++o)
            for (int e = 0; e < 8; ++e) qr[t * 16 + o] += c_q[t * 8 + e] * in[2].values[e * 16 + o];
    }
    for (int t = 0; t < 3; ++t)
        for (int n = 0; n < 2; ++n)
            for (int o = 0; o < 6; ++o) {
                double want = 0;
                for (int d = 0; d < 4; ++d) want += qr[t * 16 + n * 8 + d] * in[3].values[(n * 4 + d) * 6 + o];
                EXPECT_NEAR(golden[0][(t * 2 + n) * 6 + o], want, 1e-12 * std::fabs(want) + 1e-14);
            }
    const auto same = evaluate("mla_prolog", in, prolog_attrs(2), true);
    for (std::size_t o = 0; o < 4; ++o)
        for (std::size_t i = 0; i < golden[o].size(); ++i)
            EXPECT_NEAR(same[o][i], golden[o][i], 1e-2 * std::fabs(golden[o][i]) + 1e-3) << "output " << o << " element " << i;
}

TEST(OpsLevel4L4a, MlaPrologSinAndCosArePairedRotations) {
    const Operator& op = op_named("mla_prolog");
    const auto in = prolog_inputs(5, 16, 8, 2, 4, 6, 8, 50);
    std::vector<In> shapes = in;
    const Problem p = problem_for("mla_prolog", shapes, prolog_attrs(2));
    const auto inputs = generate_inputs(p, op, 0);
    const Tensor& sin = inputs.at(7).tensors.at(0);
    const Tensor& cos = inputs.at(8).tensors.at(0);
    for (std::int64_t t = 0; t < 5; ++t)
        for (std::int64_t j = 0; j < 4; ++j) {
            const auto a = static_cast<std::size_t>(t * 8 + j), b = a + 4;
            EXPECT_EQ(sin.get(a), sin.get(b));
            EXPECT_EQ(cos.get(a), cos.get(b));
            EXPECT_NEAR(sin.get(a) * sin.get(a) + cos.get(a) * cos.get(a), 1, 0.02);
        }
    // Constant (zero) and non-finite tables are left as generated.
    for (ValueRange range : {ValueRange{0, 0}, ValueRange{nan, nan}}) {
        CaseSpec c = p.spec;
        for (auto& input : c.inputs) input.range = range;
        const Problem q = resolve_problem(*p.proto, op, c);
        const auto generated = generate_inputs(q, op, 0);
        const Tensor& s = generated.at(7).tensors.at(0);
        if (range.lo == 0) {
            for (std::int64_t i = 0; i < s.numel(); ++i) EXPECT_EQ(s.get(static_cast<std::size_t>(i)), 0);
        } else {
            int nans = 0;
            for (std::int64_t i = 0; i < s.numel(); ++i) nans += std::isnan(s.get(static_cast<std::size_t>(i)));
            EXPECT_GT(nans, 0);
        }
    }
}

TEST(OpsLevel4L4a, MlaPrologShapeErrorsAndWorkModel) {
    const auto ok = prolog_inputs(3, 16, 8, 2, 4, 6, 4, 60);
    EXPECT_NO_THROW(problem_for("mla_prolog", ok, prolog_attrs(2)));
    EXPECT_THROW(problem_for("mla_prolog", ok, prolog_attrs(3)), Error);  // n_heads against w_uk
    auto with = [&](std::size_t at, Shape s, DType t = DType::bf16) {
        auto in = ok;
        in[at].shape = std::move(s);
        in[at].dtype = t;
        return in;
    };
    EXPECT_THROW(problem_for("mla_prolog", with(2, {8, 15}), prolog_attrs(2)), Error);     // N (D + Dr)
    EXPECT_THROW(problem_for("mla_prolog", with(4, {16, 9}), prolog_attrs(2)), Error);     // Hckv + Dr
    EXPECT_THROW(problem_for("mla_prolog", with(5, {7}), prolog_attrs(2)), Error);         // gamma_cq
    EXPECT_THROW(problem_for("mla_prolog", with(7, {1, 3, 3}), prolog_attrs(2)), Error);   // odd Dr
    EXPECT_THROW(problem_for("mla_prolog", with(8, {1, 2, 4}), prolog_attrs(2)), Error);   // cos != sin
    EXPECT_THROW(problem_for("mla_prolog", with(0, {1, 3, 16}, DType::f16), prolog_attrs(2)), Error);
    EXPECT_THROW(problem_for("mla_prolog", ok, prolog_attrs(2, -1e-5)), Error);
    const Problem p = problem_for("mla_prolog", ok, prolog_attrs(2));
    EXPECT_EQ(p.outputs.at(0).tensors.at(0).shape, (Shape{1, 3, 2, 6}));
    EXPECT_EQ(p.outputs.at(1).tensors.at(0).shape, (Shape{1, 3, 2, 4}));
    EXPECT_EQ(p.outputs.at(2).tensors.at(0).shape, (Shape{1, 3, 6}));
    EXPECT_EQ(p.outputs.at(3).tensors.at(0).shape, (Shape{1, 3, 4}));
    const WorkModel w = op_named("mla_prolog").work(p);
    EXPECT_EQ(contraction_macs(w), 3.0 * (16 * 8 + 8 * 16 + 2 * 4 * 6 + 16 * 10));
    double in_bytes = 0;
    for (const auto& i : ok) in_bytes += 2.0 * static_cast<double>(numel(i.shape));
    EXPECT_EQ(w.bytes_read, in_bytes);
    EXPECT_EQ(w.bytes_written, 2.0 * 3 * (2 * 6 + 2 * 4 + 6 + 4));
}

// ---- case sampling --------------------------------------------------------------------------

std::vector<CaseSpec> generated_cases(const std::string& name, std::uint64_t seed = 20260101, int count = 20) {
    const Proto proto = proto_for(name);
    const auto cases = generate_cases(op_named(name), proto, profile_by_name("cpu"), seed, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(proto, op_named(name), c)) << name << " case " << c.case_id;
    const auto problems = check_case_rules(cases, proto, op_named(name), profile_by_name("cpu"));
    EXPECT_TRUE(problems.empty()) << problems.front();
    return cases;
}

// The shipped cases, resolved: each stays within the work the suite's time allows.
std::vector<Problem> shipped(const std::string& op) {
    static std::map<std::string, TaskDir> dirs;
    auto it = dirs.find("suite");
    if (it == dirs.end()) it = dirs.emplace("suite", load_task_dir(std::string(HB_SOURCE_DIR) + "/suite", "cpu")).first;
    std::vector<Problem> out;
    for (const auto& entry : it->second.tasks)
        if (entry.op == op)
            for (const auto& c : entry.cases) out.push_back(resolve_problem(entry.proto, op_named(op), c));
    return out;
}

TEST(OpsLevel4L4a, DenseAttentionCasesCoverMasksScalesGroupsAndLayouts) {
    for (const std::string op : {"mha", "gqa", "mla"}) {
        SCOPED_TRACE(op);
        for (std::uint64_t seed : {20260101ull, 2026ull}) {
            const auto cases = generated_cases(op, seed);
            std::set<bool> causal;
            std::set<std::string> scales, layouts;
            std::set<std::string> groups;
            bool longer_queries = false, decode = false;
            for (const auto& c : cases) {
                causal.insert(c.attrs.at("is_causal").b);
                const double s = c.attrs.at("scaleValue").f;
                scales.insert(s == -1 ? "-1" : s == 0 ? "0" : "explicit");
                const Shape& q = c.inputs.at(0).shapes.at(0);
                const Shape& k = c.inputs.at(op == "mla" ? 2 : 1).shapes.at(0);
                const bool bsnd = op != "mla" || c.attrs.at("inputLayout").s == "BSND";
                if (op == "mla") layouts.insert(c.attrs.at("inputLayout").s);
                const std::int64_t nq = bsnd ? q[2] : q[1], nkv = bsnd ? k[2] : k[1];
                const std::int64_t s_len = bsnd ? q[1] : q[2], kv_len = bsnd ? k[1] : k[2];
                groups.insert(nkv == nq ? "1" : nkv == 1 ? "all" : "between");
                longer_queries = longer_queries || s_len > kv_len;
                decode = decode || s_len == 1;
            }
            EXPECT_EQ(causal.size(), 2u);
            EXPECT_EQ(scales.size(), 3u);
            EXPECT_TRUE(longer_queries);
            EXPECT_TRUE(decode);
            if (op == "gqa") {
                EXPECT_EQ(groups, (std::set<std::string>{"1", "all", "between"}));
            }
            if (op == "mla") {
                EXPECT_EQ(layouts, (std::set<std::string>{"BSND", "BNSD"}));
            }
        }
        for (const Problem& p : shipped(op)) {
            // At most 3e7 multiply-adds, unless the regime's floor forced more batches.
            const WorkModel w = op_named(op).work(p);
            EXPECT_LE(contraction_macs(w), 6e7) << "case " << p.case_id();
        }
        EXPECT_EQ(shipped(op).size(), 20u);
    }
}

TEST(OpsLevel4L4a, SparseAndPrologCasesCoverTheirAttributes) {
    for (std::uint64_t seed : {20260101ull, 2026ull}) {
        const auto cases = generated_cases("sparse_flash_attention", seed);
        std::set<bool> causal;
        std::set<std::string> layouts, styles;
        for (const auto& c : cases) {
            causal.insert(c.attrs.at("is_causal").b);
            layouts.insert(c.attrs.at("inputLayout").s);
            const Shape& k = c.inputs.at(1).shapes.at(0);
            const Shape& v = c.inputs.at(2).shapes.at(0);
            const bool bsnd = c.attrs.at("inputLayout").s == "BSND";
            styles.insert((bsnd ? k[2] : k[1]) == 1 ? "one KV head" : "grouped");
            if (k[3] != v[3]) styles.insert("Dv < Dk");
        }
        EXPECT_EQ(causal.size(), 2u);
        EXPECT_EQ(layouts.size(), 2u);
        EXPECT_EQ(styles, (std::set<std::string>{"one KV head", "grouped", "Dv < Dk"}));
    }
    const auto prolog = generated_cases("mla_prolog");
    std::set<double> eps;
    std::set<std::string> patterns;
    for (const auto& c : prolog) {
        eps.insert(c.attrs.at("rmsnorm_epsilon_cq").f);
        eps.insert(c.attrs.at("rmsnorm_epsilon_ckv").f);
        const Shape& x = c.inputs.at(0).shapes.at(0);
        patterns.insert(x[1] == 1 ? "decode" : x[0] == 1 || x[0] == 2 ? "prefill" : "multi-token");
    }
    EXPECT_EQ(eps, (std::set<double>{1e-8, 1e-6, 1e-5, 1e-3}));
    EXPECT_EQ(patterns.size(), 3u);
    for (const std::string op : {"sparse_flash_attention", "mla_prolog"})
        for (const Problem& p : shipped(op)) EXPECT_LE(contraction_macs(op_named(op).work(p)), 6e7) << op << " case " << p.case_id();
}

}  // namespace
}  // namespace hb
