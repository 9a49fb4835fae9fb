#include "measure/stopping_rule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace hb {

namespace {
double median_of(std::vector<double>& v) {
    const std::size_t n = v.size();
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
    double m = v[n / 2];
    if (n % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2))) / 2;
    return m;
}
}  // namespace

std::string StoppingBounds::describe() const {
    return fmt::format("stop when the median's relative standard error is at most {:.1f}% (at least {} and at most {} "
                       "timed calls, at most {:.2f} s of timed calls)",
                       relative_precision * 100, min_calls, max_calls, max_time_s);
}

double median_relative_error(std::vector<double> samples) {
    const std::size_t n = samples.size();
    if (n < 2) return std::numeric_limits<double>::infinity();
    const double median = median_of(samples);
    if (!(median > 0)) return std::numeric_limits<double>::infinity();
    for (double& v : samples) v = std::fabs(v - median);
    const double mad = median_of(samples);
    return 1.2533 * 1.4826 * mad / (median * std::sqrt(static_cast<double>(n)));
}

StoppingState RelativeSpreadRule::check(const std::vector<double>& samples_ns) const {
    StoppingState s;
    const int n = static_cast<int>(samples_ns.size());
    double timed_s = 0;
    for (double v : samples_ns) timed_s += v * 1e-9;
    s.relative_error = median_relative_error(samples_ns);
    if (n >= bounds_.min_calls && timed_s >= bounds_.min_time_s && s.relative_error <= bounds_.relative_precision) {
        s.stop = s.target_met = true;
        s.reason = "precision";
    } else if (n >= bounds_.max_calls) {
        s.stop = true;
        s.reason = "max_calls";
    } else if (n >= bounds_.min_calls && timed_s >= bounds_.max_time_s) {
        s.stop = true;
        s.reason = "max_time";
    }
    return s;
}

}  // namespace hb
