// Timed-call input rotation (measure/input_rotation): every variant is a circular shift of
// the base values that changes the content; tensors of small records (ROI boxes [K, 5],
// coordinate grids [..., 3]) shift by whole records, so that each record stays one.
#include <gtest/gtest.h>

#include <set>

#include "measure/input_rotation.hpp"

namespace hb {
namespace {

Arg filled(const Shape& shape) {
    Arg a;
    a.tensors.emplace_back(TensorSpec{DType::f32, shape});
    Tensor& t = a.tensors.back();
    for (std::int64_t i = 0; i < t.numel(); ++i) t.set(static_cast<std::size_t>(i), static_cast<double>(i));
    return a;
}

TEST(InputRotation, RecordsShiftByWholeRecords) {
    const Arg base = filled({50, 5});
    std::set<std::int64_t> shifts;
    for (int variant = 1; variant <= 20; ++variant) {
        Arg copy = filled({50, 5});
        fill_variant(base, variant, copy);
        const Tensor& t = copy.tensors[0];
        const auto first = static_cast<std::int64_t>(t.get(0));
        EXPECT_EQ(first % 5, 0) << "variant " << variant << " starts inside a record";
        EXPECT_NE(first, 0) << "variant " << variant << " did not change the content";
        for (std::int64_t i = 0; i < t.numel(); ++i)
            ASSERT_EQ(static_cast<std::int64_t>(t.get(static_cast<std::size_t>(i))), (first + i) % 250);
        shifts.insert(first);
        EXPECT_EQ(variant_element_shift(t.spec, variant), first);
    }
    EXPECT_GT(shifts.size(), 10u);  // the variants differ from one another too
}

TEST(InputRotation, FlatTensorsAndLongRowsShiftByElements) {
    bool inside_a_row = false;
    for (const Shape& shape : {Shape{1000}, Shape{20, 64}, Shape{3, 9}}) {
        const Arg base = filled(shape);
        for (int variant = 1; variant <= 8; ++variant) {
            Arg copy = filled(shape);
            fill_variant(base, variant, copy);
            const auto first = static_cast<std::int64_t>(copy.tensors[0].get(0));
            EXPECT_NE(first, 0);
            inside_a_row = inside_a_row || first % shape.back() != 0;
        }
    }
    EXPECT_TRUE(inside_a_row);
}

TEST(InputRotation, ASingleRecordStaysWhole) {
    for (int variant = 1; variant <= 8; ++variant) EXPECT_EQ(variant_element_shift(TensorSpec{DType::f32, {1, 5}}, variant), 0);
}

TEST(InputRotation, TensorsOfOneShapeShareTheShift) {
    for (int variant = 1; variant <= 8; ++variant) {
        EXPECT_EQ(variant_element_shift(TensorSpec{DType::f16, {300, 4}}, variant),
                  variant_element_shift(TensorSpec{DType::f32, {300, 4}}, variant));
        EXPECT_EQ(variant_element_shift(TensorSpec{DType::f32, {777}}, variant), variant_shift(777, variant));
    }
}

}  // namespace
}  // namespace hb
