// The threaded C++ baselines of arg_max, cummin, gather and scatter: each shared object is
// loaded the way the worker loads a kernel, run on generated inputs of every dtype it accepts
// and on each of its loop shapes, and compared with the operator's fp64 golden: index and
// selected outputs exactly, accumulated (scatter add/multiply) at the gate's max-error bound.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"

namespace hb::test {
namespace {

// Index and selected outputs carry input values unchanged, so they must match exactly;
// only scatter's add and multiply accumulate, and those are held to the gate's bound.
CheckOptions selects() {
    CheckOptions options;
    options.exact_floats = true;
    return options;
}

AttrMap dim_attrs(std::int64_t dim) { return {{"dim", AttrValue::of_int(dim)}}; }

const std::vector<DType> arg_max_dtypes = {DType::f16, DType::bf16, DType::f32, DType::i32, DType::i64};

// Shapes and dims for each loop of the baseline: many contiguous lines, one long line split
// into chunks, and lines strided across an inner dimension wider than one block.
const std::vector<std::pair<Shape, std::int64_t>> reduce_layouts = {
    {{67, 129}, -1}, {{100003}, 0}, {{3, 17, 301}, 1}, {{2, 5, 3, 7}, -3}, {{1, 1}, 0}};

TEST(BaselinesLevel2Index, ArgMaxMatchesGoldenIncludingTies) {
    const BaselineLibrary baseline("arg_max");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : arg_max_dtypes)
        for (const auto& [shape, dim] : reduce_layouts)
            for (ValueRange range : {ValueRange{-3, 3}, ValueRange{-1000, 1000}})
                for (bool keepdim : {false, true}) {
                    AttrMap attrs = dim_attrs(dim);
                    attrs["keepdim"] = AttrValue::of_bool(keepdim);
                    check_baseline(baseline, {{dtype, shape, range}}, attrs, selects());
                }
}

TEST(BaselinesLevel2Index, ArgMaxFindsTheFirstNaNAndInfinity) {
    const BaselineLibrary baseline("arg_max");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (DType dtype : {DType::f16, DType::bf16, DType::f32})
        for (const auto& [shape, dim] : reduce_layouts)
            for (ValueRange range : {ValueRange{NAN, NAN}, ValueRange{-INFINITY, INFINITY}, ValueRange{0, 0}})
                check_baseline(baseline, {{dtype, shape, range}}, dim_attrs(dim), selects());
}

TEST(BaselinesLevel2Index, CumminMatchesGoldenIncludingTiesAndNaN) {
    const BaselineLibrary baseline("cummin");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    // {100003}: one long line, scanned in chunks with carries.
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i32})
        for (const auto& [shape, dim] : reduce_layouts)
            for (ValueRange range : {ValueRange{-3, 3}, ValueRange{-1000, 1000}, ValueRange{NAN, NAN},
                                     ValueRange{-INFINITY, INFINITY}, ValueRange{0, 0}})
                check_baseline(baseline, {{dtype, shape, range}}, dim_attrs(dim), selects());
}

TEST(BaselinesLevel2Index, GatherMatchesGoldenForEveryDtypeAndLayout) {
    const BaselineLibrary baseline("gather");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    struct Layout {
        Shape x, index;
        std::int64_t dim;
    };
    const std::vector<Layout> layouts = {{{1009}, {3001}, 0},         {{37, 129}, {50, 129}, 0},
                                         {{37, 129}, {20, 300}, -1},  {{4, 9, 33}, {3, 20, 31}, 1},
                                         {{5, 6, 7}, {5, 2, 7}, -3}};
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i8, DType::i32, DType::i64})
        for (DType index_dtype : {DType::i8, DType::i32, DType::i64})
            for (const auto& l : layouts) {
                // Indices are redrawn in range by the operator's fix_inputs.
                const ValueRange index_range{0, 1e9};
                check_baseline(baseline, {{dtype, l.x, ValueRange{-100, 100}}, {index_dtype, l.index, index_range}},
                               dim_attrs(l.dim), selects());
            }
}

TEST(BaselinesLevel2Index, ScatterMatchesGoldenForEveryReduce) {
    const BaselineLibrary baseline("scatter");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    struct Layout {
        Shape data, indices;
        std::int64_t dim;
    };
    // Indices never longer than data along dim here, so that update is valid too.
    const std::vector<Layout> layouts = {{{1009}, {700}, 0}, {{37, 129}, {20, 129}, 0}, {{37, 129}, {30, 100}, -1},
                                         {{4, 9, 33}, {3, 5, 31}, 1}, {{5, 6, 7}, {5, 2, 7}, -3}};
    const std::vector<AttrValue> reduces = {AttrValue{},
                                            AttrValue::of_string("update"),
                                            AttrValue::of_string("add"),
                                            AttrValue::of_string("multiply"),
                                            AttrValue::of_string("amin"),
                                            AttrValue::of_string("amax")};
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i32, DType::i64})
        for (DType index_dtype : {DType::i32, DType::i64})
            for (const auto& l : layouts)
                for (const AttrValue& reduce : reduces) {
                    AttrMap attrs = dim_attrs(l.dim);
                    attrs["reduce"] = reduce;
                    const bool accumulates = reduce.type == AttrType::s && (reduce.s == "add" || reduce.s == "multiply");
                    check_baseline(baseline,
                                   {{dtype, l.data, ValueRange{-2, 2}}, {index_dtype, l.indices, ValueRange{0, 1e9}},
                                    {dtype, l.indices, ValueRange{-2, 2}}},
                                   attrs, accumulates ? CheckOptions{} : selects());
                }
}

TEST(BaselinesLevel2Index, ScatterPropagatesNaNInMinMax) {
    const BaselineLibrary baseline("scatter");
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    for (const char* reduce : {"amin", "amax"})
        for (DType dtype : {DType::f16, DType::bf16, DType::f32}) {
            AttrMap attrs = dim_attrs(1);
            attrs["reduce"] = AttrValue::of_string(reduce);
            check_baseline(baseline,
                           {{dtype, {40, 33}, ValueRange{NAN, NAN}}, {DType::i64, {40, 50}, ValueRange{0, 1e9}},
                            {dtype, {40, 50}, ValueRange{NAN, NAN}}},
                           attrs, selects());
        }
}

}  // namespace
}  // namespace hb::test
