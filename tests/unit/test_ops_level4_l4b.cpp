// Level-4 recurrences and fused MoE (gru, lstm, grouped_matmul_swiglu_quant): goldens against
// values worked out here and against naive scalar loops on every attribute path (layers,
// directions, batch-first, the bias forms, initial states, lstm's projection), the gate order,
// special values, the same-precision references, shape inference and its errors, the work
// models (bytes, contractions, the dependent chain, the cann-bench counts) and case sampling.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "core/error.hpp"
#include "hap/hardware_model.hpp"
#include "hap/solver.hpp"
#include "ops/recurrence.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "spec/profile.hpp"
#include "spec/proto.hpp"
#include "suite/case_rules.hpp"
#include "suite/split.hpp"

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

// One input: absent, one tensor or a list, with its values.
struct In {
    std::vector<Shape> shapes;
    std::vector<std::vector<double>> values;
    DType dtype = DType::f32;
    bool present = true;
};
In absent() { return In{{}, {}, DType::f32, false}; }
In one(Shape s, std::vector<double> v, DType t = DType::f32) { return In{{std::move(s)}, {std::move(v)}, t, true}; }

Problem problem_for(const std::string& op, const std::vector<In>& inputs, AttrMap attrs) {
    static std::map<std::string, Proto> protos;
    auto it = protos.find(op);
    if (it == protos.end()) it = protos.emplace(op, proto_for(op)).first;
    CaseSpec c;
    c.op = op;
    c.case_id = 1;
    c.attrs = std::move(attrs);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        CaseInput ci;
        ci.present = inputs[k].present;
        ci.is_list = it->second.inputs.at(k).is_list;
        if (inputs[k].present) ci.shapes = inputs[k].shapes;
        ci.dtype = inputs[k].dtype;
        c.inputs.push_back(ci);
    }
    return resolve_problem(it->second, op_named(op), c);
}

std::vector<std::vector<double>> evaluate(const std::string& op, const std::vector<In>& inputs, AttrMap attrs,
                                          bool same_precision = false) {
    const Problem p = problem_for(op, inputs, std::move(attrs));
    ValueArgs<double> in(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        in[k].name = p.inputs[k].name;
        in[k].present = inputs[k].present;
        if (inputs[k].present)
            for (std::size_t t = 0; t < inputs[k].shapes.size(); ++t)
                in[k].tensors.push_back({TensorSpec{inputs[k].dtype, inputs[k].shapes[t]}, inputs[k].values[t]});
    }
    ValueArgs<double> out = values_for_specs<double>(p.outputs);
    if (same_precision) op_named(op).same_precision(p, in, out);
    else op_named(op).golden(p, in, out);
    std::vector<std::vector<double>> result;
    for (const auto& o : out) result.push_back(o.one().v);
    return result;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& expected, double rel = 1e-12,
                   double abs = 1e-300) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
        else if (std::isinf(expected[i])) EXPECT_EQ(got[i], expected[i]) << "element " << i;
        else EXPECT_NEAR(got[i], expected[i], rel * std::fabs(expected[i]) + abs) << "element " << i;
    }
}

double sigmoid(double t) { return 1 / (1 + std::exp(-t)); }

AttrValue i_(std::int64_t v) { return AttrValue::of_int(v); }
AttrValue b_(bool v) { return AttrValue::of_bool(v); }
AttrValue f_(double v) { return AttrValue::of_float(v); }

// ---- a naive recurrence, written from the formulas with scalar loops (no BLAS) -------------

struct Rnn {
    bool lstm = false;
    std::int64_t S = 3, B = 2, I = 3, H = 4, P = 0, L = 1, Dn = 1;
    bool batch_first = false;
    int bias = 1;  // 0: bias false; 1: lists given; 2: bias true without lists
    bool h0 = false, c0 = false;
    std::vector<double> x, h0v, c0v;
    std::vector<std::vector<double>> wih, whh, bih, bhh, whr;

    std::int64_t G() const { return lstm ? 4 : 3; }
    std::int64_t Hs() const { return P > 0 ? P : H; }
    std::int64_t in(std::int64_t l) const { return l == 0 ? I : Dn * Hs(); }

