// src/measure/: the stopping rule and its error estimate, the clamp of a call's time into the
// harness's window, the secret timed-input seeds and the inputs they draw, the slot count of a
// plan. (cold_measure's loop runs against a real worker in tests/integration.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "measure/cold_measure.hpp"
#include "measure/fresh_inputs.hpp"
#include "measure/statistics.hpp"
#include "measure/stopping_rule.hpp"
#include "measure/timing_plan.hpp"
#include "ops/registry.hpp"
#include "ops/resolve.hpp"
#include "suite/inputs.hpp"
#include "suite/task_dir.hpp"

namespace hb {
namespace {

TEST(MedianRelativeError, NormalTheoryErrorWithTheMadAsSigma) {
    // median 3, |x - 3| = {2, 1, 0, 1, 2}: MAD 1.
    EXPECT_NEAR(median_relative_error({5, 1, 3, 2, 4}), 1.2533 * 1.4826 / (3 * std::sqrt(5.0)), 1e-12);
    EXPECT_EQ(median_relative_error({7, 7, 7, 7}), 0);
    EXPECT_TRUE(std::isinf(median_relative_error({1})));
    EXPECT_TRUE(std::isinf(median_relative_error({0, 0, 0})));
}

StoppingBounds bounds(int min_calls, int max_calls, double max_time_s) {
    StoppingBounds b;
    b.min_calls = min_calls;
    b.max_calls = max_calls;
    b.max_time_s = max_time_s;
    return b;
}

TEST(RelativeSpreadRule, StopsOnPrecisionOnlyAfterTheMinimumCount) {
    const RelativeSpreadRule rule(bounds(5, 50, 0.5));
    std::vector<double> samples;
    for (int n = 1; n <= 5; ++n) {
        samples.push_back(1000);  // 1 us each, no spread
        const StoppingState s = rule.check(samples);
        EXPECT_EQ(s.stop, n == 5) << n;
        if (s.stop) {
            EXPECT_TRUE(s.target_met);
            EXPECT_EQ(s.reason, "precision");
        }
    }
}

TEST(RelativeSpreadRule, WideSpreadStopsAtTheCallBoundUnmet) {
    const RelativeSpreadRule rule(bounds(5, 50, 0.5));
    std::vector<double> samples;
    StoppingState s;
    while (!s.stop) {
        samples.push_back(1000 + static_cast<double>(samples.size() * 37 % 100) * 20);  // spread over 1 to 3 us, no ties
        s = rule.check(samples);
    }
    EXPECT_EQ(samples.size(), 50u);
    EXPECT_EQ(s.reason, "max_calls");
    EXPECT_FALSE(s.target_met);
    EXPECT_GT(s.relative_error, 0.015);
}

TEST(RelativeSpreadRule, LongCallsStopAtTheTimeBoundAfterTheMinimum) {
    const RelativeSpreadRule rule(bounds(5, 50, 0.5));
    std::vector<double> samples;
    StoppingState s;
    while (!s.stop) {
        samples.push_back(200e6 + static_cast<double>(samples.size() % 5) * 30e6);  // 0.2 to 0.32 s: wide, past 0.5 s at once
        s = rule.check(samples);
    }
    EXPECT_EQ(samples.size(), 5u);  // the time bound waits for the minimum count
    EXPECT_EQ(s.reason, "max_time");
    EXPECT_FALSE(s.target_met);
}

TEST(CallTime, TheWorkersMeasureIsClampedIntoTheHarnessWindow) {
    // Window 100 us, null calls' p95 8 us: the call took between 92 and 100 us.
    const CallTime inside = call_time(100e3, 95e3, 8e3);
    EXPECT_EQ(inside.ns, 95e3);
    EXPECT_FALSE(inside.clamped);
    const CallTime forged_short = call_time(100e3, 1e3, 8e3);  // a worker claiming 1 us
    EXPECT_EQ(forged_short.ns, 92e3);
    EXPECT_TRUE(forged_short.clamped);
    const CallTime too_long = call_time(100e3, 150e3, 8e3);
    EXPECT_EQ(too_long.ns, 100e3);
    EXPECT_TRUE(too_long.clamped);
    const CallTime tiny_window = call_time(5e3, 1e3, 8e3);  // window below the overhead: never negative
    EXPECT_EQ(tiny_window.ns, 1e3);
    EXPECT_FALSE(tiny_window.clamped);
}

TEST(SampleStats, MedianSpreadAndMoments) {
    const SampleStats s = summarize({4, 1, 3, 2, 100});
    EXPECT_EQ(s.count, 5);
    EXPECT_EQ(s.median, 3);
    EXPECT_EQ(s.min, 1);
    EXPECT_EQ(s.max, 100);
    EXPECT_NEAR(s.mean, 22, 1e-12);
    EXPECT_GT(s.relative_iqr, 0);
}

TEST(TimingPlan, WarmsEverySlotAtLeastOnceAndSaysHowManyCalls) {
    TimingPlan plan;
    EXPECT_EQ(TimingPlan::input_slots, 2);
    plan.warmup = 0;
    EXPECT_EQ(plan.warmup_calls(), 2);
    plan.warmup = 1;
    EXPECT_EQ(plan.warmup_calls(), 2);
    plan.warmup = 5;
    EXPECT_EQ(plan.warmup_calls(), 5);
    plan.warmup = 1;
    EXPECT_NE(plan.describe().find("2 warmup calls (--warmup 1, at least one on each of the 2 input slots)"), std::string::npos)
        << plan.describe();
}

// Sigmoid's shipped case `id` as a problem, with its inputs allocated.
struct SigmoidCase {
    const Operator* op = nullptr;
    Problem problem;
    std::vector<Arg> inputs;
};

SigmoidCase sigmoid_case(std::int64_t id) {
    const TaskDir dir = load_task_dir(std::string(HB_SOURCE_DIR) + "/suite", "cpu", {"sigmoid"});
    const TaskEntry& entry = dir.tasks.at(0);
    SigmoidCase c;
    c.op = find_operator("sigmoid");
    for (const auto& spec : entry.cases)
        if (spec.case_id == id) c.problem = resolve_problem(entry.proto, *c.op, spec);
    c.inputs = allocate_args(c.problem.inputs, false);
    return c;
}

std::string bytes_of(const std::vector<Arg>& args) {
    const auto& t = args.at(0).tensors.at(0);
    return std::string(static_cast<const char*>(t.data()), t.bytes());
}

TEST(TimedInputSeeds, EveryCallCaseAndSecretGetsItsOwnSeed) {
    const SigmoidCase a = sigmoid_case(13), b = sigmoid_case(15);
    const TimedInputSeeds seeds(42), other(43);
    std::set<std::uint64_t> seen;
    for (int k = 1; k <= 100; ++k) {
        EXPECT_TRUE(seen.insert(seeds.seed(a.problem, k)).second) << k;
        EXPECT_TRUE(seen.insert(seeds.seed(b.problem, k)).second) << k;
        EXPECT_TRUE(seen.insert(other.seed(a.problem, k)).second) << k;
        EXPECT_EQ(seeds.seed(a.problem, k), TimedInputSeeds(42).seed(a.problem, k));
    }
    EXPECT_NE(TimedInputSeeds().seed(a.problem, 1), TimedInputSeeds().seed(a.problem, 1));  // fresh secrets
}

TEST(FreshInputs, EachSeedDrawsOtherValuesAndOneSeedTheSameOnes) {
    SigmoidCase c = sigmoid_case(13);
    fill_timed_inputs(c.problem, *c.op, 1, c.inputs);
    const std::string first = bytes_of(c.inputs);
    fill_timed_inputs(c.problem, *c.op, 2, c.inputs);
    const std::string second = bytes_of(c.inputs);
    fill_timed_inputs(c.problem, *c.op, 1, c.inputs);
    EXPECT_EQ(bytes_of(c.inputs), first);
    EXPECT_NE(second, first);
    // Not a shift of the other either: few positions agree.
    std::size_t equal = 0;
    for (std::size_t i = 0; i < first.size(); i += 4) equal += first.compare(i, 4, second, i, 4) == 0;
    EXPECT_LT(equal, first.size() / 4 / 100);
}

TEST(FreshInputs, AConstantRangeCaseStillDiffersBetweenTimedCalls) {
    SigmoidCase c = sigmoid_case(3);  // float32 over [0, 0]
    fill_timed_inputs(c.problem, *c.op, 1, c.inputs);
    const std::string first = bytes_of(c.inputs);
    fill_timed_inputs(c.problem, *c.op, 2, c.inputs);
    EXPECT_NE(bytes_of(c.inputs), first) << "marked elements make every timed input its own";
    EXPECT_NE(first, std::string(first.size(), '\0'));
}

// Before a timed call: the workspace and data-dependent outputs are poisoned (they could carry
// state between calls), an output every call must write whole is left as it is.
TEST(PrepareTimedCall, PoisonsOnlyWhatCanCarryState) {
    std::vector<char> fixed(64, 7), variable(64, 7), workspace(128, 7), input(32, 7);
    auto view = [](const std::string& name, bool variable_length, std::vector<char>& bytes) {
        ArgView v;
        v.name = name;
        v.variable_length = variable_length;
        v.tensors.push_back(TensorView{TensorSpec{DType::u8, Shape{static_cast<std::int64_t>(bytes.size())}}, bytes.data()});
        return v;
    };
    CaseBuffers buffers;
    buffers.input_slots.push_back({view("x", false, input)});
    buffers.outputs = {view("y", false, fixed), view("indices", true, variable)};
    buffers.workspace = workspace.data();
    buffers.workspace_bytes = workspace.size();
    prepare_timed_call_buffers(buffers, 0);
    EXPECT_EQ(fixed, std::vector<char>(64, 7));
    EXPECT_EQ(input, std::vector<char>(32, 7));
    EXPECT_EQ(variable, std::vector<char>(64, static_cast<char>(0xff)));
    EXPECT_EQ(workspace, std::vector<char>(128, static_cast<char>(0xff)));
    // The correctness calls' preparation poisons every output.
    prepare_call_buffers(buffers, 0, 0x00);
    EXPECT_EQ(fixed, std::vector<char>(64, 0));
    EXPECT_EQ(variable, std::vector<char>(64, 0));
}

// A kept timed call replaced by a later one is copied into the memory it already holds.
TEST(CopyArgsInto, ReusesTheKeptCallsMemoryWhenTheLayoutMatches) {
    std::vector<float> a(1000, 1.5f), b(1000, 2.5f);
    auto views = [](std::vector<float>& v) {
        ArgView view;
        view.name = "y";
        view.tensors.push_back(TensorView{TensorSpec{DType::f32, Shape{1000}}, reinterpret_cast<char*>(v.data())});
        return std::vector<ArgView>{view};
    };
    std::vector<Arg> kept = copy_args(views(a));
    const void* memory = kept[0].tensors[0].data();
    copy_args_into(views(b), {}, kept);
    EXPECT_EQ(kept[0].tensors[0].data(), memory);
    EXPECT_EQ(kept[0].tensors[0].get(999), 2.5);
    // Another layout: a fresh copy.
    std::vector<float> c(10, 3.5f);
    ArgView small;
    small.name = "y";
    small.tensors.push_back(TensorView{TensorSpec{DType::f32, Shape{10}}, reinterpret_cast<char*>(c.data())});
    copy_args_into({small}, {}, kept);
    ASSERT_EQ(kept[0].tensors[0].numel(), 10);
    EXPECT_EQ(kept[0].tensors[0].get(9), 3.5);
}

}  // namespace
}  // namespace hb
