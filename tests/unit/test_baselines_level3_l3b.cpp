// The baselines of conv_2d, depthwise_conv_2d, conv_3d_backprop_filter, dilation_2d,
// adaptive_avg_pool_3d and roi_align: each shared object is loaded the way the worker loads
// a kernel, run on small generated cases along every attribute path and dtype (and on
// infinite and NaN inputs, where the convolutions' padding fix-up matters), and compared with
// the operator's fp64 golden at the precision gate's max-error bound. The ctest entries
// baselines_onednn_max_isa_* rerun them with oneDNN capped at AVX2, AVX512_CORE and
// AVX512_CORE_BF16, where other kernels (or the fp32 fallback) compute the oneDNN paths.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

AttrValue ints(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

// Sums of products of mixed signs cancel to near 0, where fp32 accumulation has no relative
// accuracy to speak of (the gate's fallback accepts that); the floor keeps those elements
// from failing on rounding noise while an error of the order of the values still fails.
CheckOptions summing(double floor = 0.05) {
    CheckOptions options;
    options.denominator_floor = floor;
    return options;
}

const ValueRange small_range{-2, 2};
const ValueRange inf_range{-INFINITY, INFINITY};
const ValueRange nan_range{NAN, NAN};

// ---------------------------------------------------------------- conv_2d

TEST(BaselinesLevel3L3b, Conv2dMatchesGoldenOnEveryWindowKindAndDtype) {
    const BaselineLibrary baseline("conv_2d");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    struct Window {
        std::int64_t cin, cout, h, w, kh, kw;
        std::vector<std::int64_t> strides, pads, dilations;
    };
    const std::vector<Window> windows = {
        {3, 5, 9, 11, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}},  {8, 4, 12, 13, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}},
        {5, 6, 10, 9, 5, 3, {1, 2}, {0, 2, 1, 0}, {2, 1}},  {16, 16, 7, 7, 1, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},
        {4, 3, 15, 14, 3, 3, {1, 1}, {3, 3, 3, 3}, {3, 3}}, {2, 7, 9, 10, 3, 3, {2, 2}, {0, 1, 0, 1}, {1, 1}},
    };
    for (DType dtype : {DType::f32, DType::f16, DType::bf16})
        for (const auto& win : windows)
            check_baseline(baseline,
                           {{dtype, {2, win.cin, win.h, win.w}, small_range},
                            {dtype, {win.cout, win.cin, win.kh, win.kw}, small_range},
                            {dtype, {win.cout}, small_range}},
                           {{"strides", ints(win.strides)}, {"pads", ints(win.pads)}, {"dilations", ints(win.dilations)}},
                           summing());
}

// Infinite filter taps that meet the padding give NaN in the operator and not in oneDNN,
// which skips padded taps: the baseline's fix-up must put the NaN back, and NaN inputs must
// propagate as they are.
TEST(BaselinesLevel3L3b, Conv2dKeepsTheOperatorsSpecialValues) {
    const BaselineLibrary baseline("conv_2d");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const AttrMap attrs = {{"strides", ints({1, 1})}, {"pads", ints({1, 2, 1, 0})}, {"dilations", ints({1, 1})}};
    for (DType dtype : {DType::f32, DType::f16, DType::bf16})
        for (const ValueRange& range : {inf_range, nan_range})
            check_baseline(baseline, {{dtype, {2, 3, 8, 9}, range}, {dtype, {40, 3, 3, 3}, range}, {dtype, {40}, range}}, attrs,
                           summing());
}

// ---------------------------------------------------------------- depthwise_conv_2d

TEST(BaselinesLevel3L3b, DepthwiseMatchesGoldenOnEveryWindowKindAndDtype) {
    const BaselineLibrary baseline("depthwise_conv_2d");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    struct Window {
        std::int64_t kh, kw;
        std::vector<std::int64_t> stride, padding, dilation;
    };
    const std::vector<Window> windows = {{3, 3, {1, 1}, {1, 1}, {1, 1}}, {5, 5, {2, 2}, {2, 2}, {1, 1}},
                                         {3, 5, {1, 2}, {2, 1}, {2, 1}}, {1, 1, {1, 1}, {1, 1}, {1, 1}},
                                         {3, 3, {2, 1}, {0, 0}, {3, 3}}};
    for (DType dtype : {DType::f32, DType::f16, DType::bf16})
        for (const auto& win : windows)
            for (std::int64_t channels : {std::int64_t{5}, std::int64_t{48}})
                check_baseline(baseline,
                               {{dtype, {2, channels, 13, 12}, small_range},
                                {dtype, {channels, win.kh, win.kw}, small_range},
                                {dtype, {channels}, small_range}},
                               {{"kernelSize", ints({win.kh, win.kw})},
                                {"stride", ints(win.stride)},
                                {"padding", ints(win.padding)},
                                {"dilation", ints(win.dilation)},
                                {"groups", AttrValue::of_int(channels)}},
                               summing());
}