    void randomize(unsigned seed) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> u(-0.6, 0.6);
        auto fill = [&](std::int64_t n) {
            std::vector<double> v(static_cast<std::size_t>(n));
            for (auto& e : v) e = u(rng);
            return v;
        };
        x = fill(S * B * I);
        wih.clear(), whh.clear(), bih.clear(), bhh.clear(), whr.clear();
        for (std::int64_t k = 0; k < L * Dn; ++k) {
            wih.push_back(fill(G() * H * in(k / Dn)));
            whh.push_back(fill(G() * H * Hs()));
            bih.push_back(fill(G() * H));
            bhh.push_back(fill(G() * H));
            if (P > 0) whr.push_back(fill(P * H));
        }
        h0v = fill(L * Dn * B * Hs());
        c0v = fill(L * Dn * B * H);
    }

    std::vector<In> inputs() const {
        std::vector<In> v;
        v.push_back(one(batch_first ? Shape{B, S, I} : Shape{S, B, I}, x));
        auto list = [&](const std::vector<std::vector<double>>& w, std::function<Shape(std::int64_t)> shape) {
            In a;
            for (std::int64_t k = 0; k < L * Dn; ++k) {
                a.shapes.push_back(shape(k / Dn));
                a.values.push_back(w[static_cast<std::size_t>(k)]);
            }
            return a;
        };
        v.push_back(list(wih, [&](std::int64_t l) { return Shape{G() * H, in(l)}; }));
        v.push_back(list(whh, [&](std::int64_t) { return Shape{G() * H, Hs()}; }));
        v.push_back(bias == 1 ? list(bih, [&](std::int64_t) { return Shape{G() * H}; }) : absent());
        v.push_back(bias == 1 ? list(bhh, [&](std::int64_t) { return Shape{G() * H}; }) : absent());
        if (lstm) v.push_back(P > 0 ? list(whr, [&](std::int64_t) { return Shape{P, H}; }) : absent());
        v.push_back(h0 ? one({L * Dn, B, Hs()}, h0v) : absent());
        if (lstm) v.push_back(c0 ? one({L * Dn, B, H}, c0v) : absent());
        return v;
    }

    AttrMap attrs() const {
        AttrMap a = {{"inputSize", i_(I)},         {"hiddenSize", i_(H)},        {"numLayers", i_(L)},
                     {"bias", b_(bias != 0)},       {"batchFirst", b_(batch_first)}, {"dropout", f_(0.0)},
                     {"bidirectional", b_(Dn == 2)}};
        if (lstm) a["projSize"] = i_(P);
        return a;
    }

    // y, hn (, cn), from the formulas.
    std::vector<std::vector<double>> naive() const {
        std::vector<double> layer(static_cast<std::size_t>(S * B * I));  // [t][b][i]
        for (std::int64_t t = 0; t < S; ++t)
            for (std::int64_t b = 0; b < B; ++b)
                for (std::int64_t i = 0; i < I; ++i)
                    layer[static_cast<std::size_t>((t * B + b) * I + i)] =
                        x[static_cast<std::size_t>(batch_first ? (b * S + t) * I + i : (t * B + b) * I + i)];
        std::vector<double> hn(static_cast<std::size_t>(L * Dn * B * Hs())), cn(static_cast<std::size_t>(L * Dn * B * H));
        for (std::int64_t l = 0; l < L; ++l) {
            const std::int64_t n_in = in(l);
            std::vector<double> next(static_cast<std::size_t>(S * B * Dn * Hs()));
            for (std::int64_t d = 0; d < Dn; ++d) {
                const auto k = static_cast<std::size_t>(l * Dn + d);
                std::vector<double> h(static_cast<std::size_t>(B * Hs())), c(static_cast<std::size_t>(B * H));
                for (std::int64_t i = 0; i < B * Hs(); ++i) h[static_cast<std::size_t>(i)] = h0 ? h0v[k * B * Hs() + i] : 0;
                for (std::int64_t i = 0; i < B * H; ++i) c[static_cast<std::size_t>(i)] = c0 ? c0v[k * B * H + i] : 0;
                for (std::int64_t s = 0; s < S; ++s) {
                    const std::int64_t t = d == 0 ? s : S - 1 - s;
                    std::vector<double> hnew(static_cast<std::size_t>(B * H));
                    for (std::int64_t b = 0; b < B; ++b)
                        for (std::int64_t j = 0; j < H; ++j) {
                            double gi[4], gh[4];
                            for (std::int64_t g = 0; g < G(); ++g) {
                                const std::int64_t row = g * H + j;
                                double a = bias == 1 ? bih[k][static_cast<std::size_t>(row)] : 0;
                                for (std::int64_t i = 0; i < n_in; ++i)
                                    a += wih[k][static_cast<std::size_t>(row * n_in + i)] *
                                         layer[static_cast<std::size_t>((t * B + b) * n_in + i)];
                                double r = bias == 1 ? bhh[k][static_cast<std::size_t>(row)] : 0;
                                for (std::int64_t i = 0; i < Hs(); ++i)
                                    r += whh[k][static_cast<std::size_t>(row * Hs() + i)] * h[static_cast<std::size_t>(b * Hs() + i)];
                                gi[g] = a;
                                gh[g] = r;
                            }
                            const auto at = static_cast<std::size_t>(b * H + j);
                            if (!lstm) {
                                const double r = sigmoid(gi[0] + gh[0]), z = sigmoid(gi[1] + gh[1]);
                                const double n = std::tanh(gi[2] + r * gh[2]);
                                hnew[at] = (1 - z) * n + z * h[static_cast<std::size_t>(b * Hs() + j)];
                            } else {
                                const double ig = sigmoid(gi[0] + gh[0]), fg = sigmoid(gi[1] + gh[1]);
                                const double gg = std::tanh(gi[2] + gh[2]), og = sigmoid(gi[3] + gh[3]);
                                c[at] = fg * c[at] + ig * gg;
                                hnew[at] = og * std::tanh(c[at]);
                            }
                        }
                    for (std::int64_t b = 0; b < B; ++b)
                        for (std::int64_t q = 0; q < Hs(); ++q) {
                            double v = hnew[static_cast<std::size_t>(b * H + q)];
                            if (P > 0) {
                                v = 0;
                                for (std::int64_t j = 0; j < H; ++j)
                                    v += whr[k][static_cast<std::size_t>(q * H + j)] * hnew[static_cast<std::size_t>(b * H + j)];
                            }
                            h[static_cast<std::size_t>(b * Hs() + q)] = v;
                            next[static_cast<std::size_t>((t * B + b) * Dn * Hs() + d * Hs() + q)] = v;
                        }
                }
                std::copy(h.begin(), h.end(), hn.begin() + static_cast<std::ptrdiff_t>(k * B * Hs()));
                std::copy(c.begin(), c.end(), cn.begin() + static_cast<std::ptrdiff_t>(k * B * H));
            }
            layer = next;
        }
        std::vector<double> y(layer.size());
        const std::int64_t w = Dn * Hs();
        for (std::int64_t t = 0; t < S; ++t)
            for (std::int64_t b = 0; b < B; ++b)
                for (std::int64_t q = 0; q < w; ++q)
                    y[static_cast<std::size_t>(batch_first ? (b * S + t) * w + q : (t * B + b) * w + q)] =
                        layer[static_cast<std::size_t>((t * B + b) * w + q)];
        if (lstm) return {y, hn, cn};
        return {y, hn};
    }

    std::string op() const { return lstm ? "lstm" : "gru"; }
};

