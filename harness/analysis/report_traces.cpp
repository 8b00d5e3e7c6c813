// `report`: the trace A/B that `ab --nsys` left beside the comparison (DIR/trace-diff.json,
// schema cuzk.trace-diff, harness/trace/diff_format.cpp), as a section of report.md and
// report.html: the summary, then per phase a waterfall of its GPU busy time's change by kernel
// and copy (docs/reports.md, "Trace A/B").
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "harness/analysis/report.hpp"
#include "harness/trace/diff_format.hpp"  // the summary's section titles (constants only: no link to cuzk_trace)

namespace cuzk::report {
namespace {

using nlohmann::json;

// Kernels and copies drawn one per row; the rest share a row.
constexpr size_t kTraceWaterfallItems = 8;
// Phases drawn when none changed: the largest moves, so that an A/A still shows its noise.
constexpr size_t kTraceWaterfallPhases = 4;

double trace_num(const json& row, const char* key) {
  auto it = row.find(key);
  return it != row.end() && it->is_number() ? it->get<double>() : 0.0;
}
std::string trace_str(const json& row, const char* key) {
  auto it = row.find(key);
  return it != row.end() && it->is_string() ? it->get<std::string>() : std::string();
}
// A change the chart draws solid: a verdict of one, or an item that one side does not have.
bool trace_moved(const std::string& verdict) {
  return verdict == "slower" || verdict == "faster" || verdict == "only in A" || verdict == "only in B";
}

// The chart's labels: a kernel's last name outside template brackets ("cuzk::cuda::<...>::
// sum_points_kernel<...>" -> "sum_points_kernel<...>"), cut to fit the label column.
std::string trace_short_name(const std::string& name) {
  int depth = 0;
  size_t last = 0;
  for (size_t i = 0; i + 1 < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (depth == 0 && name[i] == ':' && name[i + 1] == ':') last = i + 2;
  }
  std::string s = name.substr(last);
  if (s.size() > 32) s = s.substr(0, 29) + "...";
  return s;
}

// One phase's busy-time change as an accounting: each item's change of exposed time, the other
// items together, and what overlap across streams leaves (busy counts overlapped time once).
Accounting phase_accounting(const json& phase_row, const json& items) {
  Accounting a;
  a.parent = trace_str(phase_row, "phase");
  a.median_a = trace_num(phase_row, "busy_a_ns");
  a.median_b = trace_num(phase_row, "busy_b_ns");
  a.delta = a.median_b - a.median_a;
  a.ci_low = a.ci_high = std::nan("");
  a.significant = trace_moved(trace_str(phase_row, "verdict"));
  std::vector<AccountingTerm> terms;
  for (const auto& it : items) {
    AccountingTerm t;
    t.kind = "child";
    t.phase = trace_short_name(trace_str(it, "item"));
    t.delta = trace_num(it, "exposed_b_ns") - trace_num(it, "exposed_a_ns");
    t.ci_low = t.ci_high = std::nan("");
    t.significant = trace_moved(trace_str(it, "verdict"));
    terms.push_back(t);
  }
  std::stable_sort(terms.begin(), terms.end(),
                   [](const AccountingTerm& x, const AccountingTerm& y) { return std::fabs(x.delta) > std::fabs(y.delta); });
  double sum = 0;
  for (const auto& t : terms) sum += t.delta;
  if (terms.size() > kTraceWaterfallItems) {
    AccountingTerm other;
    other.kind = fmt::format("{} other item(s)", terms.size() - kTraceWaterfallItems);
    other.ci_low = other.ci_high = std::nan("");
    for (size_t i = kTraceWaterfallItems; i < terms.size(); ++i) other.delta += terms[i].delta;
    terms.resize(kTraceWaterfallItems);
    terms.push_back(other);
  }
  AccountingTerm rest;
  rest.kind = "overlap across streams";
  rest.delta = a.delta - sum;
  rest.ci_low = rest.ci_high = std::nan("");
  terms.push_back(rest);
  a.terms = std::move(terms);
  return a;
}

}  // namespace

std::optional<TraceSection> read_trace_section(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "trace-diff.json").string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path);
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error(fmt::format("{}: not JSON (ab --nsys writes it; remove it or write it again)", path));
  if (j.value("schema", std::string()) != "cuzk.trace-diff" || !j.contains("phases") || !j.contains("details") ||
      !j.contains("summary"))
    throw std::runtime_error(fmt::format("{}: not a trace A/B (schema cuzk.trace-diff with summary, phases and details)", path));
  TraceSection s;
  s.path = path;
  s.headline = j["summary"].value("headline", std::string());
  if (j["summary"].contains("sections") && j["summary"]["sections"].is_object())
    for (const auto& [title, items] : j["summary"]["sections"].items()) {
      std::vector<std::string> lines;
      if (items.is_array())
        for (const auto& i : items)
          if (i.is_string()) lines.push_back(i.get<std::string>());
      s.sections.emplace_back(title, std::move(lines));
    }
  // JSON objects keep no order: the changed phases first, then the idle and the hidden changes,
  // as trace-diff prints them (harness/trace/diff_format.cpp).
  auto rank = [](const std::string& title) {
    return title == trace::kIdleSection ? 1 : title == trace::kHiddenSection ? 2 : 0;
  };
  std::stable_sort(s.sections.begin(), s.sections.end(),
                   [&](const auto& x, const auto& y) { return rank(x.first) < rank(y.first); });
  const json& rows = j["phases"].value("rows", json::array());
  std::vector<const json*> chosen;
  for (const auto& row : rows)
    if (trace_moved(trace_str(row, "verdict"))) chosen.push_back(&row);
  if (chosen.empty()) {
    for (const auto& row : rows) chosen.push_back(&row);
    std::stable_sort(chosen.begin(), chosen.end(), [](const json* x, const json* y) {
      return std::fabs(trace_num(*x, "busy_b_ns") - trace_num(*x, "busy_a_ns")) > std::fabs(trace_num(*y, "busy_b_ns") - trace_num(*y, "busy_a_ns"));
    });
    if (chosen.size() > kTraceWaterfallPhases) chosen.resize(kTraceWaterfallPhases);
    s.none_changed = true;
  }
  for (const json* row : chosen) {
    json items = json::array();
    for (const auto& d : j["details"])
      if (d.is_object() && d.value("phase", std::string()) == trace_str(*row, "phase") && d.contains("items"))
        items = d["items"].value("rows", json::array());
    s.phases.push_back(phase_accounting(*row, items));
  }
  return s;
}

