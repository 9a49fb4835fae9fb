// The baselines of add_rms_norm_dynamic_quant, dequant_swiglu_quant, engram_gate_fusion,
// mhc_sinkhorn, moe_finalize_routing and moe_gating_top_k_softmax: each shared object is
// loaded the way the worker loads a kernel, run on small cases of every dtype, attribute
// path and optional-input combination, with special values, and compared with the fp64
// golden at the precision gate's max-error bound (int8 within the proto's 1, indices exact).
// The ctest entries baselines_onednn_max_isa_* rerun these with oneDNN capped at AVX2,
// AVX512_CORE and AVX512_CORE_BF16 (the gating baseline's softmax is oneDNN's).
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

TEST(BaselinesLevel3L3c, AddRmsNormDynamicQuantMatchesGolden) {
    const BaselineLibrary baseline("add_rms_norm_dynamic_quant");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto eps = [](double e) { return AttrMap{{"epsilon", AttrValue::of_float(e)}}; };
    for (DType dtype : {DType::f16, DType::bf16}) {
        const auto check = [&](const Shape& x, ValueRange range, ValueRange gamma, const AttrMap& attrs) {
            check_baseline(baseline, {{dtype, x, range}, {dtype, x, range}, {dtype, {x.back()}, gamma}}, attrs);
        };
        check({7, 129}, {-3, 3}, {-1, 1}, eps(1e-6));
        check({2, 3, 1023}, {-100, 100}, {-1, 1}, eps(1e-3));
        check({5, 64}, {0, 0}, {-1, 1}, eps(1e-5));  // zero rows: scale 1e-12 / 127
        check({40, 33}, inf_range, inf_range, eps(1e-6));
        check({9, 40}, nan_range, {-1, 1}, eps(1e-6));
    }
    check_baseline(baseline, {{DType::f16, {3, 200}, {-65504, 65504}}, {DType::f16, {3, 200}, {-65504, 65504}},
                              {DType::f16, {200}, {-1, 1}}});
}

TEST(BaselinesLevel3L3c, DequantSwigluQuantMatchesGoldenOnBothPaths) {
    const BaselineLibrary baseline("dequant_swiglu_quant");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto left = [](bool b) { return AttrMap{{"activate_left", AttrValue::of_bool(b)}}; };
    for (bool activate_left : {false, true}) {
        for (DType dtype : {DType::f16, DType::bf16}) {
            check_baseline(baseline, {{dtype, {9, 130}, {-1, 1}}, absent_input(), absent_input(), absent_input()},
                           left(activate_left));
            check_baseline(baseline,
                           {{dtype, {4, 258}, {-10, 10}}, absent_input(), absent_input(), {DType::f32, {1, 129}, {-1, 1}}},
                           left(activate_left));
            check_baseline(baseline, {{dtype, {6, 66}, nan_range}, absent_input(), absent_input(), absent_input()},
                           left(activate_left));
        }
        check_baseline(baseline,
                       {{DType::i32, {11, 70}, {-128, 127}}, {DType::f32, {1, 70}, {-0.1, 0.1}},
                        {DType::f32, {11}, {-0.5, 0.5}}, {DType::f32, {1, 35}, {-1, 1}}},
                       left(activate_left));
        check_baseline(baseline,
                       {{DType::i32, {40, 18}, {-128, 127}}, {DType::f32, {1, 18}, {-0.1, 0.1}},
                        {DType::f32, {40}, inf_range}, absent_input()},
                       left(activate_left));
        check_baseline(baseline,
                       {{DType::i32, {5, 18}, {-128, 127}}, {DType::f32, {1, 18}, {-0.1, 0.1}}, {DType::f32, {5}, {0, 0}},
                        absent_input()},
                       left(activate_left));  // zero rows: scale 1e-12
    }
}

TEST(BaselinesLevel3L3c, MhcSinkhornMatchesGolden) {
    const BaselineLibrary baseline("mhc_sinkhorn");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto attrs = [](std::int64_t it, double eps) {
        return AttrMap{{"iter_step", AttrValue::of_int(it)}, {"eps", AttrValue::of_float(eps)}};
    };
    check_baseline(baseline, {{DType::f32, {37, 4, 4}, {-1, 1}}}, attrs(20, 1e-6));
    check_baseline(baseline, {{DType::f32, {5, 16, 16}, {-3, 3}}}, attrs(40, 1e-8));
    check_baseline(baseline, {{DType::f32, {300, 2, 2}, {-1, 1}}}, attrs(1, 1e-7));
    check_baseline(baseline, {{DType::f32, {20, 3, 3}, {-100, 100}}}, attrs(5, 1e-6));
    check_baseline(baseline, {{DType::f32, {40, 4, 4}, inf_range}}, attrs(20, 1e-6));
    check_baseline(baseline, {{DType::f32, {40, 2, 2}, nan_range}}, attrs(3, 1e-6));
}