// ---- gru --------------------------------------------------------------------------------

// One unit, one step, every weight and bias a distinct value: the rows are (r, z, n) and the
// reset gate scales the recurrent n term with its bias.
TEST(OpsLevel4L4b, GruOneStepByHand) {
    const double x0 = 0.7, h0 = -0.4;
    const std::vector<double> wih = {0.5, -0.3, 0.8}, whh = {0.2, 0.6, -0.9}, bih = {0.1, -0.2, 0.3}, bhh = {-0.05, 0.15, 0.25};
    const auto out = evaluate("gru",
                              {one({1, 1, 1}, {x0}), one({3, 1}, wih), one({3, 1}, whh), one({3}, bih), one({3}, bhh),
                               one({1, 1, 1}, {h0})},
                              {{"inputSize", i_(1)}, {"hiddenSize", i_(1)}});
    const double r = sigmoid(0.5 * x0 + 0.1 + 0.2 * h0 - 0.05);
    const double z = sigmoid(-0.3 * x0 - 0.2 + 0.6 * h0 + 0.15);
    const double n = std::tanh(0.8 * x0 + 0.3 + r * (-0.9 * h0 + 0.25));
    const double h = (1 - z) * n + z * h0;
    expect_values(out[0], {h});
    expect_values(out[1], {h});
}

TEST(OpsLevel4L4b, GruUpdateGateIsTheSecondRowBlock) {
    // A large positive update pre-activation (block 1) keeps h at h0 whatever the rest does.
    const auto out = evaluate("gru",
                              {one({2, 1, 1}, {1, -1}), one({3, 1}, {0.3, 0, 0.5}), one({3, 1}, {0, 0, 0}),
                               one({3}, {0, 40, 0}), one({3}, {0, 0, 0}), one({1, 1, 1}, {0.25})},
                              {{"inputSize", i_(1)}, {"hiddenSize", i_(1)}});
    expect_values(out[0], {0.25, 0.25}, 1e-12, 1e-15);
}

TEST(OpsLevel4L4b, GruGoldenMatchesNaiveLoopsOnEveryAttributePath) {
    unsigned seed = 1;
    for (std::int64_t layers : {1, 2, 3})
        for (std::int64_t dirs : {1, 2})
            for (bool batch_first : {false, true})
                for (int bias : {0, 1, 2})
                    for (bool h0 : {false, true}) {
                        Rnn r;
                        r.L = layers, r.Dn = dirs, r.batch_first = batch_first, r.bias = bias, r.h0 = h0;
                        r.randomize(seed++);
                        SCOPED_TRACE("layers " + std::to_string(layers) + " dirs " + std::to_string(dirs) + " batch_first " +
                                     std::to_string(batch_first) + " bias " + std::to_string(bias) + " h0 " + std::to_string(h0));
                        const auto got = evaluate("gru", r.inputs(), r.attrs());
                        const auto want = r.naive();
                        ASSERT_EQ(got.size(), 2u);
                        expect_values(got[0], want[0], 1e-12, 1e-14);
                        expect_values(got[1], want[1], 1e-12, 1e-14);
                    }
}

// ---- lstm -------------------------------------------------------------------------------

TEST(OpsLevel4L4b, LstmOneStepByHand) {
    const double x0 = -0.6, h0 = 0.3, c0 = 0.9;
    const std::vector<double> wih = {0.4, -0.7, 0.2, 0.9}, whh = {-0.3, 0.5, 0.8, -0.1};
    const std::vector<double> bih = {0.05, 0.1, -0.15, 0.2}, bhh = {0.02, -0.04, 0.06, -0.08};
    const auto out = evaluate("lstm",
                              {one({1, 1, 1}, {x0}), one({4, 1}, wih), one({4, 1}, whh), one({4}, bih), one({4}, bhh),
                               absent(), one({1, 1, 1}, {h0}), one({1, 1, 1}, {c0})},
                              {{"inputSize", i_(1)}, {"hiddenSize", i_(1)}});
    const double i = sigmoid(0.4 * x0 + 0.05 - 0.3 * h0 + 0.02);
    const double f = sigmoid(-0.7 * x0 + 0.1 + 0.5 * h0 - 0.04);
    const double g = std::tanh(0.2 * x0 - 0.15 + 0.8 * h0 + 0.06);
    const double o = sigmoid(0.9 * x0 + 0.2 - 0.1 * h0 - 0.08);
    const double c = f * c0 + i * g, h = o * std::tanh(c);
    expect_values(out[0], {h});
    expect_values(out[1], {h});
    expect_values(out[2], {c});
}

