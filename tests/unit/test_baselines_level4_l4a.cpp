// The baselines of gqa, mha, mla, mla_prolog and sparse_flash_attention: each shared object is
// loaded the way the worker loads a kernel, run on small cases of both dtypes, every attribute
// path (masks with S < Skv and S > Skv, default and explicit scales, GQA groups from MHA to
// MQA, both layouts, sparse lists with causal drops) and special values, and compared with the
// fp64 golden at the precision gate's max-error bound. Attention outputs are weighted means of
// values that cancel towards 0 in places, where fp32 arithmetic's relative error grows without
// bound (the gate's fallback accepts it): the relative error's denominator has a floor of 1% of
// the range. The ctest entries baselines_onednn_max_isa_* rerun these with oneDNN capped at AVX2
// (no bf16 matmul: fp32 copies), AVX512_CORE and AVX512_CORE_BF16.
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

CheckOptions weighted_means(ValueRange range) {
    CheckOptions options;
    const double magnitude = std::isfinite(range.lo) && std::isfinite(range.hi) ? std::max(std::fabs(range.lo), std::fabs(range.hi)) : 1;
    options.denominator_floor = 1e-2 * std::max(magnitude, 1e-3);
    return options;
}

AttrMap attention(double scale, bool causal) {
    return {{"scaleValue", AttrValue::of_float(scale)}, {"is_causal", AttrValue::of_bool(causal)}};
}

struct Dense {
    std::int64_t b, s, skv, nq, nkv, d;
};

void check_dense(const BaselineLibrary& baseline, DType dtype, const Dense& c, ValueRange range, const AttrMap& attrs) {
    check_baseline(baseline,
                   {{dtype, {c.b, c.s, c.nq, c.d}, range}, {dtype, {c.b, c.skv, c.nkv, c.d}, range}, {dtype, {c.b, c.skv, c.nkv, c.d}, range}},
                   attrs, weighted_means(range));
}

TEST(BaselinesLevel4L4a, MhaMatchesGoldenOnEveryMaskScaleAndSpecialValue) {
    const BaselineLibrary baseline("mha");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f16, DType::bf16}) {
        check_dense(baseline, dtype, {2, 17, 17, 3, 3, 64}, {-1, 1}, attention(-1, true));    // causal prefill
        check_dense(baseline, dtype, {3, 1, 203, 4, 4, 128}, {-1, 1}, attention(-1, false));  // decode
        check_dense(baseline, dtype, {2, 4, 37, 2, 2, 57}, {-3, 3}, attention(0.125, true));  // MTP, explicit scale
        check_dense(baseline, dtype, {1, 40, 9, 2, 2, 80}, {-1, 1}, attention(0, true));      // S > Skv: zero rows
        check_dense(baseline, dtype, {1, 30, 11, 2, 2, 32}, {-10, 10}, attention(-1, false));  // cross S > Skv
        check_dense(baseline, dtype, {1, 5, 16, 2, 2, 256}, {0, 0}, attention(-1, true));
        check_dense(baseline, dtype, {2, 6, 13, 2, 2, 24}, inf_range, attention(-1, true));
        check_dense(baseline, dtype, {2, 6, 13, 2, 2, 24}, nan_range, attention(-1, false));
        check_dense(baseline, dtype, {1, 7, 21, 2, 2, 16}, {-1000, 1000}, attention(-1, false));
    }
    check_dense(baseline, DType::f16, {1, 8, 8, 2, 2, 64}, {-65504, 65504}, attention(-1, true));
    check_dense(baseline, DType::bf16, {1, 8, 8, 2, 2, 64}, {-1e16, 1e16}, attention(-1, true));
}

TEST(BaselinesLevel4L4a, GqaMatchesGoldenFromMhaToMqa) {
    const BaselineLibrary baseline("gqa");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f16, DType::bf16})
        for (std::int64_t nkv : {8, 4, 2, 1}) {
            check_dense(baseline, dtype, {2, 9, 9, 8, nkv, 64}, {-1, 1}, attention(-1, true));
            check_dense(baseline, dtype, {3, 1, 150, 8, nkv, 128}, {-2, 2}, attention(0.08838, false));
            check_dense(baseline, dtype, {1, 12, 5, 8, nkv, 40}, {-1, 1}, attention(-1, true));  // S > Skv
        }
    check_dense(baseline, DType::bf16, {2, 6, 13, 4, 2, 24}, inf_range, attention(-1, true));
    check_dense(baseline, DType::f16, {2, 6, 13, 4, 1, 24}, nan_range, attention(-1, true));
}

