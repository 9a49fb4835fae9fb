#include "report/run_summary.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

namespace hb {

double mean_passing_score(const OperatorResult& op) {
    double sum = 0;
    int n = 0;
    for (const auto& c : op.cases)
        if (c.passed()) {
            sum += c.score_i;
            ++n;
        }
    return n ? sum / n : 0;
}

std::string failures_summary(const OperatorResult& op) {
    if (op.state == "not_implemented") return "not implemented by hapbench";
    std::map<std::string, int> counts;
    for (const auto& c : op.cases)
        if (!c.passed()) ++counts[status_name(c.status)];
    std::string s;
    for (const auto& [name, n] : counts) s += (s.empty() ? "" : ", ") + fmt::format("{} {}", n, name);
    return s;
}

std::string hardware_line(const RunResult& run) {
    if (!run.hardware) return run.no_perf ? "none (not used: --no-perf)" : "none";
    return fmt::format("{} ({})", run.hardware->name, peak_origin_name(run.hardware->provenance.origin));
}

std::string format_us(double v) {
    if (!(v > 0) || !std::isfinite(v)) return "-";
    if (v >= 1e5) return fmt::format("{:.0f}", v);
    if (v >= 100) return fmt::format("{:.1f}", v);
    return fmt::format("{:.2f}", v);
}

}  // namespace hb