TEST(OpsLevel4L4b, LstmProjectionByHand) {
    // H = 2, P = 1: h = W_hr (o tanh(c)); the next step's W_hh has one column.
    const std::vector<double> wih = {0.1, 0.2, 0.3, 0.4, -0.1, -0.2, 0.5, 0.6};
    const std::vector<double> whh = {0.3, -0.3, 0.2, -0.2, 0.4, -0.4, 0.1, -0.1};
    const std::vector<double> whr = {0.7, -0.5};
    const auto out = evaluate("lstm",
                              {one({2, 1, 1}, {0.5, -1.0}), one({8, 1}, wih), one({8, 1}, whh), absent(), absent(),
                               one({1, 2}, whr), absent(), absent()},
                              {{"inputSize", i_(1)}, {"hiddenSize", i_(2)}, {"projSize", i_(1)}});
    double h = 0, c[2] = {0, 0}, y[2];
    const double xs[2] = {0.5, -1.0};
    for (int t = 0; t < 2; ++t) {
        double full[2];
        for (int j = 0; j < 2; ++j) {
            auto pre = [&](int g) { return wih[g * 2 + j] * xs[t] + whh[g * 2 + j] * h; };
            c[j] = sigmoid(pre(1)) * c[j] + sigmoid(pre(0)) * std::tanh(pre(2));
            full[j] = sigmoid(pre(3)) * std::tanh(c[j]);
        }
        h = whr[0] * full[0] + whr[1] * full[1];
        y[t] = h;
    }
    expect_values(out[0], {y[0], y[1]});
    expect_values(out[1], {h});
    expect_values(out[2], {c[0], c[1]});
}

TEST(OpsLevel4L4b, LstmForgetGateIsTheSecondRowBlock) {
    // Forget gate saturated open (block 1), input gate shut (block 0): c stays c0.
    const auto out = evaluate("lstm",
                              {one({1, 1, 1}, {0.3}), one({4, 1}, {0, 0, 0.9, 0}), one({4, 1}, {0, 0, 0, 0}),
                               one({4}, {-40, 40, 0, 0}), one({4}, {0, 0, 0, 0}), absent(), absent(), one({1, 1, 1}, {0.75})},
                              {{"inputSize", i_(1)}, {"hiddenSize", i_(1)}});
    expect_values(out[2], {0.75}, 1e-12);
    expect_values(out[0], {0.5 * std::tanh(0.75)}, 1e-12);
}

TEST(OpsLevel4L4b, LstmGoldenMatchesNaiveLoopsOnEveryAttributePath) {
    unsigned seed = 100;
    for (std::int64_t layers : {1, 2, 3})
        for (std::int64_t dirs : {1, 2})
            for (bool batch_first : {false, true})
                for (int bias : {0, 1, 2})
                    for (int states : {0, 1, 2, 3})  // h0, c0
                        for (std::int64_t proj : {0, 2}) {
                            Rnn r;
                            r.lstm = true;
                            r.L = layers, r.Dn = dirs, r.batch_first = batch_first, r.bias = bias;
                            r.h0 = states & 1, r.c0 = states & 2, r.P = proj;
                            r.randomize(seed++);
                            SCOPED_TRACE("layers " + std::to_string(layers) + " dirs " + std::to_string(dirs) + " batch_first " +
                                         std::to_string(batch_first) + " bias " + std::to_string(bias) + " states " +
                                         std::to_string(states) + " proj " + std::to_string(proj));
                            const auto got = evaluate("lstm", r.inputs(), r.attrs());
                            const auto want = r.naive();
                            ASSERT_EQ(got.size(), 3u);
                            for (int o = 0; o < 3; ++o) expect_values(got[static_cast<std::size_t>(o)], want[static_cast<std::size_t>(o)], 1e-12, 1e-14);
                        }
}

// ---- both recurrences -------------------------------------------------------------------

TEST(OpsLevel4L4b, SamePrecisionReferencesAreFp32CloseToTheGolden) {
    for (bool lstm : {false, true}) {
        Rnn r;
        r.lstm = lstm, r.L = 2, r.Dn = 2, r.S = 6, r.h0 = true, r.c0 = lstm, r.P = lstm ? 2 : 0;
        r.randomize(7);
        const auto golden = evaluate(r.op(), r.inputs(), r.attrs());
        const auto fp32 = evaluate(r.op(), r.inputs(), r.attrs(), true);
        for (std::size_t o = 0; o < golden.size(); ++o) {
            expect_values(fp32[o], golden[o], 1e-5, 1e-6);
            bool differs = false;
            for (std::size_t i = 0; i < golden[o].size(); ++i) differs = differs || fp32[o][i] != golden[o][i];
            EXPECT_TRUE(differs) << r.op() << " output " << o << ": the fp32 reference equals the fp64 golden bit for bit";
            for (double v : fp32[o]) EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));
        }
    }
}

