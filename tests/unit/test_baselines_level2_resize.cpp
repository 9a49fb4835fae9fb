// The resize_bilinear baseline: its shared object is loaded the way the worker loads a
// kernel, run on small generated cases along both of its paths (oneDNN resampling:
// align_corners=false with output_size or an exact scale_factor; the C++ loop:
// align_corners=true or an inexact scale_factor) in every dtype, and compared with the
// operator's fp64 golden at the precision gate's max-error bound.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

// ---------------------------------------------------------------- resize_bilinear

AttrValue int_pair(std::int64_t a, std::int64_t b) {
    AttrValue v;
    v.type = AttrType::int_list;
    v.ints = {a, b};
    return v;
}

AttrValue float_pair(double a, double b) {
    AttrValue v;
    v.type = AttrType::float_list;
    v.floats = {a, b};
    return v;
}

TEST(BaselinesLevel2Resize, ResizeMatchesGoldenOnBothPaths) {
    const BaselineLibrary baseline("resize_bilinear");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const Shape x = {2, 3, 17, 24};
    const std::vector<AttrMap> variants = {
        // oneDNN: output_size up, down and mixed; scale_factor with exact sizes (24 * 1.5 = 36).
        {{"output_size", int_pair(40, 61)}},
        {{"output_size", int_pair(7, 9)}},
        {{"output_size", int_pair(30, 10)}},
        {{"scale_factor", float_pair(2.0, 1.5)}},
        // The loop: align_corners, and scale factors whose sizes are inexact (17 * 1.3 = 22.1).
        {{"output_size", int_pair(40, 61)}, {"align_corners", AttrValue::of_bool(true)}},
        {{"output_size", int_pair(5, 1)}, {"align_corners", AttrValue::of_bool(true)}},
        {{"scale_factor", float_pair(1.3, 0.7)}},
        {{"scale_factor", float_pair(0.45, 2.5)}, {"align_corners", AttrValue::of_bool(true)}},
    };
    for (DType dtype : {DType::f16, DType::bf16, DType::f32})
        for (std::size_t k = 0; k < variants.size(); ++k) {
            check_baseline(baseline, {{dtype, x, {-2, 2}}}, variants[k], interpolating());
            // The loop follows PyTorch on special values too (a NaN times weight 0 is NaN);
            // oneDNN reads a clamped border pixel twice instead of its neighbour at weight 0,
            // so NaN positions differ there and only the loop variants are checked.
            if (k >= 4) check_baseline(baseline, {{dtype, x, {NAN, NAN}}}, variants[k], interpolating());
        }
}

}  // namespace
}  // namespace hb::test
