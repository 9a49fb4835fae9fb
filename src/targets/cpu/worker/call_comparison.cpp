#include "targets/cpu/worker/call_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.hpp"

namespace hb::worker {

namespace {

// The difference between two values of one output element from two calls on identical
// inputs, on the scale the precision gate uses: relative to max(1, |a|, |b|) for floats,
// absolute for integers; infinite when only one is NaN or infinite.
double call_difference(double a, double b, bool floating) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
    if (a == b) return 0;
    if (std::isinf(a) || std::isinf(b)) return INFINITY;
    const double d = std::fabs(a - b);
    return floating ? d / std::max({1.0, std::fabs(a), std::fabs(b)}) : d;
}

}  // namespace

CallComparison compare_correctness_calls(const std::vector<Arg>& outputs, const std::vector<protocol::ArgLayout>& layout,
                                         const char* first_call, const std::vector<std::int64_t>& compared_entries) {
    CallComparison result;
    for (std::size_t a = 0; a < outputs.size(); ++a)
        for (std::size_t k = 0; k < outputs[a].tensors.size(); ++k) {
            const auto& t = outputs[a].tensors[k];
            const auto* first = reinterpret_cast<const unsigned char*>(first_call + layout[a].tensors[k].offset);
            const auto* second = static_cast<const unsigned char*>(t.data());
            const std::size_t esize = dtype_size(t.spec.dtype);
            const bool floating = is_floating(t.spec.dtype);
            std::int64_t n_unwritten = 0, n_differ = 0, first_unwritten = -1;
            double max_difference = 0;
            std::int64_t compared = t.numel();
            if (a < compared_entries.size() && compared_entries[a] >= 0 && !t.spec.shape.empty() && t.spec.shape[0] > 0)
                compared = std::min(compared, compared_entries[a] * (t.numel() / t.spec.shape[0]));
            for (std::int64_t i = 0; i < compared; ++i) {
                const auto* x = first + i * static_cast<std::int64_t>(esize);
                const auto* y = second + i * static_cast<std::int64_t>(esize);
                if (std::memcmp(x, y, esize) == 0) continue;
                bool all_ff = true, all_00 = true;
                for (std::size_t b = 0; b < esize; ++b) {
                    all_ff = all_ff && x[b] == 0xff;
                    all_00 = all_00 && y[b] == 0x00;
                }
                if (all_ff && all_00) {
                    if (first_unwritten < 0) first_unwritten = i;
                    ++n_unwritten;
                } else {
                    ++n_differ;
                    const auto at = static_cast<std::size_t>(i);
                    max_difference = std::max(max_difference, call_difference(load_element(first, at, t.spec.dtype),
                                                                              load_element(second, at, t.spec.dtype), floating));
                }
            }
            result.unwritten.push_back(
                {{"output", outputs[a].name}, {"index", k}, {"count", n_unwritten}, {"first", first_unwritten}});
            result.nondeterministic.push_back({{"output", outputs[a].name}, {"index", k}, {"count", n_differ},
                                               {"max_difference", std::isinf(max_difference) ? 1e300 : max_difference}});
        }
    return result;
}

}  // namespace hb::worker