TEST(OpsLevel4L4b, NanInOneSequenceStaysInItAndInfinitiesSaturate) {
    for (bool lstm : {false, true}) {
        Rnn r;
        r.lstm = lstm, r.S = 4, r.B = 3, r.I = 2, r.H = 3;
        r.randomize(11);
        r.x[static_cast<std::size_t>((1 * r.B + 1) * r.I)] = nan;  // t = 1, b = 1
        const auto out = evaluate(r.op(), r.inputs(), r.attrs());
        const std::int64_t w = r.Hs();
        for (std::int64_t t = 0; t < r.S; ++t)
            for (std::int64_t b = 0; b < r.B; ++b)
                for (std::int64_t q = 0; q < w; ++q)
                    EXPECT_EQ(std::isnan(out[0][static_cast<std::size_t>((t * r.B + b) * w + q)]), b == 1 && t >= 1)
                        << r.op() << " t " << t << " b " << b;
        // x = +-inf: every pre-activation is +-inf or NaN (products of both signs), never finite.
        Rnn s = r;
        for (auto& v : s.x) v = inf;
        const auto sat = evaluate(s.op(), s.inputs(), s.attrs());
        const auto want = s.naive();
        expect_values(sat[0], want[0], 1e-12, 1e-14);
    }
}

TEST(OpsLevel4L4b, RecurrenceShapeErrorsNameTheInput) {
    Rnn r;
    r.L = 2, r.Dn = 2;
    r.randomize(3);
    auto fails_with = [&](Rnn bad, AttrMap attrs, std::vector<In> inputs, const std::string& needle) {
        try {
            problem_for(bad.op(), inputs, attrs);
            ADD_FAILURE() << "expected an error with '" << needle << "'";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    // inputSize disagrees with x.
    AttrMap a = r.attrs();
    a["inputSize"] = i_(5);
    fails_with(r, a, r.inputs(), "inputSize = 5");
    // Too few list entries.
    auto inputs = r.inputs();
    inputs[1].shapes.pop_back();
    inputs[1].values.pop_back();
    fails_with(r, r.attrs(), inputs, "weight_ih holds 3 tensors");
    // A layer-1 weight sized for layer 0.
    inputs = r.inputs();
    inputs[1].shapes[2] = {12, r.I};
    fails_with(r, r.attrs(), inputs, "weight_ih[2] (layer 1, direction 0)");
    // bias false with bias lists.
    a = r.attrs();
    a["bias"] = b_(false);
    fails_with(r, a, r.inputs(), "bias is false");
    // One bias list only.
    inputs = r.inputs();
    inputs[4] = absent();
    fails_with(r, r.attrs(), inputs, "bias_ih is given without bias_hh");
    // h0 with the wrong batch.
    r.h0 = true;
    inputs = r.inputs();
    inputs[5].shapes[0] = {4, r.B + 1, r.H};
    fails_with(r, r.attrs(), inputs, "h0 is float32 [4, 3, 4]");
    // Mixed dtypes.
    inputs = r.inputs();
    inputs[2].dtype = DType::f16;
    fails_with(r, r.attrs(), inputs, "weight_hh[0]");
    // lstm: projSize without weight_hr, weight_hr without projSize, projSize >= hiddenSize.
    Rnn l;
    l.lstm = true;
    l.randomize(4);
    a = l.attrs();
    a["projSize"] = i_(2);
    fails_with(l, a, l.inputs(), "weight_hr is absent");
    l.P = 2;
    l.randomize(4);
    a = l.attrs();
    a["projSize"] = i_(0);
    fails_with(l, a, l.inputs(), "weight_hr is given but projSize is 0");
    a["projSize"] = i_(4);
    fails_with(l, a, l.inputs(), "projSize is 4");
    // Dropout outside [0, 1].
    a = r.attrs();
    a["dropout"] = f_(1.5);
    fails_with(r, a, r.inputs(), "dropout");
}

TEST(OpsLevel4L4b, RecurrenceOutputsFollowTheLayoutAndProjection) {
    Rnn r;
    r.lstm = true, r.L = 2, r.Dn = 2, r.batch_first = true, r.P = 3, r.H = 5, r.S = 7, r.B = 2;
    r.randomize(5);
    const Problem p = problem_for("lstm", r.inputs(), r.attrs());
    ASSERT_EQ(p.outputs.size(), 3u);
    EXPECT_EQ(p.outputs[0].tensors[0].shape, (Shape{2, 7, 6}));
    EXPECT_EQ(p.outputs[1].tensors[0].shape, (Shape{4, 2, 3}));
    EXPECT_EQ(p.outputs[2].tensors[0].shape, (Shape{4, 2, 5}));
}

TEST(OpsLevel4L4b, RecurrenceWorkModelCountsBytesMacsAndTheChain) {
    Rnn r;
    r.lstm = true, r.L = 2, r.Dn = 1, r.S = 10, r.B = 3, r.I = 6, r.H = 8, r.P = 4, r.h0 = true, r.c0 = true;
    r.randomize(6);
    const Problem p = problem_for("lstm", r.inputs(), r.attrs());
    const WorkModel w = op_named("lstm").work(p);
    // Inputs: x 180, W_ih 32x6 + 32x4, W_hh 2 x 32x4, biases 4 x 32, W_hr 2 x 4x8, h0 2x3x4, c0 2x3x8.
    const double inputs = 180 + 192 + 128 + 256 + 128 + 64 + 24 + 48;
    EXPECT_DOUBLE_EQ(w.bytes_read, 4 * inputs);
    // Outputs: y 10x3x4, hn 2x3x4, cn 2x3x8.
    EXPECT_DOUBLE_EQ(w.bytes_written, 4 * (120 + 24 + 48));
    double macs = 0;
    for (const auto& c : w.contractions) macs += c.batch * static_cast<double>(c.m * c.n * c.k);
    const RecurrenceConfig cfg = recurrence_config(p, RecurrentCell::lstm);
    EXPECT_DOUBLE_EQ(macs, cfg.total_macs());
    // Per step and sequence: 32 x (6 + 4) + 4 x 8 in layer 0, 32 x (4 + 4) + 32 in layer 1.
    EXPECT_DOUBLE_EQ(cfg.total_macs(), 30.0 * (352 + 288));
    // One direction: a wavefront over the layers, S + L - 1 steps of B H items.
    EXPECT_DOUBLE_EQ(w.chain.steps, 11);
    EXPECT_DOUBLE_EQ(w.chain.items_per_step, 24);
    ASSERT_EQ(w.chain.contractions.size(), 2u);  // the recurrent product and the projection
    EXPECT_EQ(w.chain.contractions[0].m, 3);
    EXPECT_EQ(w.chain.contractions[0].n, 32);
    EXPECT_EQ(w.chain.contractions[0].k, 4);
    // Bidirectional: layer l + 1 waits for all of layer l.
    r.Dn = 2;
    r.randomize(6);
    EXPECT_DOUBLE_EQ(op_named("lstm").work(problem_for("lstm", r.inputs(), r.attrs())).chain.steps, 20);
}

TEST(OpsLevel4L4b, RecurrenceChainBindsOnAManyCoreModelForASmallBatch) {
    // B H = 2 x 16 = 32 items per step on the H200's 132 SMs: the steps, not the total work,
    // bound T_HW; with B = 64 (1024 items) the chain no longer binds.
    Rnn r;
    r.S = 64, r.B = 2, r.I = 16, r.H = 16;
    r.randomize(8);
    const HardwareModel h200 = load_hardware_model("h200");
    const HapResult small = solve(op_named("gru").work(problem_for("gru", r.inputs(), r.attrs())), h200);
    EXPECT_TRUE(small.chain_bound);
    EXPECT_DOUBLE_EQ(small.unfloored_us, small.chain_us);
    r.B = 64;
    r.randomize(8);
    const HapResult wide = solve(op_named("gru").work(problem_for("gru", r.inputs(), r.attrs())), h200);
    EXPECT_GT(wide.chain_us, 0);
    EXPECT_LT(wide.chain_us / 64, small.chain_us / 2);  // per sequence the chain got cheaper
}

TEST(OpsLevel4L4b, RecurrenceFormulaCounts) {
    // Per hidden unit and step: gru 15 adds (9 without bias), 3 mul, 2 exp, 2 div, 1 tanh;
    // lstm 19 adds (11 without bias), 3 mul, 3 exp, 3 div, 2 tanh; fp32 without casts.
    auto count = [](const WorkModel& w, OpClass c) {
        double n = 0;
        for (const auto& v : w.formula)
            if (v.op_class == c) n += v.elements;
        return n;
    };
    for (bool lstm : {false, true})
        for (int bias : {0, 1}) {
            Rnn r;
            r.lstm = lstm, r.bias = bias, r.L = 2, r.Dn = 2;
            r.randomize(9);
            const WorkModel w = op_named(r.op()).work(problem_for(r.op(), r.inputs(), r.attrs()));
            const double units = 4.0 * r.S * r.B * r.H;
            EXPECT_DOUBLE_EQ(count(w, OpClass::add), units * (lstm ? (bias ? 19 : 11) : (bias ? 15 : 9))) << r.op();
            EXPECT_DOUBLE_EQ(count(w, OpClass::mul), units * 3);
            EXPECT_DOUBLE_EQ(count(w, OpClass::exp), units * (lstm ? 3 : 2));
            EXPECT_DOUBLE_EQ(count(w, OpClass::div), units * (lstm ? 3 : 2));
            EXPECT_DOUBLE_EQ(count(w, OpClass::tanh), units * (lstm ? 2 : 1));
            EXPECT_DOUBLE_EQ(count(w, OpClass::cast), 0);
        }
}

// ---- grouped_matmul_swiglu_quant --------------------------------------------------------

AttrMap groups(std::vector<std::int64_t> ends) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(ends);
    return {{"group_list", a}};
}

// y_scale and y of one row of act values, as the golden defines them.
std::pair<double, std::vector<double>> quantized(const std::vector<double>& act) {
    double m = 0;
    for (double v : act) m = std::isnan(v) || std::isnan(m) ? nan : std::max(m, std::fabs(v));
    const double a = std::isnan(m) ? m : std::max(m, std::ldexp(1.0, -126));
    const double scale = static_cast<double>(static_cast<float>(a / 127));
    std::vector<double> y;
    for (double v : act) {
        const double q = v / scale;
        y.push_back(std::isnan(q) ? 0 : std::clamp(std::nearbyint(q), -128.0, 127.0));
    }
    return {scale, y};
}

TEST(OpsLevel4L4b, GroupedMatmulSwigluQuantByHandWithAnEmptyGroup) {
    // M = 3 rows, K = 2, N = 4, E = 3 experts with rows [0, 1) -> expert 0, none -> expert 1,
    // [1, 3) -> expert 2.
    const std::vector<double> x = {1, -2, 3, 4, -5, 6};
    std::vector<double> w(3 * 2 * 4);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(static_cast<int>(i % 7) - 3);
    const std::vector<double> ws = {0.5, 0.25, 0.125, 1, 9, 9, 9, 9, 0.1, 0.2, 0.3, 0.4};
    const std::vector<double> xs = {0.01, 0.02, 0.03};
    const auto out = evaluate("grouped_matmul_swiglu_quant",
                              {one({3, 2}, x, DType::i8), one({3, 2, 4}, w, DType::i8), one({3, 4}, ws), one({3}, xs)},
                              groups({1, 1, 3}));
    std::vector<double> y, y_scale;
    for (int r = 0; r < 3; ++r) {
        const int g = r == 0 ? 0 : 2;
        double deq[4];
        for (int c = 0; c < 4; ++c) {
            double mm = 0;
            for (int k = 0; k < 2; ++k) mm += x[static_cast<std::size_t>(r * 2 + k)] * w[static_cast<std::size_t>(g * 8 + k * 4 + c)];
            deq[c] = mm * xs[static_cast<std::size_t>(r)] * ws[static_cast<std::size_t>(g * 4 + c)];
        }
        std::vector<double> act;
        for (int j = 0; j < 2; ++j) act.push_back(deq[j] / (1 + std::exp(-deq[j])) * deq[2 + j]);
        const auto [scale, q] = quantized(act);
        y_scale.push_back(scale);
        y.insert(y.end(), q.begin(), q.end());
    }
    expect_values(out[0], y, 0, 0);
    expect_values(out[1], y_scale, 0, 0);
    // The left half is activated: swapping the halves of the weights changes y.
    for (double v : out[1]) EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));
}

