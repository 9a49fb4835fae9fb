// The baseline of cross_entropy_loss: its shared object is loaded the way the worker loads a
// kernel, run on small tensors of every dtype, on both of its layouts ([N, C] rows and
// [N, C, d...] position blocks, with a partial block), every reduction and kinds of
// ignore_index, and compared with the operator's fp64 golden at the precision gate's
// max-error bound; NaN positions must match.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

const std::vector<DType> float_dtypes = {DType::f16, DType::bf16, DType::f32};

// Runs the baseline on generated logits in `range` and class targets (the operator's hook
// sets about one in eight to ignore_index) and compares with the golden rounded to dtype.
void check_loss(const BaselineLibrary& baseline, DType dtype, const Shape& input, ValueRange range,
                const std::string& reduction, std::int64_t ignore) {
    Shape target = input;
    target.erase(target.begin() + 1);
    // Losses near 0 lose relative precision in any fp32 log(sum): compare those absolutely.
    CheckOptions near_zero_absolute;
    near_zero_absolute.denominator_offset = 0;
    near_zero_absolute.denominator_floor = 1e-3;
    check_baseline(baseline, {{dtype, input, range}, {DType::i64, target, {0, static_cast<double>(input[1] - 1)}}},
                   {{"reduction", AttrValue::of_string(reduction)}, {"ignore_index", AttrValue::of_int(ignore)}},
                   near_zero_absolute);
}

TEST(BaselinesLevel2Loss, CrossEntropyMatchesGoldenOnRowsAndPositionBlocks) {
    const BaselineLibrary baseline("cross_entropy_loss");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : float_dtypes) {
        for (const std::string reduction : {"none", "mean", "sum"}) {
            check_loss(baseline, dtype, {37, 129}, {-5, 5}, reduction, -100);          // rows
            check_loss(baseline, dtype, {300, 2}, {-50, 50}, reduction, 0);             // binary, class 0 ignored
            check_loss(baseline, dtype, {3, 11, 70}, {-2, 3}, reduction, 4);            // 64 + a partial block
            check_loss(baseline, dtype, {2, 5, 3, 7, 5}, {-88, 88}, reduction, 5);      // 5-D, ignore past C
            check_loss(baseline, dtype, {9, 31}, {-INFINITY, INFINITY}, reduction, -1);
            check_loss(baseline, dtype, {4, 7, 9}, {NAN, NAN}, reduction, -100);
        }
    }
}

TEST(BaselinesLevel2Loss, CrossEntropyRejectsATargetOutsideTheClasses) {
    const BaselineLibrary baseline("cross_entropy_loss");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    PreparedCase prepared =
        prepare_case("cross_entropy_loss", {{DType::f32, {4, 3}, {0, 1}}, {DType::i64, {4}, {0, 100}}}, {});
    prepared.inputs.at(1).tensors.at(0).set(2, 3);  // C is 3
    std::string error_message;
    EXPECT_NE(call_baseline(baseline, prepared, error_message), 0);
}

}  // namespace
}  // namespace hb::test
