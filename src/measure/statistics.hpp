// Summary statistics of timing samples: the median is the statistic (methodology 4), with
// min, max and spread reported for dispersion.
#pragma once

#include <vector>

namespace hb {

struct SampleStats {
    int count = 0;
    double median = 0;
    double min = 0;
    double max = 0;
    double mean = 0;
    double stddev = 0;
    // (p75 - p25) / median: robust relative spread.
    double relative_iqr = 0;
};

SampleStats summarize(std::vector<double> samples);

}  // namespace hb