TEST(OpsLevel4L4b, GroupedMatmulSwigluQuantSpecialRows) {
    // Row 0: x_scale NaN -> y_scale NaN, y 0. Row 1: x_scale 0 -> act 0, y_scale 2^-126 / 127
    // (rounded to fp32, a subnormal), y 0. Row 2: +inf -> deq +-inf or NaN (mm 0), y 0.
    const std::vector<double> x = {1, 2, 3, 1, 1, 1};
    const std::vector<double> w = {1, 2, -1, 3, 0, 1, 2, -2};
    const auto out = evaluate("grouped_matmul_swiglu_quant",
                              {one({3, 2}, x, DType::i8), one({1, 2, 4}, w, DType::i8), one({1, 4}, {1, 1, 1, 1}),
                               one({3}, {nan, 0, inf})},
                              groups({3}));
    EXPECT_TRUE(std::isnan(out[1][0]));
    EXPECT_EQ(out[1][1], static_cast<double>(static_cast<float>(std::ldexp(1.0, -126) / 127)));
    EXPECT_GT(out[1][1], 0);
    EXPECT_TRUE(std::isnan(out[1][2]) || std::isinf(out[1][2]));
    expect_values(out[0], std::vector<double>(6, 0.0), 0, 0);
}

TEST(OpsLevel4L4b, GroupedMatmulSwigluQuantRoundsHalfToEven) {
    // One row, K = 1, x = 1, x_scale 1: deq = weight * weight_scale. Left halves of 40 and
    // more have SiLU(t) = t in fp64, so act = [127, 63.5, 62.5] exactly: y_scale = 1 and
    // y = [127, 64, 62] (ties to even).
    const auto out = evaluate("grouped_matmul_swiglu_quant",
                              {one({1, 1}, {1}, DType::i8), one({1, 1, 6}, {127, 127, 125, 1, 1, 1}, DType::i8),
                               one({1, 6}, {1, 0.5, 0.5, 1, 1, 1}), one({1}, {1})},
                              groups({1}));
    expect_values(out[0], {127, 64, 62}, 0, 0);
    expect_values(out[1], {1}, 0, 0);
}

