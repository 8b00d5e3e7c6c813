#include "harness/history/dashboard.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "harness/analysis/report_page.hpp"

namespace cuzk::history {
namespace {

using report::html_escape;

bool is_ns(const std::string& metric) { return metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_ns") == 0; }

std::string show_value(const std::string& metric, double v) {
  if (!std::isfinite(v)) return "-";
  return is_ns(metric) ? fmt::format("{:.3f} ms", v / 1e6) : fmt::format("{:.6g}", v);
}

std::string series_title(const Series& s) {
  return fmt::format("{}/{} {} ({}{}{})", s.suite, s.case_name, s.phase, s.metric, s.preset.empty() ? "" : ", " + s.preset,
                     s.backend.empty() ? "" : ", " + s.backend);
}

std::string series_anchor(size_t i) { return fmt::format("s{}", i); }

std::string commit_link(const DashboardOptions& o, const std::string& sha, const std::string& fallback) {
  if (o.commit_url.empty() || sha == "unknown") return fallback;
  std::string url = o.commit_url;
  const auto at = url.find("{sha}");
  return at == std::string::npos ? url + sha : url.replace(at, 5, sha);
}

// One series' chart as inline SVG: the CI band, the medians, a mark per point (a link with a
// tooltip) and a dashed line per change point.
std::string chart(const DashboardSeries& d, size_t si, const DashboardOptions& o) {
  const auto& pts = d.series.points;
  const double W = 760, H = 240, L = 90, R = 20, T = 16, B = 36;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& p : pts) {
    for (double v : {p.median, p.ci_low, p.ci_high})
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) return "<p>no points</p>";
  if (hi - lo < 1e-9 * std::max(1.0, std::fabs(hi))) hi = lo + std::max(1.0, std::fabs(lo) * 0.01);
  const double pad = (hi - lo) * 0.08;
  lo -= pad;
  hi += pad;
  const size_t n = pts.size();
  auto x = [&](size_t i) { return n == 1 ? L + (W - L - R) / 2 : L + (W - L - R) * double(i) / double(n - 1); };
  auto y = [&](double v) { return T + (H - T - B) * (1 - (v - lo) / (hi - lo)); };
  std::string s = fmt::format(
      "<svg class=\"trend\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" aria-label=\"{2}\">\n",
      W, H, html_escape(series_title(d.series)));
  s += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", L, T, H - B);
  s += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n", L, H - B, W - R);
  for (double v : {lo + pad, hi - pad})
    s += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", L - 6, y(v) + 4,
                     html_escape(show_value(d.series.metric, v)));
  // CI band: upper edge left to right, lower edge back, over the points that have a CI.
  std::string upper, lower;
  for (size_t i = 0; i < n; ++i) {
    const double a = std::isfinite(pts[i].ci_high) ? pts[i].ci_high : pts[i].median;
    const double b = std::isfinite(pts[i].ci_low) ? pts[i].ci_low : pts[i].median;
    upper += fmt::format("{:.1f},{:.1f} ", x(i), y(a));
    lower = fmt::format("{:.1f},{:.1f} ", x(i), y(b)) + lower;
  }
  s += "<polygon class=\"band\" points=\"" + upper + lower + "\"/>\n";
  std::string line;
  for (size_t i = 0; i < n; ++i) line += fmt::format("{:.1f},{:.1f} ", x(i), y(pts[i].median));
  s += "<polyline class=\"median\" points=\"" + line + "\"/>\n";
  for (const auto& c : d.changes) {
    if (c.index >= n) continue;
    const double cx = c.index == 0 ? x(0) : (x(c.index - 1) + x(c.index)) / 2;
    s += fmt::format(
        "<g class=\"change {}\" data-change=\"{}\"><line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{}\">{} {:+.1f}%</text></g>\n",
        c.regression ? "regression" : "improvement", html_escape(c.id), cx, T, cx, H - B, cx + 3, T + 10,
        html_escape(c.id), 100 * (c.ratio - 1));
  }
  for (size_t i = 0; i < n; ++i) {
    const auto& p = pts[i];
    const std::string href = commit_link(o, p.commit, fmt::format("#{}-p{}", series_anchor(si), i));
    const std::string tip = fmt::format("{}{}: median {}, 95% CI {}; {} runs, {} samples\nreproduce: {}", p.commit,
                                        p.dirty ? " (dirty)" : "", show_value(d.series.metric, p.median),
                                        std::isfinite(p.ci_low) ? fmt::format("[{}, {}]", show_value(d.series.metric, p.ci_low),
                                                                              show_value(d.series.metric, p.ci_high))
                                                                : std::string("-"),
                                        p.runs, p.samples, reproduce_command(d.series, p));
    s += fmt::format(
        "<a href=\"{}\"><circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" data-commit=\"{}\"><title>{}</title>"
        "</circle></a>\n",
        html_escape(href), x(i), y(p.median), html_escape(p.commit), html_escape(tip));
  }
  s += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\">{}</text>", L, H - 10,
                   html_escape(pts.front().commit.substr(0, 10)));
  s += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", W - R, H - 10,
                   html_escape(pts.back().commit.substr(0, 10)));
  return s + "</svg>\n";
}

