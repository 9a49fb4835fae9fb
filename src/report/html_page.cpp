#include "report/html_page.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace hb::html {

namespace {

// System fonts only: DejaVu on Debian, whatever sans-serif the reader's machine has.
const char* const kStyle = R"css(
:root { --pass: #2e7d32; --audit: #8e24aa; --wrong: #ef6c00; --broken: #c62828; --notrun: #9e9e9e;
        --ink: #1f2328; --muted: #59636e; --rule: #d1d9e0; --band: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: var(--ink); margin: 0 auto;
       max-width: 1500px; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 4px 0 2px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--rule); }
h3 { font-size: 14px; margin: 0 0 4px; }
p.note, .muted { color: var(--muted); } p.note { margin: 4px 0 10px; max-width: 1100px; }
code, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 10px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.scores { display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0; }
.score { border: 1px solid var(--rule); border-radius: 6px; padding: 6px 12px; background: var(--band); }
.score b { font-size: 20px; display: block; } .score span { color: var(--muted); font-size: 12px; }
nav a { margin-right: 14px; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
th { background: var(--band); font-weight: 600; white-space: nowrap; }
table.sortable th { cursor: pointer; } table.sortable th:hover { text-decoration: underline; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.msg { max-width: 720px; overflow-wrap: anywhere; } td.nowrap { white-space: nowrap; }
.bar { position: relative; display: inline-block; width: 140px; height: 14px; background: #eaeef2;
       border-radius: 2px; vertical-align: middle; margin-right: 6px; }
.bar > i { position: absolute; left: 0; top: 0; bottom: 0; background: #4878a8; border-radius: 2px; }
.bar > u { position: absolute; top: -2px; bottom: -2px; width: 2px; background: var(--ink); }
.st { display: inline-block; padding: 0 6px; border-radius: 3px; color: #fff; font-size: 12px; white-space: nowrap; }
.st.pass { background: var(--pass); } .st.audit { background: var(--audit); } .st.wrong { background: var(--wrong); }
.st.broken { background: var(--broken); } .st.notrun { background: var(--notrun); }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 6px 0; font-size: 13px; }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 50%;
       margin-right: 5px; background: var(--c); }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(390px, 1fr)); gap: 14px; }
figure.plot { margin: 0; border: 1px solid var(--rule); border-radius: 6px; padding: 8px; }
figure.plot figcaption { font-size: 13px; margin-bottom: 4px; }
figure.plot details { font-size: 12px; } figure.plot details table { font-size: 12px; }
svg text { font: 10px "DejaVu Sans", Arial, sans-serif; fill: var(--muted); }
svg .axis { stroke: #8c959f; stroke-width: 1; } svg .grid { stroke: #eaeef2; stroke-width: 1; }
svg .diag { stroke: var(--ink); stroke-width: 1.2; } svg .cap { stroke: var(--muted); stroke-width: 1; stroke-dasharray: 4 3; }
svg .link { stroke: #afb8c1; stroke-width: 1; } svg .base { fill: #fff; stroke: #6e7781; stroke-width: 1; }
svg .case.pass .mark { fill: var(--pass); } svg .case.audit .mark { fill: var(--audit); }
svg .case.wrong .mark { fill: var(--wrong); } svg .case.broken .mark { fill: var(--broken); }
svg .case.notrun .mark { fill: var(--notrun); }
svg .case .mark { stroke: #fff; stroke-width: 0.6; } svg .case.flagged .mark { stroke: var(--ink); stroke-width: 1.4; }
svg .case:hover .mark { stroke: var(--ink); stroke-width: 2; }
svg .band { fill: var(--band); }
.stack { display: inline-flex; width: 320px; height: 14px; vertical-align: middle; border-radius: 2px; overflow: hidden; }
.stack > i { display: block; height: 100%; }
.up { color: var(--pass); } .down { color: var(--broken); }
)css";

// Click a header to sort by that column (numbers by data-v or their text), again to reverse.
const char* const kScript = R"js(
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var dir = th.getAttribute("data-dir") === "asc" ? -1 : 1;
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("data-dir"); });
      th.setAttribute("data-dir", dir === 1 ? "asc" : "desc");
      function key(row) {
        var cell = row.cells[col];
        var v = cell.getAttribute("data-v");
        if (v === null) v = cell.textContent.trim();
        var n = parseFloat(v);
        return isNaN(n) ? v : n;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (typeof x === "number" && typeof y === "number") return dir * (x - y);
        return dir * String(x).localeCompare(String(y));
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
)js";

}  // namespace

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += ch;
        }
    }
    return out;
}

void begin_page(std::ostream& out, const std::string& title) {
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        << "<title>" << escape(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
}

void end_page(std::ostream& out) { out << "<script>" << kScript << "</script>\n</body>\n</html>\n"; }

std::string_view status_class(CaseStatus status) {
    if (status == CaseStatus::pass) return "pass";
    if (status == CaseStatus::impossible_time) return "audit";
    if (status == CaseStatus::not_run) return "notrun";
    return is_structural_failure(status) ? "broken" : "wrong";
}

void status_legend(std::ostream& out) {
    out << "<div class=\"legend\">"
        << "<span style=\"--c: var(--pass)\">PASS</span>"
        << "<span style=\"--c: var(--audit)\">IMPOSSIBLE_TIME (correct, flagged for audit)</span>"
        << "<span style=\"--c: var(--wrong)\">wrong output (PRECISION_FAIL, CACHED_OR_STALE_OUTPUT, NONDETERMINISTIC)</span>"
        << "<span style=\"--c: var(--broken)\">structural failure (crash, compile error, sandbox, ...)</span>"
        << "<span style=\"--c: var(--notrun)\">NOT_RUN</span>"
        << "</div>\n";
}

std::string score_bar(double value, double full, double mark, const std::string& label) {
    const double fraction = std::isfinite(value) && full > 0 ? std::clamp(value / full, 0.0, 1.0) : 0.0;
    return fmt::format("<span class=\"bar\"><i style=\"width:{:.1f}%\"></i><u style=\"left:{:.1f}%\"></u></span>{}",
                       100 * fraction, 100 * std::clamp(mark / full, 0.0, 1.0), escape(label));
}

}  // namespace hb::html