TEST(BaselinesLevel3L3b, DepthwiseKeepsTheOperatorsSpecialValues) {
    const BaselineLibrary baseline("depthwise_conv_2d");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const AttrMap attrs = {{"kernelSize", ints({3, 3})}, {"stride", ints({1, 1})}, {"padding", ints({2, 1})},
                           {"dilation", ints({1, 1})}, {"groups", AttrValue::of_int(32)}};
    for (DType dtype : {DType::f32, DType::f16, DType::bf16})
        for (const ValueRange& range : {inf_range, nan_range})
            check_baseline(baseline, {{dtype, {2, 32, 9, 10}, range}, {dtype, {32, 3, 3}, range}, {dtype, {32}, range}}, attrs,
                           summing());
}

// ---------------------------------------------------------------- conv_3d_backprop_filter

struct Backprop {
    std::int64_t n, cin, cout, groups;
    std::vector<std::int64_t> in, kernel, strides, pads, dilations;
};

std::vector<std::int64_t> backprop_out(const Backprop& b) {
    std::vector<std::int64_t> out;
    for (std::size_t a = 0; a < 3; ++a)
        out.push_back((b.in[a] + b.pads[2 * a] + b.pads[2 * a + 1] - b.dilations[a] * (b.kernel[a] - 1) - 1) / b.strides[a] + 1);
    return out;
}

void check_backprop(const BaselineLibrary& baseline, const Backprop& b, DType dtype, ValueRange range) {
    const auto out = backprop_out(b);
    check_baseline(baseline,
                   {{dtype, {b.n, b.cin, b.in[0], b.in[1], b.in[2]}, range}, {dtype, {b.n, b.cout, out[0], out[1], out[2]}, range}},
                   {{"strides", ints(b.strides)},
                    {"pads", ints(b.pads)},
                    {"dilations", ints(b.dilations)},
                    {"groups", AttrValue::of_int(b.groups)},
                    {"filter_size", ints({b.cout, b.cin / b.groups, b.kernel[0], b.kernel[1], b.kernel[2]})}},
                   summing(0.5));
}

TEST(BaselinesLevel3L3b, BackpropFilterMatchesGoldenWithGroupsStridesAndPads) {
    const BaselineLibrary baseline("conv_3d_backprop_filter");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const std::vector<Backprop> shapes = {
        {2, 4, 6, 1, {5, 7, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}},
        {2, 8, 8, 2, {6, 9, 7}, {3, 1, 3}, {2, 1, 2}, {1, 0, 0, 0, 1, 1}, {1, 1, 1}},
        {1, 16, 16, 16, {5, 8, 9}, {3, 3, 3}, {1, 1, 1}, {2, 2, 2, 2, 2, 2}, {2, 2, 2}},
        {3, 3, 5, 1, {4, 6, 5}, {1, 1, 1}, {2, 2, 2}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}},
    };
    for (DType dtype : {DType::f16, DType::bf16})
        for (const auto& b : shapes) check_backprop(baseline, b, dtype, small_range);
}

TEST(BaselinesLevel3L3b, BackpropFilterKeepsTheOperatorsSpecialValues) {
    const BaselineLibrary baseline("conv_3d_backprop_filter");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const Backprop b{2, 4, 6, 2, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1, 0, 1, 1}, {1, 1, 1}};
    for (DType dtype : {DType::f16, DType::bf16})
        for (const ValueRange& range : {inf_range, nan_range}) check_backprop(baseline, b, dtype, range);
}

// ---------------------------------------------------------------- dilation_2d

