// The baselines of gru, lstm (oneDNN's RNN primitives) and grouped_matmul_swiglu_quant (oneDNN
// int8 matmul and a C++ epilogue): each shared object is loaded the way the worker loads a
// kernel, run on small cases of every dtype, layout, direction, layer count, bias form,
// initial state, projection and group distribution, with special values, and compared with
// the fp64 golden. The recurrences are held to much less than the gate's 0.5 (ten times
// their 0.05 threshold), so that a gate shuffled the wrong way or a bias dropped shows. The
// ctest entries baselines_onednn_max_isa_* rerun these with oneDNN capped at AVX2,
// AVX512_CORE and AVX512_CORE_BF16 (fp32 RNN there, bf16 RNN only from AVX512_CORE, int8
// through fp32 without VNNI).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

const ValueRange inf_range{-INFINITY, INFINITY};
const ValueRange nan_range{NAN, NAN};

// fp32 recurrences agree with the fp64 golden to ~1e-6; fp16 outputs round at 2^-11; bf16
// oneDNN keeps h in bf16 between steps and multiplies bf16 operands (2^-9 a step, damped by
// the gates: up to ~0.12 of a small output measured). A gate read from the wrong block or a
// bias dropped is off by O(1).
CheckOptions recurrence_bound() {
    CheckOptions options;
    options.denominator_floor = 1e-2;
    options.max_rel = [](DType t) { return t == DType::f32 ? 1e-4 : t == DType::f16 ? 5e-3 : 0.25; };
    return options;
}

struct Recurrence {
    bool lstm = false;
    DType dtype = DType::f32;
    std::int64_t S = 7, B = 3, I = 5, H = 6, P = 0, L = 1, Dn = 1;
    bool batch_first = false;
    int bias = 1;  // 0 false, 1 lists, 2 true without lists
    bool h0 = false, c0 = false;
    ValueRange x_range{-1, 1};

    std::int64_t G() const { return lstm ? 4 : 3; }
    std::int64_t Hs() const { return P > 0 ? P : H; }

    std::vector<BaselineInput> inputs() const {
        const ValueRange w{-0.5, 0.5};
        std::vector<Shape> ih, hh, b, hr;
        for (std::int64_t k = 0; k < L * Dn; ++k) {
            ih.push_back({G() * H, k / Dn == 0 ? I : Dn * Hs()});
            hh.push_back({G() * H, Hs()});
            b.push_back({G() * H});
            hr.push_back({P, H});
        }
        std::vector<BaselineInput> in = {
            BaselineInput(dtype, batch_first ? Shape{B, S, I} : Shape{S, B, I}, x_range),
            list_input(dtype, ih, w),
            list_input(dtype, hh, w),
            bias == 1 ? list_input(dtype, b, w) : absent_input(),
            bias == 1 ? list_input(dtype, b, w) : absent_input(),
        };
        if (lstm) in.push_back(P > 0 ? list_input(dtype, hr, w) : absent_input());
        in.push_back(h0 ? BaselineInput(dtype, {L * Dn, B, Hs()}, x_range) : absent_input());
        if (lstm) in.push_back(c0 ? BaselineInput(dtype, {L * Dn, B, H}, x_range) : absent_input());
        return in;
    }

    AttrMap attrs() const {
        AttrMap a = {{"inputSize", AttrValue::of_int(I)},          {"hiddenSize", AttrValue::of_int(H)},
                     {"numLayers", AttrValue::of_int(L)},          {"bias", AttrValue::of_bool(bias != 0)},
                     {"batchFirst", AttrValue::of_bool(batch_first)}, {"dropout", AttrValue::of_float(0)},
                     {"bidirectional", AttrValue::of_bool(Dn == 2)}};
        if (lstm) a["projSize"] = AttrValue::of_int(P);
        return a;
    }
};

void check(const BaselineLibrary& baseline, const Recurrence& r, CheckOptions options = recurrence_bound()) {
    check_baseline(baseline, r.inputs(), r.attrs(), options);
}

