// The judge of outputs of data-dependent length (verify/written_length): a length beyond the
// capacity, negative or never set is LENGTH_OVER_CAPACITY, one other than the golden's is
// WRONG_LENGTH, and otherwise every side is cut to the written prefix, so the precision gate
// fails garbage inside the prefix (PRECISION_FAIL) and never looks at the capacity beyond it.
// The kernel call's written-length slot is reset before each call and read after it.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/kernel_call.hpp"
#include "core/status.hpp"
#include "verify/precision_gate.hpp"
#include "verify/written_length.hpp"

namespace hb {
namespace {

// A unique-like case: y (variable length, capacity 6) and inverse (fixed, 6 elements).
Problem variable_problem() {
    Problem p;
    p.spec.op = "unique";
    p.spec.case_id = 3;
    ArgSpec y{"y", false, true, {TensorSpec{DType::f32, {6}}}};
    y.variable_length = true;
    ArgSpec inverse{"inverse", false, true, {TensorSpec{DType::i64, {6}}}};
    p.outputs = {y, inverse};
    return p;
}

ValueArgs<double> values(const Problem& p, std::vector<double> y, std::int64_t y_length, std::vector<double> inverse) {
    ValueArgs<double> v = values_for_specs<double>(p.outputs);
    v[0].one().v = std::move(y);
    v[0].one().written_length = y_length;
    v[1].one().v = std::move(inverse);
    return v;
}

const std::vector<double> inverse = {0, 1, 0, 2, 1, 0};
const double poison = std::nan("");  // what the capacity beyond the prefix may hold

ValueArgs<double> golden(const Problem& p) { return values(p, {-1, 2.5, 7, 0, 0, 0}, 3, inverse); }

TEST(WrittenLength, LengthBeyondTheCapacityIsLengthOverCapacity) {
    const Problem p = variable_problem();
    const auto v = judge_written_lengths(p, values(p, {-1, 2.5, 7, 0, 0, 0}, 7, inverse), golden(p));
    EXPECT_EQ(v.status, CaseStatus::length_over_capacity);
    EXPECT_NE(v.reason.find("capacity 6"), std::string::npos) << v.reason;
    EXPECT_NE(v.reason.find("length 7"), std::string::npos) << v.reason;
    EXPECT_EQ(status_name(v.status), "LENGTH_OVER_CAPACITY");
    EXPECT_TRUE(is_structural_failure(v.status));
}

TEST(WrittenLength, NegativeOrUnsetLengthIsLengthOverCapacity) {
    const Problem p = variable_problem();
    const auto negative = judge_written_lengths(p, values(p, {-1, 2.5, 7, 0, 0, 0}, -1, inverse), golden(p));
    EXPECT_EQ(negative.status, CaseStatus::length_over_capacity);
    EXPECT_NE(negative.reason.find("cannot be negative"), std::string::npos) << negative.reason;
    const auto unset = judge_written_lengths(p, values(p, {-1, 2.5, 7, 0, 0, 0}, kWrittenLengthUnset, inverse), golden(p));
    EXPECT_EQ(unset.status, CaseStatus::length_over_capacity);
    EXPECT_NE(unset.reason.find("never set"), std::string::npos) << unset.reason;
}

TEST(WrittenLength, LengthOtherThanTheGoldensIsWrongLength) {
    const Problem p = variable_problem();
    for (std::int64_t reported : {0, 2, 4, 6}) {
        const auto v = judge_written_lengths(p, values(p, {-1, 2.5, 7, 9, 0, 0}, reported, inverse), golden(p));
        EXPECT_EQ(v.status, CaseStatus::wrong_length) << reported;
        EXPECT_NE(v.reason.find("expected 3"), std::string::npos) << v.reason;
    }
    EXPECT_EQ(status_name(CaseStatus::wrong_length), "WRONG_LENGTH");
    EXPECT_TRUE(is_structural_failure(CaseStatus::wrong_length));
}

TEST(WrittenLength, TheGoldensLengthPassesAndTheCapacityBeyondIsNeverCompared) {
    const Problem p = variable_problem();
    const auto g = golden(p);
    const auto candidate = values(p, {-1, 2.5, 7, poison, poison, -1e30}, 3, inverse);
    EXPECT_EQ(judge_written_lengths(p, candidate, g).status, CaseStatus::pass);
    const Problem cut = written_prefix_problem(p, g);
    EXPECT_EQ(cut.outputs[0].tensors[0].shape, Shape{3});
    EXPECT_EQ(cut.outputs[1].tensors[0].shape, Shape{6});  // fixed-length outputs stay whole
    const auto c = cut_to_written_prefix(p, g, candidate);
    EXPECT_EQ(c[0].one().v, (std::vector<double>{-1, 2.5, 7}));
    EXPECT_EQ(c[1].one().v, inverse);
    const GateResult gate = run_precision_gate(cut, c, cut_to_written_prefix(p, g, g), cut_to_written_prefix(p, g, g), {});
    EXPECT_TRUE(gate.passed) << gate.reason;
}

TEST(WrittenLength, GarbageInsideThePrefixFailsThePrecisionGate) {
    const Problem p = variable_problem();
    const auto g = golden(p);
    const auto candidate = values(p, {-1, 2.75, 7, 0, 0, 0}, 3, inverse);
    ASSERT_EQ(judge_written_lengths(p, candidate, g).status, CaseStatus::pass);
    const Problem cut = written_prefix_problem(p, g);
    const GateResult gate = run_precision_gate(cut, cut_to_written_prefix(p, g, candidate), cut_to_written_prefix(p, g, g),
                                               cut_to_written_prefix(p, g, g), {});
    EXPECT_FALSE(gate.passed);
    EXPECT_NE(gate.reason.find("y"), std::string::npos) << gate.reason;
}

TEST(WrittenLength, AReferenceOfAnotherLengthOrAGoldenWithoutOneIsAnInternalError) {
    const Problem p = variable_problem();
    const auto g = golden(p);
    try {
        cut_to_written_prefix(p, g, values(p, {-1, 2.5, 7, 8, 0, 0}, 4, inverse));
        FAIL() << "expected an internal error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::internal);
    }
    try {
        judge_written_lengths(p, values(p, {-1, 2.5, 7, 0, 0, 0}, 3, inverse), values(p, {-1, 2.5, 7, 0, 0, 0}, -1, inverse));
        FAIL() << "expected an internal error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::internal);
        EXPECT_NE(std::string(e.what()).find("must set it"), std::string::npos) << e.what();
    }
    // A same-precision reference not computed yet (no values) passes through empty.
    ValueArgs<double> empty = values_for_specs<double>(p.outputs);
    for (auto& a : empty) a.one().v.clear();
    EXPECT_TRUE(cut_to_written_prefix(p, g, empty)[0].one().v.empty());
}

TEST(WrittenLength, FixedLengthProblemsHaveNothingToJudge) {
    Problem p = variable_problem();
    p.outputs[0].variable_length = false;
    EXPECT_FALSE(has_variable_length_outputs(p));
    EXPECT_EQ(judge_written_lengths(p, values(p, {1, 2, 3, 4, 5, 6}, -1, inverse), golden(p)).status, CaseStatus::pass);
}

TEST(WrittenLength, KernelCallBindsALengthSlotOnlyToVariableOutputs) {
    std::vector<Arg> inputs, outputs(2);
    outputs[0].name = "y";
    outputs[0].variable_length = true;
    outputs[0].tensors.emplace_back(TensorSpec{DType::f32, {6}});
    outputs[1].name = "inverse";
    outputs[1].tensors.emplace_back(TensorSpec{DType::i64, {6}});
    KernelCall call("unique", inputs, outputs, {}, 1);
    const hb_call& c = call.call();
    ASSERT_NE(c.outputs[0].written_length, nullptr);
    EXPECT_EQ(c.outputs[1].written_length, nullptr);
    EXPECT_EQ(*c.outputs[0].written_length, kWrittenLengthUnset);
    *c.outputs[0].written_length = 4;
    EXPECT_EQ(call.written_length(0), 4);
    EXPECT_EQ(call.written_length(1), -1);
    call.reset_written_lengths();
    EXPECT_EQ(call.written_length(0), kWrittenLengthUnset);
}

}  // namespace
}  // namespace hb
