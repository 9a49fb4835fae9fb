// The baselines of unsorted_segment_sum, apply_rotary_pos_emb and grid_sampler_3d: each
// shared object is loaded the way the worker loads a kernel, run on small generated cases
// along every attribute path and dtype, and compared with the operator's fp64 golden at
// the precision gate's max-error bound (exact for integers).
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

// ---------------------------------------------------------------- unsorted_segment_sum

// Shapes that take each of the baseline's three schedules: long rows (trailing-dim slices),
// short rows with a small y (per-thread partials), short rows with a large y (segment ranges).
TEST(BaselinesLevel2Spatial, SegmentSumMatchesGoldenOnEverySchedule) {
    const BaselineLibrary baseline("unsorted_segment_sum");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    struct Layout {
        Shape data;
        std::int64_t segments;
    };
    const std::vector<Layout> layouts = {
        {{37, 1031}, 5}, {{301, 3, 7}, 17}, {{2000}, 1}, {{3001, 3}, 1000003}};
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i32, DType::i64})
        for (DType ids : {DType::i32, DType::i64})
            for (const auto& l : layouts) {
                // Integer sums with no rounding to hide behind; floats within the gate.
                const ValueRange range = is_integer(dtype) ? ValueRange{-1000, 1000} : ValueRange{-2, 2};
                check_baseline(baseline, {{dtype, l.data, range}, {ids, {l.data[0]}, {0, double(l.segments - 1)}}},
                               {{"num_segments", AttrValue::of_int(l.segments)}});
            }
}

TEST(BaselinesLevel2Spatial, SegmentSumWrapsInt32AndPropagatesSpecialValues) {
    const BaselineLibrary baseline("unsorted_segment_sum");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const AttrMap attrs = {{"num_segments", AttrValue::of_int(3)}};
    check_baseline(baseline, {{DType::i32, {500, 4}, {-2147483648.0, 2147483647.0}}, {DType::i32, {500}, {0, 2}}},
                   attrs);
    for (DType dtype : {DType::f16, DType::bf16, DType::f32}) {
        check_baseline(baseline, {{dtype, {200, 3}, {-INFINITY, INFINITY}}, {DType::i64, {200}, {0, 2}}}, attrs);
        check_baseline(baseline, {{dtype, {200, 3}, {NAN, NAN}}, {DType::i64, {200}, {0, 2}}}, attrs);
    }
}

// ---------------------------------------------------------------- apply_rotary_pos_emb

TEST(BaselinesLevel2Spatial, RopeMatchesGoldenInEveryLayoutAndMode) {
    const BaselineLibrary baseline("apply_rotary_pos_emb");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f16, DType::bf16, DType::f32})
        for (std::int64_t layout : {0, 1})
            for (const char* mode : {"half", "interleaved"}) {
                const AttrMap attrs = {{"layout", AttrValue::of_int(layout)}, {"rotaryMode", AttrValue::of_string(mode)}};
                auto qk = [&](std::int64_t heads) {
                    return layout == 0 ? Shape{2, 13, heads, 80} : Shape{2, heads, 13, 80};
                };
                // Shared and per-batch tables; key with fewer heads.
                for (const Shape& table : {Shape{13, 40}, Shape{2, 13, 40}})
                    check_baseline(baseline,
                                   {{dtype, qk(6), {-2, 2}}, {dtype, qk(3), {-2, 2}}, {dtype, table, {-1, 1}},
                                    {dtype, table, {-1, 1}}},
                                   attrs);
            }
}

// ---------------------------------------------------------------- grid_sampler_3d

TEST(BaselinesLevel2Spatial, GridSamplerMatchesGoldenInEveryMode) {
    const BaselineLibrary baseline("grid_sampler_3d");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f16, DType::f32})
        for (const char* interp : {"bilinear", "nearest"})
            for (const char* pad : {"zeros", "border", "reflection"})
                for (bool align : {false, true})
                    check_baseline(baseline,
                                   {{dtype, {2, 3, 5, 6, 7}, {-2, 2}}, {dtype, {2, 4, 9, 11, 3}, {-2.5, 2.5}}},
                                   {{"interpolation_mode", AttrValue::of_string(interp)},
                                    {"padding_mode", AttrValue::of_string(pad)},
                                    {"align_corners", AttrValue::of_bool(align)}},
                                   interpolating());
}

}  // namespace
}  // namespace hb::test