const char* kStyle = R"(<style>
svg.trend { background: #fff; border: 1px solid #ddd; margin: 4px 0 10px; }
svg.trend .axis { stroke: #999; }
svg.trend .tick { font: 11px sans-serif; fill: #555; }
svg.trend .band { fill: #9ecae1; fill-opacity: 0.45; stroke: none; }
svg.trend .median { fill: none; stroke: #08519c; stroke-width: 1.5; }
svg.trend .point { fill: #08519c; }
svg.trend .change line { stroke-dasharray: 5 3; stroke-width: 1.5; }
svg.trend .change.regression line { stroke: #cb181d; }
svg.trend .change.improvement line { stroke: #238b45; }
svg.trend .change text { font: 11px sans-serif; }
section.series { margin-bottom: 24px; }
code { font-size: 11px; }
</style>
)";

// Shows only the sections of the chosen machine ("" for all).
const char* kScript = R"(<script>
function cuzkSelectMachine(fp) {
  document.querySelectorAll('[data-machine]').forEach(function (el) {
    el.style.display = (fp === '' || el.getAttribute('data-machine') === fp) ? '' : 'none';
  });
}
document.getElementById('machine').addEventListener('change', function (e) { cuzkSelectMachine(e.target.value); });
</script>
)";

}  // namespace

std::string reproduce_command(const Series& s, const CommitPoint& p) {
  const std::string preset = s.preset.empty() || s.preset == "custom" ? "default" : s.preset;
  return fmt::format("git checkout {} && cmake --preset {} && cmake --build build/{} --target cuzk-bench && {}", p.commit,
                     preset, preset, p.command.empty() ? "(the run's command was not recorded)" : p.command);
}

std::string dashboard_html(const std::vector<DashboardSeries>& all, const DashboardOptions& o) {
  std::string body = fmt::format("<h1>{}</h1>\n<p>{} series{}.</p>\n", html_escape(o.title), all.size(),
                                 o.generated_utc.empty() ? "" : ", generated " + html_escape(o.generated_utc));
  std::map<std::string, std::string> machines;
  for (const auto& d : all) machines[d.series.machine] = d.series.machine_label;
  body += "<p><label for=\"machine\">Machine: </label><select id=\"machine\"><option value=\"\">all</option>";
  for (const auto& [fp, label] : machines)
    body += fmt::format("<option value=\"{}\">{} ({})</option>", html_escape(fp), html_escape(fp), html_escape(label));
  body += "</select></p>\n";
  // The change points of every series, newest first (by their commit's date, else when ingested).
  struct Row {
    std::string when;
    size_t series;
    const ChangeMark* c;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < all.size(); ++i)
    for (const auto& c : all[i].changes)
      if (c.index < all[i].series.points.size()) {
        const auto& p = all[i].series.points[c.index];
        rows.push_back({p.commit_date.empty() ? p.first_ingested : p.commit_date, i, &c});
      }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.when > b.when; });
  body += "<h2>Change points, newest first</h2>\n";
  if (rows.empty()) {
    body += "<p id=\"no-changes\">No change point in any series.</p>\n";
  } else {
    body += "<table id=\"changes\"><tr><th>id</th><th>status</th><th>series</th><th>machine</th><th>commits</th>"
            "<th>after / before</th><th>95% CI</th><th>p</th></tr>\n";
    for (const auto& r : rows) {
      const auto& s = all[r.series].series;
      const auto& c = *r.c;
      const std::string before = c.index ? s.points[c.index - 1].commit.substr(0, 10) : std::string("start");
      body += fmt::format(
          "<tr class=\"{}\" data-machine=\"{}\"><td>{}</td><td>{}</td><td><a href=\"#{}\">{}</a></td><td>{}</td>"
          "<td>{}..{}</td><td class=\"num\">{:+.2f}%</td><td class=\"num\">[{:+.2f}%, {:+.2f}%]</td>"
          "<td class=\"num\">{:.2g}</td></tr>\n",
          c.regression ? "slower" : "faster", html_escape(s.machine), html_escape(c.id), html_escape(c.status),
          series_anchor(r.series), html_escape(series_title(s)), html_escape(s.machine), html_escape(before),
          html_escape(s.points[c.index].commit.substr(0, 10)), 100 * (c.ratio - 1), 100 * (c.low - 1),
          100 * (c.high - 1), c.p_value);
    }
    body += "</table>\n";
  }
  body += "<h2>Series</h2>\n";
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& s = all[i].series;
    body += fmt::format("<section class=\"series\" id=\"{}\" data-machine=\"{}\">\n<h3>{}</h3>\n<p>machine {} ({})</p>\n",
                        series_anchor(i), html_escape(s.machine), html_escape(series_title(s)), html_escape(s.machine),
                        html_escape(s.machine_label));
    body += chart(all[i], i, o);
    body += "<details><summary>points and the commands that reproduce them</summary>\n<table><tr><th>commit</th>"
            "<th>date</th><th>runs</th><th>samples</th><th>median</th><th>95% CI</th><th>reproduce</th></tr>\n";
    for (size_t k = 0; k < s.points.size(); ++k) {
      const auto& p = s.points[k];
      const std::string link = commit_link(o, p.commit, "");
      body += fmt::format(
          "<tr id=\"{}-p{}\"><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td><code>{}</code></td></tr>\n",
          series_anchor(i), k,
          link.empty() ? html_escape(p.commit.substr(0, 12))
                       : fmt::format("<a href=\"{}\">{}</a>", html_escape(link), html_escape(p.commit.substr(0, 12))),
          html_escape(p.commit_date.empty() ? "?" : p.commit_date), p.runs, p.samples,
          html_escape(show_value(s.metric, p.median)),
          std::isfinite(p.ci_low)
              ? html_escape(fmt::format("[{}, {}]", show_value(s.metric, p.ci_low), show_value(s.metric, p.ci_high)))
              : "-",
          html_escape(reproduce_command(s, p)));
    }
    body += "</table></details>\n</section>\n";
  }
  body += kScript;
  return report::html_page(o.title, std::string(kStyle) + body);
}

}  // namespace cuzk::history
