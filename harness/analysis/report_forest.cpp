// `report` on a matrix folder: the forest plot (inline SVG, so the HTML report stays one file and
// needs no plotting library) and the heat map's cell colour. report_matrix.hpp.
//
// Forest: one row per effect (or variant), grouped by phase in the given order; a dot at the
// ratio, a line over its CI. The x axis is ln(ratio), symmetric around 0 (ratio 1, the vertical
// "unity" line) and wide enough for every CI; ticks are labelled as percent change (1 + k*step),
// so they are not evenly spaced. Slower significant effects are red, faster blue, n.s. grey.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "harness/analysis/report_page.hpp"
#include "harness/analysis/report_matrix.hpp"

namespace cuzk::report {
namespace {

constexpr double kLabelW = 320, kPlotW = 460, kValueW = 230, kRowH = 20, kTop = 28, kBottom = 34;
// The narrowest axis: ±5%, so that a row of tiny effects is not blown up to fill the plot.
const double kMinHalfRange = std::log(1.05);
// At most this many ticks on each side of 0.
constexpr double kMaxTicksPerSide = 5;
constexpr const char* kSlowerColour = "#c9483c";
constexpr const char* kFasterColour = "#2f6fb6";
constexpr const char* kGrey = "#9a9a9a";

// The heat map's colour scale saturates at a 30% change (|ln ratio| = ln 1.3); a significant
// change starts at kHeatMinTint of the full colour so that it is visibly not white.
const double kHeatCap = std::log(1.30);
constexpr double kHeatMinTint = 0.15, kHeatMaxTint = 0.80, kOnlyInTint = 0.45;
constexpr std::array<int, 3> kHeatRed{214, 39, 40}, kHeatBlue{31, 119, 180};

std::string tint(const std::array<int, 3>& base, double w) {
  auto mix = [&](int c) { return static_cast<int>(std::lround(255 * (1 - w) + c * w)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(base[0]), mix(base[1]), mix(base[2]));
}

}  // namespace

std::string percent_change(double ratio) {
  const double c = (ratio - 1) * 100;
  return std::fabs(c) >= 100 ? fmt::format("{:+.0f}%", c) : fmt::format("{:+.1f}%", c);
}

std::string forest_svg(const std::vector<ForestRow>& rows, const std::string& title) {
  if (rows.empty()) return "";
  double half = kMinHalfRange;
  for (const auto& r : rows)
    for (double v : {r.ratio, r.low, r.high})
      if (v > 0 && std::isfinite(v)) half = std::max(half, std::fabs(std::log(v)));
  half *= 1.05;
  auto x = [&](double ratio) { return kLabelW + (std::log(ratio) + half) / (2 * half) * kPlotW; };

  // Tick step: the smallest of 1, 2, 5, 10, 20, 50, ... percent that keeps each side within
  // kMaxTicksPerSide ticks.
  const double pos_max = (std::exp(half) - 1) * 100, neg_max = (1 - std::exp(-half)) * 100;
  double step = 1;
  for (double decade = 1;; decade *= 10) {
    bool found = false;
    for (double m : {1.0, 2.0, 5.0})
      if (pos_max / (m * decade) <= kMaxTicksPerSide && neg_max / (m * decade) <= kMaxTicksPerSide) {
        step = m * decade;
        found = true;
        break;
      }
    if (found) break;
  }

  const double height = kTop + kRowH * static_cast<double>(rows.size()) + kBottom;
  const double width = kLabelW + kPlotW + kValueW;
  const double y_end = kTop + kRowH * static_cast<double>(rows.size());
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"forest\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n",
      width, height, width, height);
  svg += fmt::format("<text x=\"0\" y=\"16\" font-weight=\"bold\">{}</text>\n", html_escape(title));
  for (int k = -static_cast<int>(std::floor(neg_max / step)); k <= static_cast<int>(std::floor(pos_max / step)); ++k) {
    const double ratio = 1 + k * step / 100;
    if (ratio <= 0) continue;
    const double tx = x(ratio);
    if (k != 0)
      svg += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" "
                         "stroke=\"#e4e4e4\"/>\n",
                         tx, kTop - 4, y_end + 4);
    svg += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\" fill=\"#666\">{}</text>\n",
                       tx, y_end + 18, k == 0 ? std::string("0") : fmt::format("{:+g}%", k * step));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\" fill=\"#666\">change (log scale)</text>\n",
                     kLabelW + kPlotW / 2, height - 2);
  svg += fmt::format("<line class=\"unity\" x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" stroke=\"#444\"/>\n",
                     x(1), kTop - 4, y_end + 4);
  for (size_t i = 0; i < rows.size(); ++i) {
    const ForestRow& r = rows[i];
    const double y = kTop + kRowH * static_cast<double>(i), cy = y + kRowH / 2;
    if (i > 0 && rows[i - 1].phase != r.phase)
      svg += fmt::format("<line x1=\"0\" y1=\"{0:.0f}\" x2=\"{1:.0f}\" y2=\"{0:.0f}\" stroke=\"#ddd\"/>\n", y, width);
    const char* colour = !r.significant ? kGrey : r.ratio > 1 ? kSlowerColour : kFasterColour;
    const std::string label = r.phase + ": " + r.effect;
    const std::string value =
        fmt::format("{} [{}, {}]{}", percent_change(r.ratio), percent_change(r.low), percent_change(r.high), r.significant ? "" : " (n.s.)");
    svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\">{}</text>\n", kLabelW - 8, y + 14,
                       html_escape(label));
    svg += fmt::format("<line class=\"ci\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                       "stroke-width=\"2\"/>\n",
                       x(r.low), cy, x(r.high), cy, colour);
    svg += fmt::format("<circle class=\"effect\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"{}\"><title>{}: {}</title>"
                       "</circle>\n",
                       x(r.ratio), cy, colour, html_escape(label), html_escape(value));
    svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" fill=\"{}\">{}</text>\n", kLabelW + kPlotW + 8, y + 14,
                       r.significant ? "#000" : "#777", html_escape(value));
  }
  svg += "</svg>\n";
  return svg;
}

std::string heat_colour(const MatrixVariant& v) {
  if (v.verdict == "only in B") return tint(kHeatRed, kOnlyInTint);
  if (v.verdict == "only in A") return tint(kHeatBlue, kOnlyInTint);
  if ((v.verdict != "slower" && v.verdict != "faster") || !v.ratio || *v.ratio <= 0) return "#ffffff";
  const double t = std::min(std::fabs(std::log(*v.ratio)) / kHeatCap, 1.0);
  return tint(v.verdict == "slower" ? kHeatRed : kHeatBlue, kHeatMinTint + (kHeatMaxTint - kHeatMinTint) * t);
}

}  // namespace cuzk::report