TEST(BaselinesLevel4L4b, GruMatchesGoldenOnEveryPath) {
    const BaselineLibrary baseline("gru");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f32, DType::f16, DType::bf16})
        for (std::int64_t layers : {1, 2})
            for (std::int64_t dirs : {1, 2})
                for (int variant = 0; variant < 3; ++variant) {
                    Recurrence r;
                    r.dtype = dtype, r.L = layers, r.Dn = dirs;
                    r.batch_first = variant == 1;
                    r.bias = variant;  // 0: none, 1: lists, 2: zeros
                    r.h0 = variant != 0;
                    check(baseline, r);
                }
    Recurrence big;  // gate blocks wider than a vector, odd sizes
    big.S = 19, big.B = 5, big.I = 37, big.H = 33, big.L = 3;
    check(baseline, big);
}

TEST(BaselinesLevel4L4b, LstmMatchesGoldenOnEveryPath) {
    const BaselineLibrary baseline("lstm");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f32, DType::f16, DType::bf16})
        for (std::int64_t layers : {1, 2})
            for (std::int64_t dirs : {1, 2})
                for (int variant = 0; variant < 4; ++variant) {
                    Recurrence r;
                    r.lstm = true;
                    r.dtype = dtype, r.L = layers, r.Dn = dirs;
                    r.batch_first = variant == 1;
                    r.bias = variant % 3;
                    r.h0 = variant == 1 || variant == 3;
                    r.c0 = variant >= 2;
                    r.P = variant == 3 ? 4 : 0;
                    check(baseline, r);
                }
    Recurrence big;
    big.lstm = true, big.S = 17, big.B = 4, big.I = 29, big.H = 41, big.L = 2, big.P = 7, big.h0 = true, big.c0 = true;
    check(baseline, big);
}

TEST(BaselinesLevel4L4b, RecurrencesPropagateSpecialValues) {
    for (const std::string op : {"gru", "lstm"}) {
        const BaselineLibrary baseline(op);
        ASSERT_TRUE(baseline.error().empty()) << baseline.error();
        for (DType dtype : {DType::f32, DType::f16, DType::bf16})
            for (ValueRange range : {nan_range, inf_range, ValueRange{0, 0}, ValueRange{-1000, 1000}})
                for (bool batch_first : {false, true}) {
                    Recurrence r;
                    r.lstm = op == "lstm";
                    r.dtype = dtype, r.x_range = range, r.batch_first = batch_first, r.Dn = 2, r.h0 = true;
                    check(baseline, r);
                }
        // The type boundary of each dtype (op.boundary_range): saturated gates.
        Recurrence r;
        r.lstm = op == "lstm";
        r.x_range = {-1e30, 1e30};
        check(baseline, r);
        r.dtype = DType::f16;
        r.x_range = {-65504, 65504};
        check(baseline, r);
    }
}

TEST(BaselinesLevel4L4b, GroupedMatmulSwigluQuantMatchesGolden) {
    const BaselineLibrary baseline("grouped_matmul_swiglu_quant");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto groups = [](std::vector<std::int64_t> ends) {
        AttrValue a;
        a.type = AttrType::int_list;
        a.ints = std::move(ends);
        return AttrMap{{"group_list", a}};
    };
    const auto run = [&](std::int64_t m, std::int64_t k, std::int64_t n, std::vector<std::int64_t> ends, ValueRange x,
                         ValueRange xs) {
        const auto e = static_cast<std::int64_t>(ends.size());
        check_baseline(baseline,
                       {{DType::i8, {m, k}, x}, {DType::i8, {e, k, n}, {-128, 127}}, {DType::f32, {e, n}, {1e-3, 1e-2}},
                        {DType::f32, {m}, xs}},
                       groups(std::move(ends)));
    };
    run(37, 64, 30, {37}, {-128, 127}, {1e-3, 1e-2});
    run(50, 301, 126, {10, 10, 30, 50}, {-128, 127}, {1e-2, 1e-1});  // an empty group
    run(64, 129, 62, {0, 5, 64, 64}, {-32, 32}, {-1, 1});               // empty first and last
    run(9, 1000, 18, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {-128, 127}, {1e-4, 1e-3});  // one row per expert
    run(40, 64, 34, {20, 40}, {-8, 8}, nan_range);
    run(40, 64, 34, {13, 40}, {-128, 127}, inf_range);
    run(40, 64, 34, {40, 40}, {-128, 127}, {0, 0});  // y_scale = 2^-126 / 127
}

}  // namespace
}  // namespace hb::test
