// The baselines of foreach_addcdiv_scalar, foreach_norm and swi_glu, loaded as the harness
// loads them, agree with the operators' goldens on small fp32, fp16 and bf16 tensors.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

const std::vector<DType> float_dtypes = {DType::f32, DType::f16, DType::bf16};

// Stricter than the gate on purpose: the baselines compute in fp32 and round once, so they
// must land within a few units in the last place of the output dtype (plus 1e-6 absolute)
// of the golden; the gate's 10 tau (with foreach_addcdiv_scalar's overrides) would hide drift.
CheckOptions few_ulps(std::function<void(std::vector<Arg>&)> patch_inputs = {}) {
    CheckOptions options;
    options.patch_inputs = std::move(patch_inputs);
    options.absolute_slack = 1e-6;
    options.denominator_offset = 0;
    options.max_rel = [](DType t) { return t == DType::f32 ? 2e-5 : t == DType::f16 ? 4e-3 : 3e-2; };
    return options;
}

AttrMap scalar(double value) { return {{"scalar", AttrValue::of_float(value)}}; }

TEST(BaselineForeachAddcdivScalar, MatchesGolden) {
    const BaselineLibrary baseline("foreach_addcdiv_scalar");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const std::vector<Shape> shapes = {{37, 129}, {5000}, {3, 4, 1}};
    for (DType t : float_dtypes)
        check_baseline(baseline, {list_input(t, shapes, {-3, 3}), list_input(t, shapes, {-3, 3}), list_input(t, shapes, {0.5, 2})}, scalar(-1.5),
                       few_ulps());
}

TEST(BaselineForeachNorm, MatchesGoldenForEveryOrder) {
    const BaselineLibrary baseline("foreach_norm");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<Shape> shapes = {{31, 67}, {4099}, {2, 3}};
    for (DType t : float_dtypes)
        for (double order : {1.0, 2.0, 3.0, 0.5, -1.0, 0.0, inf, -inf})
            check_baseline(baseline, {list_input(t, shapes, {-2, 2})}, scalar(order), few_ulps());
}

TEST(BaselineForeachNorm, NanMemberPropagates) {
    const BaselineLibrary baseline("foreach_norm");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<Shape> shapes = {{100}, {50}};
    auto put_nan = [](std::vector<Arg>& in) { in[0].tensors[0].set(17, std::nan("")); };
    for (DType t : float_dtypes)
        for (double order : {2.0, 0.0, inf, -inf, 1.5})
            check_baseline(baseline, {list_input(t, shapes, {-2, 2})}, scalar(order), few_ulps(put_nan));
}

TEST(BaselineForeachNorm, LongMemberStaysAccurateInFp32) {
    const BaselineLibrary baseline("foreach_norm");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    // One running fp32 accumulator per lane drifts by ~1e-4 relative over millions of terms.
    for (double order : {1.0, 2.0, 3.0})
        check_baseline(baseline, {list_input(DType::f32, {{3'000'017}}, {-10, 10})}, scalar(order),
                       few_ulps());
}

TEST(BaselineSwiGlu, MatchesGoldenOnEverySplitKind) {
    const BaselineLibrary baseline("swi_glu");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    struct Split {
        Shape shape;
        std::int64_t dim;
    };
    // [3, 8200] dim -1 has 4100-element halves (the oneDNN path for fp32); the rest run the loop.
    const std::vector<Split> splits = {{{3, 8200}, -1}, {{5, 38}, -1}, {{4, 7}, 0}, {{2, 6, 5}, 1}, {{8194}, 0}};
    for (DType t : float_dtypes)
        for (const auto& s : splits)
            check_baseline(baseline, {{t, s.shape, {-6, 6}}}, {{"dim", AttrValue::of_int(s.dim)}}, few_ulps());
}

}  // namespace
}  // namespace hb::test