TEST(BaselinesLevel3L3b, DilationMatchesGoldenInEveryModeAndLayout) {
    const BaselineLibrary baseline("dilation_2d");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    struct Variant {
        std::int64_t fh, fw, sh, sw, rh, rw;
        const char* mode;
        std::vector<std::int64_t> pads;
        bool ceil_mode;
    };
    const std::vector<Variant> variants = {
        {3, 3, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, false},     {2, 3, 2, 2, 1, 2, "SAME", {0, 0, 0, 0}, true},
        {3, 3, 2, 1, 2, 1, "VALID", {0, 0, 0, 0}, false},    {3, 3, 2, 2, 1, 1, "EXPLICIT", {1, 0, 1, 2}, true},
        {5, 3, 1, 1, 1, 3, "EXPLICIT", {2, 2, 3, 3}, false},
    };
    for (const bool nchw : {false, true})
        for (const auto& v : variants)
            for (const ValueRange& range : {small_range, inf_range, nan_range}) {
                const std::int64_t c = 19;
                check_baseline(baseline,
                               {{DType::f16, nchw ? Shape{2, c, 11, 14} : Shape{2, 11, 14, c}, range},
                                {DType::f16, nchw ? Shape{c, v.fh, v.fw} : Shape{v.fh, v.fw, c}, range}},
                               {{"strides", ints(nchw ? std::vector<std::int64_t>{1, 1, v.sh, v.sw} : std::vector<std::int64_t>{1, v.sh, v.sw, 1})},
                                {"rates", ints(nchw ? std::vector<std::int64_t>{1, 1, v.rh, v.rw} : std::vector<std::int64_t>{1, v.rh, v.rw, 1})},
                                {"padding_mode", AttrValue::of_string(v.mode)},
                                {"pads", ints(v.pads)},
                                {"ceil_mode", AttrValue::of_bool(v.ceil_mode)},
                                {"data_format", AttrValue::of_string(nchw ? "NCHW" : "NHWC")}});
            }
}

// ---------------------------------------------------------------- adaptive_avg_pool_3d

// Divisible sizes take oneDNN's pooling; overlapping windows and up-sampling the loop.
TEST(BaselinesLevel3L3b, AdaptivePoolMatchesGoldenOnBothPaths) {
    const BaselineLibrary baseline("adaptive_avg_pool_3d");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    const std::vector<std::pair<Shape, std::vector<std::int64_t>>> cases = {
        {{2, 5, 8, 12, 16}, {4, 3, 8}},   // divisible
        {{1, 3, 6, 9, 10}, {1, 1, 1}},    // global
        {{2, 4, 7, 11, 13}, {3, 4, 5}},   // overlapping
        {{1, 3, 4, 5, 6}, {8, 7, 6}},     // up-sampling, identity on W
    };
    for (DType dtype : {DType::f32, DType::f16, DType::bf16})
        for (const auto& [shape, size] : cases)
            for (const ValueRange& range : {small_range, inf_range, nan_range})
                check_baseline(baseline, {{dtype, shape, range}}, {{"output_size", ints(size)}}, summing(0.01));
}

// ---------------------------------------------------------------- roi_align

TEST(BaselinesLevel3L3b, RoiAlignMatchesGoldenOnEverySamplingPath) {
    const BaselineLibrary baseline("roi_align");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    struct Variant {
        std::int64_t oh, ow;
        double scale;
        std::int64_t ratio;
        bool aligned;
    };
    const std::vector<Variant> variants = {{7, 7, 0.25, 2, false}, {5, 3, 0.5, 0, true}, {2, 2, 1.0, -1, false},
                                           {4, 4, 0.125, 1, true}};
    for (DType dtype : {DType::f32, DType::f16})
        for (const auto& v : variants)
            for (const ValueRange& range : {small_range, inf_range, nan_range})
                check_baseline(baseline, {{dtype, {2, 21, 17, 23}, range}, {dtype, {9, 5}, {0, 1}}},
                               {{"outputHeight", AttrValue::of_int(v.oh)},
                                {"outputWidth", AttrValue::of_int(v.ow)},
                                {"spatial_scale", AttrValue::of_float(v.scale)},
                                {"sampling_ratio", AttrValue::of_int(v.ratio)},
                                {"aligned", AttrValue::of_bool(v.aligned)}},
                               summing(0.01));
}

}  // namespace
}  // namespace hb::test
