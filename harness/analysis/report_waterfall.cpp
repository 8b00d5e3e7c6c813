// `report`: the accounting of one parent phase drawn as a waterfall chart (inline SVG, so the
// HTML report stays one file and needs no plotting library for it).
//
// One row per term, top to bottom in the accounting's order (children by size, overlap,
// remainder), then the parent's total change. Each term's bar floats from the running total
// before it to the running total after it; the total's bar starts at 0, so it ends where the
// last term ends. Red adds time, green saves it; a term whose CI includes 0 is drawn pale, and
// its CI is drawn as a whisker around the bar's end.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "harness/analysis/report.hpp"

namespace cuzk::report {
namespace {

// Named for the chart: the unity build puts this file beside the forest plot's, whose layout
// constants are in the same namespace.
constexpr double kWaterfallLabelW = 230, kWaterfallBarW = 520, kWaterfallValueW = 200, kWaterfallRowH = 22,
                 kWaterfallTop = 30, kWaterfallBottom = 26;

std::string label_of(const AccountingTerm& t) {
  if (t.kind != "child") return t.kind;
  auto slash = t.phase.rfind('/');
  std::string s = slash == std::string::npos ? t.phase : t.phase.substr(slash + 1);
  if (t.only_in) s += " (" + only_in_text(*t.only_in) + ")";
  if (t.concurrent) s += " (concurrent)";
  return s;
}


// A signed duration in the chart's unit: ms, or us where the whole scale is under a millisecond
// (a trace A/B's kernels move by microseconds).
std::string signed_in(double ns, bool micro) {
  if (!micro) return signed_ms(ns);
  return fmt::format("{}{:.1f} us", ns >= 0 ? "+" : "-", std::fabs(ns) / 1e3);
}

}  // namespace

std::string waterfall_svg(const Accounting& a, const std::string& measure) {
  struct Bar {
    std::string label;
    double from, to, lo, hi;  // ns; [lo, hi]: the CI of the bar's end (NaN: none)
    bool significant, total;
  };
  std::vector<Bar> bars;
  double run = 0;
  for (const auto& t : a.terms) {
    bars.push_back({label_of(t), run, run + t.delta, run + t.ci_low, run + t.ci_high, t.significant, false});
    run += t.delta;
  }
  bars.push_back({a.parent + " (total)", 0, a.delta, a.ci_low, a.ci_high, a.significant, true});

  double lo = 0, hi = 0;
  for (const auto& b : bars)
    for (double v : {b.from, b.to, b.lo, b.hi})
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  if (hi - lo <= 0) hi = lo + 1;
  const bool micro = hi - lo < 1e6;
  const double pad = 0.04 * (hi - lo);
  lo -= pad;
  hi += pad;
  auto x = [&](double ns) { return kWaterfallLabelW + (ns - lo) / (hi - lo) * kWaterfallBarW; };

  const double height = kWaterfallTop + kWaterfallRowH * static_cast<double>(bars.size()) + kWaterfallBottom;
  const double width = kWaterfallLabelW + kWaterfallBarW + kWaterfallValueW;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"waterfall\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n",
      width, height, width, height);
  svg += fmt::format("<title>{}</title>\n", html_escape(format_accounting_line(a)));
  svg += fmt::format("<text x=\"0\" y=\"16\" font-weight=\"bold\">{}: {} ({}, change of medians B - A)</text>\n",
                     html_escape(a.parent), html_escape(signed_in(a.delta, micro)), html_escape(measure));
  // The zero line and the scale's ends.
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" stroke=\"#444\"/>\n", x(0), kWaterfallTop - 4,
                     height - kWaterfallBottom + 4);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"start\" fill=\"#666\">{}</text>\n", kWaterfallLabelW,
                     height - 6, html_escape(signed_in(lo, micro)));
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"end\" fill=\"#666\">{}</text>\n", kWaterfallLabelW + kWaterfallBarW,
                     height - 6, html_escape(signed_in(hi, micro)));
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = kWaterfallTop + kWaterfallRowH * static_cast<double>(i);
    const double x0 = x(std::min(b.from, b.to)), x1 = x(std::max(b.from, b.to));
    const char* fill = b.total ? "#3b6fb6" : (b.to >= b.from ? "#c9483c" : "#3f9a4f");
    svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\">{}</text>\n", kWaterfallLabelW - 8, y + 15,
                       html_escape(b.label));
    svg += fmt::format(
        "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\" fill-opacity=\"{}\"/>\n",
        b.total ? "total" : "term", x0, y + 3, std::max(1.0, x1 - x0), kWaterfallRowH - 6, fill, b.significant ? "0.9" : "0.3");
    if (std::isfinite(b.lo) && std::isfinite(b.hi))
      svg += fmt::format("<line class=\"ci\" x1=\"{:.1f}\" y1=\"{:.0f}\" x2=\"{:.1f}\" y2=\"{:.0f}\" stroke=\"#222\"/>\n",
                         x(b.lo), y + kWaterfallRowH / 2, x(b.hi), y + kWaterfallRowH / 2);
    // A dotted connector carries the running total to the next row.
    if (i + 1 < bars.size() && !b.total)
      svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" stroke=\"#999\" "
                         "stroke-dasharray=\"2,2\"/>\n",
                         x(b.to), y + kWaterfallRowH - 3, y + kWaterfallRowH + 3);
    svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">{}{}</text>\n", kWaterfallLabelW + kWaterfallBarW + 8, y + 15,
                       html_escape(signed_in(b.to - b.from, micro)), b.significant ? "" : " (n.s.)");
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace cuzk::report