TEST(BaselinesLevel3L3c, MoeFinalizeRoutingMatchesGoldenInEveryModeAndCombination) {
    const BaselineLibrary baseline("moe_finalize_routing");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const std::int64_t rows = 37, k = 3, h = 65, e = 8;
    for (std::int64_t mode : {0, 1, 2, 3}) {
        const AttrMap attrs{{"drop_pad_mode", AttrValue::of_int(mode)}};
        const bool pad = mode == 1 || mode == 3;
        for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
            const Shape r_shape = pad ? Shape{e, 12, h} : Shape{rows * k, h};
            const BaselineInput expanded(dtype, r_shape, {-2, 2}), idx(DType::i32, {rows * k}, {0, 1});
            const BaselineInput skip(dtype, {rows, h}, {-1, 1}), bias(dtype, {e, h}, {-1, 1});
            const BaselineInput scales(dtype, {rows, k}, {0, 1}), experts(DType::i32, {rows, k}, {0, e - 1});
            check_baseline(baseline, {expanded, idx, skip, skip, bias, scales, experts}, attrs);
            check_baseline(baseline, {expanded, idx, skip, absent_input(), absent_input(), scales, absent_input()}, attrs);
            check_baseline(baseline,
                           {expanded, idx, absent_input(), absent_input(), bias, scales, experts}, attrs);
            if (dtype != DType::f32)
                check_baseline(baseline,
                               {expanded, idx, skip, skip, bias, BaselineInput(DType::f32, {rows, k}, {0, 1}), experts},
                               attrs);
        }
        // Without scales K = 1; special values in the expert rows.
        const Shape r1 = pad ? Shape{e, 6, h} : Shape{rows, h};
        check_baseline(baseline,
                       {{DType::f32, r1, inf_range}, {DType::i32, {rows}, {0, 1}}, {DType::f32, {rows, h}, {-1, 1}},
                        absent_input(), {DType::f32, {e, h}, {-1, 1}}, absent_input(), {DType::i32, {rows, 1}, {0, e - 1}}},
                       attrs);
        check_baseline(baseline,
                       {{DType::bf16, r1, nan_range}, {DType::i32, {rows}, {0, 1}}, absent_input(), absent_input(),
                        absent_input(), absent_input(), absent_input()},
                       attrs);
    }
}

TEST(BaselinesLevel3L3c, MoeGatingTopKSoftmaxMatchesGoldenWithExactIndices) {
    const BaselineLibrary baseline("moe_gating_top_k_softmax");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto top = [](std::int64_t k) { return AttrMap{{"k", AttrValue::of_int(k)}}; };
    for (DType dtype : {DType::f16, DType::bf16, DType::f32}) {
        check_baseline(baseline, {{dtype, {50, 16}, {-1, 1}}, absent_input()}, top(2));
        check_baseline(baseline, {{dtype, {3, 20, 64}, {-10, 10}}, {DType::boolean, {3, 20}, {0, 1}}}, top(8));
        check_baseline(baseline, {{dtype, {9, 1009}, {-100, 100}}, absent_input()}, top(128));
        check_baseline(baseline, {{dtype, {30, 32}, {0, 0}}, absent_input()}, top(5));  // all tied: lowest indices
        check_baseline(baseline, {{dtype, {40, 8}, inf_range}, {DType::boolean, {40}, {0, 1}}}, top(3));
        check_baseline(baseline, {{dtype, {40, 8}, nan_range}, absent_input()}, top(4));
        check_baseline(baseline, {{dtype, {16, 4}, {-65504, 65504}}, absent_input()}, top(4));
    }
    // Ties between distinct float32 logits only an fp32 ranking of probabilities would make.
    check_baseline(baseline, {{DType::f32, {20, 256}, {-0.01, 0.01}}, absent_input()}, top(64));
}

TEST(BaselinesLevel3L3c, EngramGateFusionMatchesGoldenWithAndWithoutState) {
    const BaselineLibrary baseline("engram_gate_fusion");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto attrs = [](std::int64_t heads, std::int64_t dim, std::int64_t taps, std::int64_t dilation) {
        return AttrMap{{"hc_mult", AttrValue::of_int(heads)},    {"hidden_size", AttrValue::of_int(dim)},
                       {"kernel_size", AttrValue::of_int(taps)}, {"dilation", AttrValue::of_int(dilation)},
                       {"norm_eps", AttrValue::of_float(1e-5)}};
    };
    // output = vg + SiLU(conv) cancels to near 0 in places, where bf16's relative error grows
    // without bound (the gate's fallback accepts it): a floor on the denominator.
    const CheckOptions options = interpolating();
    struct Shape5 {
        std::int64_t b, l, hc, d, taps, dilation;
        bool state;
        ValueRange range;
    };
    for (const Shape5& s : {Shape5{2, 13, 4, 64, 4, 3, false, {-0.1, 0.1}}, Shape5{1, 1, 2, 129, 4, 3, true, {-1, 1}},
                            Shape5{3, 5, 2, 40, 3, 2, true, {-2, 2}}, Shape5{1, 30, 8, 33, 8, 1, false, {-10, 10}},
                            Shape5{2, 9, 2, 16, 2, 1, false, inf_range}, Shape5{1, 4, 2, 16, 4, 1, true, nan_range},
                            Shape5{2, 6, 2, 32, 4, 3, false, {0, 0}}}) {
        const std::int64_t c = s.hc * s.d, state = (s.taps - 1) * s.dilation;
        check_baseline(baseline,
                       {{DType::bf16, {s.b, s.l, s.hc, s.d}, s.range},
                        {DType::bf16, {s.b, s.l, s.hc, s.d}, s.range},
                        {DType::bf16, {s.b, s.l, s.d}, s.range},
                        {DType::f32, {s.hc, s.d}, {-1, 1}},
                        {DType::f32, {s.hc, s.d}, {-1, 1}},
                        {DType::f32, {s.hc, s.d}, {-1, 1}},
                        {DType::f32, {c, 1, s.taps}, {-0.5, 0.5}},
                        s.state ? BaselineInput(DType::bf16, {s.b, c, state}, s.range) : absent_input()},
                       attrs(s.hc, s.d, s.taps, s.dilation), options);
    }
}

}  // namespace
}  // namespace hb::test
