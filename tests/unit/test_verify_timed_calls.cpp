// How many kept timed calls are checked side by side (eval/verify_timed_calls.hpp): as many
// as the threads allow while their estimated memory fits the budget, and always at least one.
#include <gtest/gtest.h>

#include "eval/verify_timed_calls.hpp"

namespace hb {
namespace {

// One input and one output, both float32 of `elements` elements.
Problem elementwise_problem(std::int64_t elements) {
    Problem p;
    p.inputs.push_back(ArgSpec{"x", false, true, {TensorSpec{DType::f32, {elements}}}});
    p.outputs.push_back(ArgSpec{"y", false, true, {TensorSpec{DType::f32, {elements}}}});
    return p;
}

TEST(VerificationWidth, EachElementCountsItsDtypeAndTwoFp64Copies) {
    EXPECT_EQ(verification_bytes(elementwise_problem(1000)), 2u * 1000u * (4u + 16u));
    Problem with_half = elementwise_problem(10);
    with_half.inputs.push_back(ArgSpec{"w", true, true, {TensorSpec{DType::f16, {3}}, TensorSpec{DType::f16, {5}}}});
    EXPECT_EQ(verification_bytes(with_half), 2u * 10u * 20u + 8u * 18u);
}

TEST(VerificationWidth, SmallCasesUseEveryThreadAndLargeOnesOneAtATime) {
    EXPECT_EQ(verification_width(elementwise_problem(1000), 2), 2);
    EXPECT_EQ(verification_width(elementwise_problem(1000), 8), 8);
    // Tuned sigmoid's case 5: 22.7 million float32 elements, about 900 MB a check.
    EXPECT_EQ(verification_width(elementwise_problem(22'675'201), 2), 1);
    // Half the budget a check: two fit, not three.
    const std::int64_t half = static_cast<std::int64_t>(kVerificationMemoryBytes / 2 / (2 * 20));
    EXPECT_EQ(verification_width(elementwise_problem(half), 8), 2);
}

TEST(VerificationWidth, NeverBelowOneWhateverTheThreadsOrTheSize) {
    EXPECT_EQ(verification_width(elementwise_problem(1000), 0), 1);
    EXPECT_EQ(verification_width(elementwise_problem(1000), -3), 1);
    EXPECT_EQ(verification_width(elementwise_problem(0), 4), 4);
    EXPECT_EQ(verification_width(elementwise_problem(std::int64_t{1} << 40), 4), 1);
}

}  // namespace
}  // namespace hb
