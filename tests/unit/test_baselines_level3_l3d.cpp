// The baselines of moe_re_routing, nms, strided_slice, top_k, transpose and unique: each
// shared object is loaded the way the worker loads a kernel, run on generated inputs of every
// dtype it accepts, on each of its paths (oneDNN reorder and the loops beside it, slices
// along the last and an outer dim, one long line and many, sorted and unsorted), and judged as
// a candidate is: reported lengths of outputs of data-dependent length against the golden's,
// then the precision gate on the written prefix (bit-exact for these operators) with the
// distinct-index rule. The ISA-capped ctest entries rerun these with oneDNN at AVX2,
// AVX512_CORE and AVX512_CORE_BF16.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "baseline_check.hpp"
#include "verify/distinct_indices.hpp"
#include "verify/precision_gate.hpp"
#include "verify/written_length.hpp"

namespace hb::test {
namespace {

const double inf = INFINITY;

// Runs the baseline on one case and judges its outputs like the harness judges a candidate.
void gate_baseline(const BaselineLibrary& baseline, const std::vector<BaselineInput>& inputs, const AttrMap& attrs) {
    SCOPED_TRACE(describe_case(baseline.op(), inputs, attrs));
    ASSERT_TRUE(baseline.error().empty()) << baseline.error();
    PreparedCase prepared = prepare_case(baseline.op(), inputs, attrs);
    KernelCall call(baseline.op(), prepared.inputs, prepared.outputs, prepared.problem.attrs, 2);
    const std::uint64_t workspace_bytes = baseline.workspace() ? baseline.workspace()(&call.shape_only_call()) : 0;
    Buffer workspace(workspace_bytes);
    call.set_workspace(workspace_bytes ? workspace.data() : nullptr, workspace_bytes);
    call.reset_written_lengths();
    ASSERT_EQ(baseline.kernel()(&call.call()), 0) << call.error_message();
    for (std::size_t a = 0; a < prepared.outputs.size(); ++a) prepared.outputs[a].written_length = call.written_length(a);

    const Problem& p = prepared.problem;
    const ValueArgs<double> in = values_from_args(prepared.inputs);
    ValueArgs<double> golden = values_for_specs<double>(p.outputs);
    prepared.op->golden(p, in, golden);
    ValueArgs<double> candidate = values_from_args(prepared.outputs);
    const WrittenLengthVerdict lengths = judge_written_lengths(p, candidate, golden);
    ASSERT_EQ(lengths.status, CaseStatus::pass) << lengths.reason;
    const Problem cut = written_prefix_problem(p, golden);
    candidate = cut_to_written_prefix(p, golden, std::move(candidate));
    const ValueArgs<double> golden_cut = cut_to_written_prefix(p, golden, golden);
    GateResult gate = run_precision_gate(cut, candidate, golden_cut, golden_cut, in);
    apply_distinct_index_rule(cut, candidate, gate);
    EXPECT_TRUE(gate.passed) << gate.reason;
}

AttrValue ints(std::vector<std::int64_t> v) {
    AttrValue a;
    a.type = AttrType::int_list;
    a.ints = std::move(v);
    return a;
}

const std::vector<ValueRange> value_ranges = {{-3, 3}, {-1000, 1000}, {NAN, NAN}, {-inf, inf}, {0, 0}};

TEST(BaselinesLevel3L3d, TransposeCopiesEveryDtypeBitForBit) {
    const BaselineLibrary baseline("transpose");
    struct Layout {
        Shape x;
        std::vector<std::int64_t> perm;
    };
    const std::vector<Layout> layouts = {{{67, 129}, {1, 0}},       {{3, 17, 33}, {2, 0, 1}},     {{2, 5, 7, 11}, {0, 2, 1, 3}},
                                         {{2, 5, 7, 11}, {0, 3, 1, 2}}, {{4, 3, 2, 5, 6}, {4, 3, 2, 1, 0}}, {{1000}, {0}},
                                         {{9, 1, 13}, {-1, 1, 0}}};
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::i8, DType::i16, DType::i32, DType::i64})
        for (const auto& l : layouts)
            for (const ValueRange& range : {ValueRange{-3, 3}, ValueRange{NAN, NAN}, ValueRange{-inf, inf}})
                gate_baseline(baseline, {{dtype, l.x, range}}, {{"perm", ints(l.perm)}});
    // Type-boundary integers: every bit pattern must survive the u8 / s32 lanes.
    for (DType dtype : {DType::i16, DType::i32, DType::i64})
        gate_baseline(baseline, {{dtype, {31, 257}, {dtype_lowest(dtype), dtype_max(dtype)}}}, {{"perm", ints({1, 0})}});
}

