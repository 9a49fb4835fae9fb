#include "measure/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace hb {

namespace {
double quantile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0;
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = static_cast<std::size_t>(std::ceil(pos));
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}
}  // namespace

SampleStats summarize(std::vector<double> samples) {
    SampleStats s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.count = static_cast<int>(samples.size());
    s.median = quantile(samples, 0.5);
    s.min = samples.front();
    s.max = samples.back();
    double sum = 0;
    for (double v : samples) sum += v;
    s.mean = sum / s.count;
    double sq = 0;
    for (double v : samples) sq += (v - s.mean) * (v - s.mean);
    s.stddev = s.count > 1 ? std::sqrt(sq / (s.count - 1)) : 0;
    s.relative_iqr = s.median > 0 ? (quantile(samples, 0.75) - quantile(samples, 0.25)) / s.median : 0;
    return s;
}

}  // namespace hb