TEST(OpsLevel4L4b, GroupedMatmulSwigluQuantShapeAndGroupErrors) {
    const In x = one({4, 2}, std::vector<double>(8, 1), DType::i8);
    const In w = one({2, 2, 6}, std::vector<double>(24, 1), DType::i8);
    const In ws = one({2, 6}, std::vector<double>(12, 1));
    const In xs = one({4}, std::vector<double>(4, 1));
    auto fails_with = [&](const std::vector<In>& inputs, AttrMap attrs, const std::string& needle) {
        try {
            problem_for("grouped_matmul_swiglu_quant", inputs, attrs);
            ADD_FAILURE() << "expected an error with '" << needle << "'";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    EXPECT_NO_THROW(problem_for("grouped_matmul_swiglu_quant", {x, w, ws, xs}, groups({2, 4})));
    fails_with({x, w, ws, xs}, groups({2, 3}), "ends at row 3");
    fails_with({x, w, ws, xs}, groups({3, 2}), "below the entry before it");
    fails_with({x, w, ws, xs}, groups({4}), "group_list has 1 entries");
    fails_with({x, one({2, 2, 5}, std::vector<double>(20, 1), DType::i8), ws, xs}, groups({2, 4}), "N even");
    fails_with({x, one({2, 3, 6}, std::vector<double>(36, 1), DType::i8), ws, xs}, groups({2, 4}), "K = 2");
    fails_with({x, w, one({2, 5}, std::vector<double>(10, 1)), xs}, groups({2, 4}), "weight_scale is float32 [2, 5]");
    fails_with({x, w, ws, one({3}, {1, 1, 1})}, groups({2, 4}), "x_scale is float32 [3]");
    fails_with({one({4, 2}, std::vector<double>(8, 1), DType::f32), w, ws, xs}, groups({2, 4}), "expected int8 [M, K]");
}

TEST(OpsLevel4L4b, GroupedMatmulSwigluQuantWorkModelSkipsEmptyExperts) {
    const In x = one({5, 3}, std::vector<double>(15, 1), DType::i8);
    const In w = one({3, 3, 8}, std::vector<double>(72, 1), DType::i8);
    const In ws = one({3, 8}, std::vector<double>(24, 1));
    const In xs = one({5}, std::vector<double>(5, 1));
    const WorkModel wm = op_named("grouped_matmul_swiglu_quant").work(problem_for("grouped_matmul_swiglu_quant", {x, w, ws, xs}, groups({2, 2, 5})));
    // x 15 + x_scale 20 + two experts' weights 2 x 24 and scales 2 x 32; y 5 x 4 + y_scale 20.
    EXPECT_DOUBLE_EQ(wm.bytes_read, 15 + 20 + 48 + 64);
    EXPECT_DOUBLE_EQ(wm.bytes_written, 20 + 20);
    ASSERT_EQ(wm.contractions.size(), 2u);
    EXPECT_EQ(wm.contractions[0].m, 2);
    EXPECT_EQ(wm.contractions[1].m, 3);
    EXPECT_EQ(wm.contractions[0].dtype, DType::i8);
    double formula = 0;
    for (const auto& v : wm.formula) formula += v.elements;
    EXPECT_DOUBLE_EQ(formula, 20.0 * 16);  // 3 cast + 6 mul + 2 add + exp + 2 div + abs + cmp per activation
}

// ---- case sampling ----------------------------------------------------------------------

std::vector<CaseSpec> generated_cases(const std::string& name, int count, std::uint64_t seed) {
    const Proto proto = proto_for(name);
    const auto cases = generate_cases(op_named(name), proto, profile_by_name("cpu"), seed, count);
    EXPECT_EQ(cases.size(), static_cast<std::size_t>(count));
    for (const auto& c : cases) EXPECT_NO_THROW(resolve_problem(proto, op_named(name), c)) << name << " case " << c.case_id;
    const auto problems = check_case_rules(cases, proto, op_named(name), profile_by_name("cpu"));
    EXPECT_TRUE(problems.empty()) << problems.front();
    return cases;
}

TEST(OpsLevel4L4b, RecurrenceCasesCoverEveryAttributeWithinTheMacCap) {
    for (const std::string name : {"gru", "lstm"}) {
        const Proto proto = proto_for(name);
        for (std::uint64_t seed : {2026u, 77u}) {
            std::set<std::string> seen;
            for (const auto& c : generated_cases(name, 40, seed)) {
                const Problem p = resolve_problem(proto, op_named(name), c);
                const RecurrenceConfig cfg = recurrence_config(p, name == "gru" ? RecurrentCell::gru : RecurrentCell::lstm);
                EXPECT_LE(cfg.total_macs(), recurrence_macs_cap) << name << " case " << c.case_id;
                seen.insert("layers" + std::to_string(cfg.layers));
                seen.insert("dirs" + std::to_string(cfg.directions));
                seen.insert(std::string("batch_first") + (cfg.batch_first ? "1" : "0"));
                seen.insert(std::string("bias") + (!cfg.bias ? "false" : cfg.bias_given ? "lists" : "zeros"));
                seen.insert(std::string("h0") + (cfg.h0_given ? "1" : "0"));
                seen.insert("dtype" + std::string(dtype_name(cfg.dtype)));
                if (p.attr_float("dropout") > 0) seen.insert("dropout");
                if (name == "lstm") {
                    seen.insert(std::string("c0") + (cfg.c0_given ? "1" : "0"));
                    seen.insert(std::string("proj") + (cfg.proj > 0 ? "1" : "0"));
                    if (cfg.proj > 0 && cfg.layers > 1) seen.insert("proj-multilayer");
                }
            }
            std::set<std::string> want = {"layers1", "layers2", "layers3", "dirs1", "dirs2", "batch_first0", "batch_first1",
                                          "biasfalse", "biaslists", "biaszeros", "h00", "h01", "dtypefloat32",
                                          "dtypefloat16", "dtypebfloat16", "dropout"};
            if (name == "lstm") want.insert({"c00", "c01", "proj0", "proj1", "proj-multilayer"});
            for (const auto& w : want) EXPECT_TRUE(seen.count(w)) << name << " seed " << seed << ": no case with " << w;
        }
    }
}

TEST(OpsLevel4L4b, GroupedMatmulSwigluQuantCasesCoverExpertsAndEmptyGroups) {
    std::set<std::int64_t> experts;
    bool empty = false, skewed = false;
    for (const auto& c : generated_cases("grouped_matmul_swiglu_quant", 40, 2026)) {
        const auto& ends = c.attrs.at("group_list").ints;
        experts.insert(static_cast<std::int64_t>(ends.size()));
        std::int64_t prev = 0, lo = 1 << 30, hi = 0;
        for (auto e : ends) {
            empty = empty || e == prev;
            lo = std::min(lo, e - prev), hi = std::max(hi, e - prev);
            prev = e;
        }
        skewed = skewed || (ends.size() > 1 && lo > 0 && hi > 3 * lo);
        const auto& x = c.inputs.at(0).shapes.at(0);
        const auto& w = c.inputs.at(1).shapes.at(0);
        EXPECT_LE(static_cast<double>(x[0] * x[1]) * static_cast<double>(w[2]), 1.5e8) << "case " << c.case_id;
    }
    EXPECT_EQ(experts, (std::set<std::int64_t>{1, 2, 4, 8, 16}));
    EXPECT_TRUE(empty);
    EXPECT_TRUE(skewed);
}

}  // namespace
}  // namespace hb
