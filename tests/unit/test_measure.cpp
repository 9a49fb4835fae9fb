// src/measure/: the stopping rule and its error estimate, the clamp of a call's time into the
// harness's window, the secret timed-input seeds and the inputs they draw, the slot count of a
// plan, and the order of cold_measure's calls over the input slots (against a session that
// records them; the loop runs against a real worker in tests/integration).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
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

TEST(TimingPlan, WarmsEverySlotButTheBaseInputsOnceAndSaysHowManyCalls) {
    TimingPlan plan;
    EXPECT_EQ(TimingPlan::input_slots, 2);
    plan.warmup = 0;
    EXPECT_EQ(plan.warmup_calls(), 1);
    EXPECT_EQ(plan.warmup_calls(4), 3);
    plan.warmup = 1;
    EXPECT_EQ(plan.warmup_calls(), 1);
    plan.warmup = 5;
    EXPECT_EQ(plan.warmup_calls(), 5);
    plan.warmup = 1;
    EXPECT_NE(plan.describe().find("1 warmup call (--warmup 1, at least one on each of the 2 input slots but the base "
                                   "inputs', which the correctness calls warmed)"),
              std::string::npos)
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

// A session that runs nothing: it records which slot each call names, and every call takes
// 1 ms on the harness's clock. Its buffers are sigmoid case 13's, two input slots.
class RecordingSession final : public KernelSession {
  public:
    explicit RecordingSession(const SigmoidCase& c) {
        for (int s = 0; s < TimingPlan::input_slots; ++s) {
            slot_memory_.push_back(allocate_args(c.problem.inputs, false));
            buffers_.input_slots.push_back(views_of(slot_memory_.back()));
        }
        output_memory_ = allocate_args(c.problem.outputs, false);
        buffers_.outputs = views_of(output_memory_);
    }
    CallResult load_case(const Problem&, int, Clock::time_point) override { return {}; }
    const CaseBuffers& buffers() const override { return buffers_; }
    CallResult call(int slot, Clock::time_point, CallCheck) override {
        slots.push_back(slot);
        CallResult r;
        r.window_ns = 1e6;
        r.worker_call_ns = 1e6;
        return r;
    }
    CallResult finish_calls(Clock::time_point) override { return {}; }
    std::vector<double> null_calls(int count, Clock::time_point) override { return std::vector<double>(count, 1e3); }
    void close() override {}
    SessionFacts facts() const override { return {}; }

    std::vector<int> slots;  // every call's slot, in order

  private:
    static std::vector<ArgView> views_of(std::vector<Arg>& args) {
        std::vector<ArgView> views;
        for (auto& a : args) {
            ArgView v;
            v.name = a.name;
            v.present = a.present;
            for (auto& t : a.tensors) v.tensors.push_back(TensorView{t.spec, static_cast<char*>(t.data())});
            views.push_back(std::move(v));
        }
        return views;
    }
    std::vector<std::vector<Arg>> slot_memory_;
    std::vector<Arg> output_memory_;
    CaseBuffers buffers_;
};

// The caller's correctness calls were on slot 0: warmups go to the other slot(s) first, no
// timed call is a slot's first, and timed calls alternate so that consecutive ones read
// different slots.
TEST(MeasureCold, WarmsTheSlotsTheCorrectnessCallsDidNotUseThenAlternates) {
    const SigmoidCase c = sigmoid_case(13);
    for (int warmup : {0, 1, 3}) {
        RecordingSession session(c);
        TimingPlan plan;
        plan.warmup = warmup;
        plan.stopping.min_calls = 6;
        plan.stopping.max_calls = 6;
        std::mt19937_64 rng(1);
        const ColdMeasurement m =
            measure_cold(session, c.problem, *c.op, plan, TimedInputSeeds(7), rng, Clock::now() + std::chrono::seconds(60));
        ASSERT_EQ(m.outcome, RunOutcome::ok) << m.message;
        const int warmups = plan.warmup_calls();
        EXPECT_EQ(m.warmup_calls, warmups);
        EXPECT_EQ(m.warmup_calls, std::max(warmup, 1));
        ASSERT_EQ(session.slots.size(), static_cast<std::size_t>(warmups + 6));
        EXPECT_EQ(session.slots.front(), 1) << "the first warmup is on the slot the correctness calls did not use";
        std::set<int> before_timing{0};  // slot 0 had the correctness calls
        for (int i = 0; i < warmups; ++i) before_timing.insert(session.slots[static_cast<std::size_t>(i)]);
        EXPECT_EQ(before_timing.size(), static_cast<std::size_t>(TimingPlan::input_slots)) << "every slot called before timing";
        for (std::size_t i = 1; i < session.slots.size(); ++i)
            EXPECT_NE(session.slots[i], session.slots[i - 1]) << "call " << i << " reads the slot the call before read";
        EXPECT_EQ(m.samples_ns.size(), 6u);
        EXPECT_EQ(m.kept.size(), 3u);
    }
}

}  // namespace
}  // namespace hb
