// The baselines of softmax, rms_norm and group_norm: each shared object is loaded the way
// the worker loads a kernel, run on small tensors of every dtype and on every path it has
// (oneDNN and loop, shared and per-thread groups), and compared with the operator's fp64
// golden at the precision gate's max-error bound (with the operator's tau override).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

const std::vector<DType> float_dtypes = {DType::f16, DType::bf16, DType::f32};

// One case with every input in `dtype` and `range`, one shape per input.
void check_case(const BaselineLibrary& baseline, DType dtype, const std::vector<Shape>& shapes, ValueRange range,
                const AttrMap& attrs) {
    std::vector<BaselineInput> inputs;
    for (const Shape& shape : shapes) inputs.emplace_back(dtype, shape, range);
    check_baseline(baseline, inputs, attrs);
}

TEST(BaselinesLevel2Norm, SoftmaxMatchesGoldenOnTheOneDnnAndLoopPaths) {
    const BaselineLibrary baseline("softmax");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto dim = [](std::int64_t d) { return AttrMap{{"dim", AttrValue::of_int(d)}}; };
    for (DType dtype : float_dtypes) {
        check_case(baseline, dtype, {{7, 129}}, {-5, 5}, dim(-1));     // oneDNN, last dim
        check_case(baseline, dtype, {{3, 1001}}, {-50, 50}, dim(1));   // oneDNN, long rows
        check_case(baseline, dtype, {{37, 130}}, {-5, 5}, dim(0));     // loop, inner 130
        check_case(baseline, dtype, {{2, 9, 3, 5}}, {-3, 3}, dim(-3)); // loop, inner 15
        check_case(baseline, dtype, {{4, 67}}, {-INFINITY, INFINITY}, dim(0));
    }
}

TEST(BaselinesLevel2Norm, RmsNormMatchesGoldenForOneAndSeveralNormalizedDims) {
    const BaselineLibrary baseline("rms_norm");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : float_dtypes) {
        check_case(baseline, dtype, {{9, 257}, {257}}, {-3, 3}, {});
        check_case(baseline, dtype, {{3, 5, 77}, {5, 77}}, {-100, 100}, {{"epsilon", AttrValue::of_float(1e-3)}});
        check_case(baseline, dtype, {{4, 33}, {33}}, {0, 0}, {});
    }
}

TEST(BaselinesLevel2Norm, GroupNormMatchesGoldenOnPerThreadAndSharedGroups) {
    const BaselineLibrary baseline("group_norm");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const auto attrs = [](std::int64_t g, double eps) {
        return AttrMap{{"num_groups", AttrValue::of_int(g)}, {"epsilon", AttrValue::of_float(eps)}};
    };
    for (DType dtype : float_dtypes) {
        check_case(baseline, dtype, {{3, 12, 5, 7}, {12}, {12}}, {-2, 2}, attrs(4, 1e-5));
        check_case(baseline, dtype, {{5, 6}, {6}, {6}}, {-1, 3}, attrs(3, 1e-3));
        // One sample, one group of 3 x 30000 elements: the threads share the group.
        check_case(baseline, dtype, {{1, 3, 30000}, {3}, {3}}, {-10, 10}, attrs(1, 1e-6));
        check_case(baseline, dtype, {{2, 8, 33}, {8}, {8}}, {NAN, NAN}, attrs(8, 1e-5));
    }
}

}  // namespace
}  // namespace hb::test