std::string trace_section_markdown(const TraceSection& s) {
  std::string md = "## Trace A/B\n\n" + s.headline + "\n\n";
  for (const auto& [title, lines] : s.sections) {
    if (lines.empty()) continue;
    md += "**" + title + "**\n\n";
    for (const auto& l : lines) md += "- " + l + "\n";
    md += "\n";
  }
  md += fmt::format("Every table of the trace A/B: `{}` (and trace-diff.md beside it).\n\n",
                    std::filesystem::path(s.path).filename().string());
  return md;
}

std::string trace_section_html(const TraceSection& s) {
  std::string h = "<h2>Trace A/B</h2>\n<p>" + html_escape(s.headline) + "</p>\n";
  for (const auto& [title, lines] : s.sections) {
    if (lines.empty()) continue;
    h += "<h3>" + html_escape(title) + "</h3>\n<ul>";
    for (const auto& l : lines) h += "<li>" + html_escape(l) + "</li>";
    h += "</ul>\n";
  }
  h += s.none_changed ? "<p>No phase changed its GPU busy time; the phases that moved most:</p>\n"
                      : "<p>Each changed phase's GPU busy time, kernel by kernel (change of exposed time, medians B - A; "
                        "pale: not significant):</p>\n";
  for (const auto& a : s.phases) h += waterfall_svg(a, "GPU busy time");
  return h;
}

}  // namespace cuzk::report
