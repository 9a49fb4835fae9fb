#include "report/case_plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "report/html_page.hpp"
#include "report/run_summary.hpp"

namespace hb {

namespace {

constexpr double kWidth = 390, kLeft = 54, kRight = 20, kTop = 10, kPlotHeight = 180;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kBandY = kTop + kPlotHeight + 44;  // centre of the "not timed" band
constexpr double kHeight = kBandY + 14;

bool positive(double v) { return v > 0 && std::isfinite(v); }

// Decades [lo, hi] of log10 covering every value, at least one decade wide.
struct LogAxis {
    int lo = 0, hi = 1;
    static LogAxis covering(const std::vector<double>& values) {
        LogAxis a;
        if (values.empty()) return a;
        const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
        a.lo = static_cast<int>(std::floor(std::log10(*mn)));
        a.hi = static_cast<int>(std::ceil(std::log10(*mx)));
        if (a.hi <= a.lo) a.hi = a.lo + 1;
        return a;
    }
    double fraction(double v) const { return (std::log10(v) - lo) / (hi - lo); }
};

std::string decade_label(int exponent) {
    // 10^-3 us = 1 ns ... 10^6 us = 1 s
    static const char* const units[] = {"ns", "µs", "ms", "s"};
    const int group = std::clamp(static_cast<int>(std::floor((exponent + 3) / 3.0)), 0, 3);
    const int shift = exponent - 3 * (group - 1);
    if (shift < 0 || shift > 5) return fmt::format("1e{} µs", exponent);
    return fmt::format("{} {}", static_cast<long long>(std::llround(std::pow(10.0, shift))), units[group]);
}

std::string num(double v) { return fmt::format("{:.1f}", v); }

std::string case_title(const CaseResult& c) {
    std::string t = fmt::format("{} case {}: {}\n{}", c.op, c.case_id, status_name(c.status), c.signature);
    if (!c.value_range.empty()) t += "  range " + c.value_range;
    t += fmt::format("\nT_cand {} µs · T_base {} µs", format_us(c.t_cand_us), format_us(c.t_base_us));
    if (positive(c.t_base_measured_us) && c.t_base_measured_us != c.t_base_us)
        t += fmt::format(" (measured {}, capped)", format_us(c.t_base_measured_us));
    t += fmt::format(" · T_HW {} µs", format_us(c.t_hw_us));
    if (!c.bottleneck.empty()) t += fmt::format(" ({}: {})", c.bottleneck, c.bottleneck_unit);
    if (c.passed() && positive(c.t_cand_us)) t += fmt::format("\ns_i {:.3f} · speedup {:.2f}x", c.score_i, c.speedup);
    if (!c.message.empty()) t += "\n" + c.message;
    for (const auto& a : c.audit) t += "\naudit: " + a;
    return t;
}

}  // namespace

void write_case_plot(std::ostream& out, const OperatorResult& op, int plot_id) {
    std::vector<double> xs, ys;
    for (const auto& c : op.cases) {
        if (!positive(c.t_hw_us)) continue;
        xs.push_back(c.t_hw_us);
        ys.push_back(c.t_hw_us);
        if (c.candidate.measured() && positive(c.t_cand_us)) {
            ys.push_back(c.t_cand_us);
            if (positive(c.t_base_us)) ys.push_back(c.t_base_us);
        }
    }
    const LogAxis xa = LogAxis::covering(xs), ya = LogAxis::covering(ys);
    auto px = [&](double v) { return kLeft + xa.fraction(v) * kPlotWidth; };
    auto py = [&](double v) { return kTop + (1 - ya.fraction(v)) * kPlotHeight; };

    out << fmt::format("<svg class=\"caseplot\" id=\"plot-{0}\" data-op=\"{1}\" width=\"{2}\" height=\"{3}\" "
                       "viewBox=\"0 0 {2} {3}\" role=\"img\" "
                       "aria-label=\"{1}: T_cand and T_base against T_HW\">\n",
                       plot_id, html::escape(op.op), kWidth, kHeight);
    out << fmt::format("<defs><clipPath id=\"clip-{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath></defs>\n",
                       plot_id, kLeft, kTop, kPlotWidth, kPlotHeight);
    // Grid and axes, a tick per decade (every other one labelled when there are many).
    const int xstep = xa.hi - xa.lo > 6 ? 2 : 1, ystep = ya.hi - ya.lo > 6 ? 2 : 1;
    if (!xs.empty()) {
        for (int e = xa.lo; e <= xa.hi; ++e) {
            const double x = px(std::pow(10.0, e));
            out << fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", num(x), kTop,
                               kTop + kPlotHeight);
            if ((e - xa.lo) % xstep == 0)
                out << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(x),
                                   kTop + kPlotHeight + 13, decade_label(e));
        }
        for (int e = ya.lo; e <= ya.hi; ++e) {
            const double y = py(std::pow(10.0, e));
            out << fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>", kLeft, num(y),
                               kLeft + kPlotWidth);
            if ((e - ya.lo) % ystep == 0)
                out << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", kLeft - 4, num(y + 3),
                                   decade_label(e));
        }
    } else {
        out << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no case has a T_HW: nothing to place</text>",
                           kLeft + kPlotWidth / 2, kTop + kPlotHeight / 2);
    }
    out << fmt::format("\n<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
                       "<line class=\"axis\" x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/>\n",
                       kLeft, kTop, kTop + kPlotHeight, kLeft + kPlotWidth);
    out << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">T_HW (the case's hardware limit)</text>\n",
                       kLeft + kPlotWidth / 2, kTop + kPlotHeight + 27);
    out << fmt::format("<text transform=\"translate(11 {}) rotate(-90)\" text-anchor=\"middle\">time per call</text>\n",
                       kTop + kPlotHeight / 2);
    // The limit and the baseline cap, clipped to the plot.
    if (!xs.empty()) {
        const double a = std::pow(10.0, std::min(xa.lo, ya.lo)), b = std::pow(10.0, std::max(xa.hi, ya.hi) + 1);
        out << fmt::format("<g clip-path=\"url(#clip-{})\">", plot_id);
        out << fmt::format("<line class=\"diag\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"><title>T = T_HW: the hardware "
                           "limit</title></line>",
                           num(px(a)), num(py(a)), num(px(b)), num(py(b)));
        out << fmt::format("<line class=\"cap\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"><title>T = 10 T_HW: the cap "
                           "on T_base</title></line></g>\n",
                           num(px(a)), num(py(10 * a)), num(px(b)), num(py(10 * b)));
    }
    out << fmt::format("<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\"/>"
                       "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">not timed</text>\n",
                       kLeft, kBandY - 6, kPlotWidth, kLeft - 4, num(kBandY + 3));

    // One <g class="case"> per case: its dot (and T_base, joined), its tooltip.
    const std::size_t n = op.cases.size();
    for (std::size_t k = 0; k < n; ++k) {
        const CaseResult& c = op.cases[k];
        const bool placed = positive(c.t_hw_us) && c.candidate.measured() && positive(c.t_cand_us);
        // IMPOSSIBLE_TIME is an audit finding its colour already shows; the ring marks the others.
        const bool flagged = !c.audit.empty() && c.status != CaseStatus::impossible_time;
        out << fmt::format("<g class=\"case {}{}\" data-case=\"{}\" data-status=\"{}\"><title>{}</title>",
                           html::status_class(c.status), flagged ? " flagged" : "", c.case_id,
                           status_name(c.status), html::escape(case_title(c)));
        if (placed) {
            const double x = px(c.t_hw_us), y = py(c.t_cand_us);
            if (positive(c.t_base_us)) {
                const double yb = py(c.t_base_us);
                out << fmt::format("<line class=\"link\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
                                   "<rect class=\"base\" x=\"{3}\" y=\"{4}\" width=\"5\" height=\"5\"/>",
                                   num(x), num(yb), num(y), num(x - 2.5), num(yb - 2.5));
            }
            out << fmt::format("<circle class=\"mark\" cx=\"{}\" cy=\"{}\" r=\"3.6\"/>", num(x), num(y));
        } else {
            const double x = positive(c.t_hw_us) && !xs.empty() ? px(c.t_hw_us)
                                                                 : kLeft + (k + 0.5) / static_cast<double>(n) * kPlotWidth;
            out << fmt::format("<path class=\"mark\" d=\"M{0} {1}l4 4l-4 4l-4 -4z\"/>", num(x), num(kBandY - 4));
        }
        out << "</g>\n";
    }
    out << "</svg>\n";
}

}  // namespace hb