TEST(BaselinesLevel4L4a, MlaMatchesGoldenInBothLayouts) {
    const BaselineLibrary baseline("mla");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    auto check = [&](DType dtype, bool bsnd, std::int64_t b, std::int64_t s, std::int64_t skv, std::int64_t nq, std::int64_t nkv,
                     std::int64_t dn, std::int64_t dr, ValueRange range, double scale, bool causal) {
        auto shape = [&](std::int64_t seq, std::int64_t heads, std::int64_t dim) {
            return bsnd ? Shape{b, seq, heads, dim} : Shape{b, heads, seq, dim};
        };
        const AttrMap attrs{{"numKVHeads", AttrValue::of_int(nkv)},
                            {"scaleValue", AttrValue::of_float(scale)},
                            {"inputLayout", AttrValue::of_string(bsnd ? "BSND" : "BNSD")},
                            {"is_causal", AttrValue::of_bool(causal)}};
        check_baseline(baseline,
                       {{dtype, shape(s, nq, dn), range}, {dtype, shape(s, nq, dr), range}, {dtype, shape(skv, nkv, dn), range},
                        {dtype, shape(skv, nkv, dr), range}, {dtype, shape(skv, nkv, dn), range}},
                       attrs, weighted_means(range));
    };
    for (DType dtype : {DType::f16, DType::bf16})
        for (bool bsnd : {true, false}) {
            check(dtype, bsnd, 2, 11, 11, 4, 1, 128, 64, {-1, 1}, -1, true);
            check(dtype, bsnd, 3, 1, 97, 8, 1, 192, 32, {-1, 1}, 0.0625, false);
            check(dtype, bsnd, 1, 20, 6, 4, 2, 96, 32, {-2, 2}, 0, true);  // S > Skv
            check(dtype, bsnd, 1, 6, 10, 4, 4, 64, 32, inf_range, -1, true);
            check(dtype, bsnd, 1, 6, 10, 4, 1, 64, 32, nan_range, -1, false);
        }
}

TEST(BaselinesLevel4L4a, SparseFlashAttentionMatchesGoldenWithCausalDropsAndBothLayouts) {
    const BaselineLibrary baseline("sparse_flash_attention");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    auto check = [&](DType dtype, bool bsnd, std::int64_t b, std::int64_t s1, std::int64_t s2, std::int64_t n1, std::int64_t n2,
                     std::int64_t dk, std::int64_t dv, std::int64_t top_k, ValueRange range, bool causal) {
        auto shape = [&](std::int64_t seq, std::int64_t heads, std::int64_t dim) {
            return bsnd ? Shape{b, seq, heads, dim} : Shape{b, heads, seq, dim};
        };
        const AttrMap attrs{{"scaleValue", AttrValue::of_float(1 / std::sqrt(double(dk)))},
                            {"inputLayout", AttrValue::of_string(bsnd ? "BSND" : "BNSD")},
                            {"is_causal", AttrValue::of_bool(causal)}};
        check_baseline(baseline,
                       {{dtype, shape(s1, n1, dk), range}, {dtype, shape(s2, n2, dk), range}, {dtype, shape(s2, n2, dv), range},
                        {DType::i32, shape(s1, n2, top_k), {0, double(s2 - 1)}}},
                       attrs, weighted_means(range));
    };
    for (DType dtype : {DType::f16, DType::bf16})
        for (bool bsnd : {true, false}) {
            check(dtype, bsnd, 2, 7, 300, 8, 2, 128, 128, 48, {-1, 1}, true);
            check(dtype, bsnd, 3, 1, 257, 16, 1, 192, 128, 64, {-1, 1}, false);   // one KV head, Dv < Dk
            check(dtype, bsnd, 1, 40, 20, 4, 2, 64, 64, 8, {-3, 3}, true);        // S1 > S2: empty sets
            check(dtype, bsnd, 1, 3, 9, 4, 4, 32, 16, 12, {-1, 1}, true);         // topK > S2: repeats
            check(dtype, bsnd, 1, 5, 60, 4, 2, 32, 32, 16, inf_range, true);
            check(dtype, bsnd, 1, 5, 60, 4, 2, 32, 32, 16, nan_range, false);
            check(dtype, bsnd, 1, 4, 64, 2, 1, 40, 40, 16, {0, 0}, false);
        }
}

TEST(BaselinesLevel4L4a, MlaPrologMatchesGolden) {
    const BaselineLibrary baseline("mla_prolog");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    auto check = [&](std::int64_t b, std::int64_t s, std::int64_t he, std::int64_t cq, std::int64_t n, std::int64_t d,
                     std::int64_t ckv, std::int64_t dr, ValueRange range, double eps_cq, double eps_ckv) {
        const DType t = DType::bf16;
        const AttrMap attrs{{"n_heads", AttrValue::of_int(n)},
                            {"rmsnorm_epsilon_cq", AttrValue::of_float(eps_cq)},
                            {"rmsnorm_epsilon_ckv", AttrValue::of_float(eps_ckv)}};
        CheckOptions options;
        options.denominator_floor = 1e-2;  // dot products that cancel to near 0
        check_baseline(baseline,
                       {{t, {b, s, he}, range}, {t, {he, cq}, range}, {t, {cq, n * (d + dr)}, range}, {t, {n, d, ckv}, range},
                        {t, {he, ckv + dr}, range}, {t, {cq}, range}, {t, {ckv}, range}, {t, {b, s, dr}, range},
                        {t, {b, s, dr}, range}},
                       attrs, options);
    };
    check(3, 1, 257, 64, 4, 32, 96, 16, {-1, 1}, 1e-5, 1e-5);
    check(1, 5, 130, 40, 2, 16, 64, 8, {-1, 1}, 1e-6, 1e-8);
    check(2, 2, 96, 32, 8, 16, 32, 32, {-3, 3}, 1e-3, 1e-5);
    check(1, 1, 512, 128, 4, 64, 128, 64, {0, 0}, 1e-5, 1e-5);
    check(2, 1, 64, 32, 2, 16, 32, 16, inf_range, 1e-5, 1e-5);
    check(2, 1, 64, 32, 2, 16, 32, 16, nan_range, 1e-5, 1e-5);
}

}  // namespace
}  // namespace hb::test
