// When to stop timing a case: a strategy behind one interface (after nvbench's stopping
// criteria). The default, RelativeSpreadRule, stops once the median is known to a relative
// precision: its standard error, estimated robustly from the median absolute deviation,
// divided by the median. Bounds on the count and on the timed time keep every rule finite;
// a rule that hits a bound before its target says so (the case is flagged timing_unstable).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace hb {

struct StoppingBounds {
    int min_calls = 5;
    // 50: a case still above the precision target after 50 calls is noisy, and 200 calls
    // (each on freshly generated inputs) cost 4x the time for half the error; measured on a
    // cold levels 1-2 run, the baselines of such cases took most of the evaluation.
    int max_calls = 50;
    double min_time_s = 0;     // sum of timed windows before the rule may stop
    double max_time_s = 0.5;   // sum of timed windows after which it must stop
    double relative_precision = 0.015;  // target standard error of the median, relative

    std::string describe() const;
};

struct StoppingState {
    bool stop = false;
    bool target_met = false;      // false when a bound stopped it first
    double relative_error = 0;    // the estimate when it stopped (or now)
    std::string reason;           // "precision", "max_calls", "max_time"
};

class StoppingRule {
  public:
    virtual ~StoppingRule() = default;
    // `samples_ns`: the timed calls so far, in order.
    virtual StoppingState check(const std::vector<double>& samples_ns) const = 0;
    virtual std::string name() const = 0;
};

class RelativeSpreadRule final : public StoppingRule {
  public:
    explicit RelativeSpreadRule(StoppingBounds bounds) : bounds_(bounds) {}
    StoppingState check(const std::vector<double>& samples_ns) const override;
    std::string name() const override { return "relative_spread"; }

  private:
    StoppingBounds bounds_;
};

// The relative standard error of the median of `samples`: 1.2533 * 1.4826 * MAD / (median
// * sqrt(n)), the normal-theory error with the MAD as a robust sigma; infinite for fewer
// than two samples or a non-positive median.
double median_relative_error(std::vector<double> samples);

}  // namespace hb
