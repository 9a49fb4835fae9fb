// The baselines of maximum, apply_adam_w, gcd and dynamic_quant: each shared object is
// loaded the way the worker loads a kernel, run on small tensors of every dtype and
// broadcast it accepts (oneDNN and C++ paths alike), and compared with the operator's fp64
// golden: integer outputs exactly (or within the operator's +-k), floating outputs at the
// precision gate's max-error bound.
#include <cmath>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

// ---- maximum -----------------------------------------------------------------------------

// Pairs of shapes that take oneDNN's jit (equal, row and column broadcast, the other
// direction by swapping), oneDNN's ref:any (the C++ loop instead) and both directions.
const std::vector<std::pair<Shape, Shape>> maximum_shapes = {
    {{7}, {7}},           {{3, 129}, {1, 129}},     {{3, 129}, {3, 1}},          {{129}, {5, 3, 129}},
    {{2, 3, 5, 33, 9}, {1, 1, 1, 33, 1}}, {{5, 1, 67}, {3, 67}}, {{2, 5, 1001}, {2, 5, 1001}}, {{1}, {4, 9}}};

TEST(BaselinesLevel2Elementwise, MaximumMatchesGoldenForEveryDtypeAndBroadcast) {
    const BaselineLibrary baseline("maximum");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::i8, DType::i32, DType::i64})
        for (const auto& [a, b] : maximum_shapes)
            for (ValueRange range : {ValueRange{-100, 100}, ValueRange{-INFINITY, INFINITY}})
                check_baseline(baseline, {{dtype, a, range}, {dtype, b, range}});
}

// NaN inputs: the C++ loop propagates them as torch.maximum; oneDNN's jit max (float32
// here, which has it) returns src1 when either operand is NaN, so only positions where the
// second operand is NaN, or both agree, are checked there.
TEST(BaselinesLevel2Elementwise, MaximumNanRuleOnEachPath) {
    // oneDNN's jit max loses a NaN in src0 on the CPUs seen so far; the baseline probes the
    // primitive it is given and runs its own loop instead, so NaN propagates on every path
    // and every CPU (the ISA ctest entries run this with oneDNN capped at lower ISAs too).
    const BaselineLibrary baseline("maximum");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const ValueRange nans{NAN, NAN};
    for (DType dtype : {DType::f32, DType::f16, DType::bf16})
        for (const auto& [a, b] : maximum_shapes) check_baseline(baseline, {{dtype, a, nans}, {dtype, b, nans}});
}

// ---- apply_adam_w ------------------------------------------------------------------------

TEST(BaselinesLevel2Elementwise, ApplyAdamWMatchesGoldenOnEveryPath) {
    const BaselineLibrary baseline("apply_adam_w");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto f = AttrValue::of_float;
    const std::vector<AttrMap> attr_sets = {
        {{"lr", f(1e-3)}, {"beta1", f(0.9)}, {"beta2", f(0.999)}, {"weight_decay", f(0.0)}},
        {{"lr", f(0.1)}, {"beta1", f(0.5)}, {"beta2", f(0.9)}, {"weight_decay", f(0.5)}, {"step", AttrValue::of_int(7)}},
        {{"lr", f(1e-2)}, {"beta1", f(0.0)}, {"beta2", f(0.99)}, {"weight_decay", f(0.01)}, {"epsilon", f(1e-6)},
         {"maximize", AttrValue::of_bool(true)}},
    };
    for (const AttrMap& attrs : attr_sets)
        for (DType dtype : {DType::f32, DType::f16, DType::bf16})
            for (const Shape& shape : {Shape{7}, Shape{3, 129}, Shape{2, 5, 1001}})
                for (ValueRange range : {ValueRange{-1, 1}, ValueRange{-INFINITY, INFINITY}, ValueRange{NAN, NAN}})
                    check_baseline(baseline,
                                   {{dtype, shape, range}, {dtype, shape, range},
                                    {dtype, shape, std::isfinite(range.lo) ? ValueRange{-0.1, 0.1} : range},
                                    {dtype, shape, std::isfinite(range.lo) ? ValueRange{0, 0.1} : range}},
                                   attrs);
}

// ---- gcd ---------------------------------------------------------------------------------

TEST(BaselinesLevel2Elementwise, GcdMatchesGoldenForEveryDtypeAndBroadcast) {
    const BaselineLibrary baseline("gcd");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::i16, DType::i32, DType::i64})
        for (const auto& [a, b] : maximum_shapes)
            for (ValueRange range : {ValueRange{-1000, 1000}, ValueRange{-INFINITY, INFINITY}, ValueRange{0, 0}})
                check_baseline(baseline, {{dtype, a, range}, {dtype, b, range}});
}

// ---- dynamic_quant -----------------------------------------------------------------------

TEST(BaselinesLevel2Elementwise, DynamicQuantMatchesGoldenWithinOne) {
    const BaselineLibrary baseline("dynamic_quant");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f16, DType::bf16})
        for (const Shape& shape : {Shape{3, 7}, Shape{5, 129}, Shape{2, 5, 1001}})
            for (ValueRange range : {ValueRange{-1, 1}, ValueRange{-1000, 1000}, ValueRange{0, 0},
                                     ValueRange{-INFINITY, INFINITY}, ValueRange{NAN, NAN}})
                check_baseline(baseline, {{dtype, shape, range}});
}

}  // namespace
}  // namespace hb::test