TEST(BaselinesLevel3L3d, StridedSliceByReorderAndByLoop) {
    const BaselineLibrary baseline("strided_slice");
    struct Spec {
        Shape x;
        AttrMap attrs;
    };
    auto spec = [](std::vector<std::int64_t> b, std::vector<std::int64_t> e, std::vector<std::int64_t> s, AttrMap extra = {}) {
        extra["begin"] = ints(std::move(b));
        extra["end"] = ints(std::move(e));
        extra["strides"] = ints(std::move(s));
        return extra;
    };
    const std::vector<Spec> specs = {
        {{1009}, spec({3}, {1000}, {4})},                                   // reorder, 1-D
        {{37, 129}, spec({1, -100}, {-1, -1}, {2, 3})},                     // reorder, negative indices
        {{37, 129}, spec({-1, 5}, {-38, 100}, {-2, 1})},                    // loop: a negative stride
        {{5, 6, 7}, spec({0, 0}, {0, 3}, {1, -1}, {{"begin_mask", AttrValue::of_int(3)}})},
        {{5, 6, 7}, spec({2, 0, 0}, {3, 6, 7}, {1, 1, 2}, {{"shrink_axis_mask", AttrValue::of_int(1)}})},
        {{5, 6, 7}, spec({0, 0, 0, 0}, {1, 5, 6, 7}, {1, 1, 2, 1}, {{"new_axis_mask", AttrValue::of_int(1)}})},
        {{4, 5, 6, 7}, spec({0, 1}, {0, 6}, {1, 2}, {{"ellipsis_mask", AttrValue::of_int(1)}})},
    };
    for (DType dtype : {DType::i8, DType::u8, DType::i32, DType::i64, DType::f16, DType::f32, DType::bf16})
        for (const auto& s : specs)
            for (const ValueRange& range : {ValueRange{-3, 3}, ValueRange{NAN, NAN}})
                gate_baseline(baseline, {{dtype, s.x, range}}, s.attrs);
}

TEST(BaselinesLevel3L3d, MoeReRoutingEveryAttributePairAndDtype) {
    const BaselineLibrary baseline("moe_re_routing");
    for (DType tokens : {DType::f16, DType::bf16, DType::i8})
        for (DType counts : {DType::i32, DType::i64})
            for (std::int64_t type : {0, 1})
                for (std::int64_t idx_type : {0, 1})
                    for (bool scales : {true, false}) {
                        std::vector<BaselineInput> inputs = {{tokens, {1021, 67}, {-3, 3}}, {counts, {4, 7}, {0, 0}},
                                                             {DType::f32, {1021}, {-inf, inf}}};
                        if (!scales) inputs[2].shapes.clear();  // no shapes: the optional input is absent
                        gate_baseline(baseline, inputs,
                                      {{"expert_token_num_type", AttrValue::of_int(type)}, {"idx_type", AttrValue::of_int(idx_type)}});
                    }
}

TEST(BaselinesLevel3L3d, TopKOnLinesAlongEveryDimIncludingTiesAndNaN) {
    const BaselineLibrary baseline("top_k");
    struct Layout {
        Shape x;
        std::int64_t k, dim;
    };
    const std::vector<Layout> layouts = {{{67, 129}, 7, -1}, {{100003}, 64, 0}, {{3, 17, 301}, 5, 1}, {{2, 50, 3, 7}, 50, -3},
                                         {{2, 300}, 300, 1}, {{40000}, 1, 0}};
    for (DType dtype : {DType::i8, DType::u8, DType::i32, DType::i64, DType::f16, DType::f32, DType::bf16})
        for (const auto& l : layouts)
            for (bool largest : {true, false})
                for (const ValueRange& range : value_ranges)
                    gate_baseline(baseline, {{dtype, l.x, range}},
                                  {{"k", AttrValue::of_int(l.k)}, {"dim", AttrValue::of_int(l.dim)}, {"largest", AttrValue::of_bool(largest)}});
}

TEST(BaselinesLevel3L3d, UniqueEveryFlagCombinationAndDtype) {
    const BaselineLibrary baseline("unique");
    for (DType dtype : {DType::bf16, DType::f16, DType::f32, DType::i8, DType::i32, DType::i64, DType::u8})
        for (int combo = 0; combo < 8; ++combo)
            for (const ValueRange& range : {ValueRange{-3, 3}, ValueRange{-1000, 1000}, ValueRange{NAN, NAN}, ValueRange{-inf, inf}})
                gate_baseline(baseline, {{dtype, {37, 129}, range}},
                              {{"sorted", AttrValue::of_bool((combo & 1) == 0)}, {"return_inverse", AttrValue::of_bool((combo & 2) != 0)},
                               {"return_counts", AttrValue::of_bool((combo & 4) != 0)}});
}

TEST(BaselinesLevel3L3d, NmsMatchesGoldenOnEveryRangeAndThreshold) {
    const BaselineLibrary baseline("nms");
    for (std::int64_t n : {1, 7, 2039})
        for (double threshold : {0.0, 0.05, 0.5, 0.9})
            for (const ValueRange& range : {ValueRange{-1, 1}, ValueRange{-1000, 1000}, ValueRange{NAN, NAN},
                                            ValueRange{-inf, inf}, ValueRange{0, 0}, ValueRange{-65504, 65504}})
                gate_baseline(baseline, {{DType::f32, {n, 4}, range}, {DType::f32, {n}, range}},
                              {{"iou_threshold", AttrValue::of_float(threshold)}});
}

}  // namespace
}  // namespace hb::test
