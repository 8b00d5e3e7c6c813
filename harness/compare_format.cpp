// `compare`, output: the terminal table, markdown and JSON of a Comparison.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "harness/clock.hpp"
#include "harness/compare_detail.hpp"

namespace cuzk {
namespace {

using json = nlohmann::json;
using compare_detail::pct;

std::string rel(double spread, double med) {
  if (med == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * spread / std::fabs(med));
}

std::string case_label(const PhaseComparison& r) {
  std::string s = r.suite + "/" + r.case_name;
  if (r.params != "{}" && !r.params.empty()) s += " " + r.params;
  return s;
}

// Counters that no row could read on either side, all for one reason (e.g. no PMU here): they
// are said once under the table, not on every row. Name -> that row note ("n/a (reason)").
std::map<std::string, std::string> unread_counters(const Comparison& c) {
  std::map<std::string, std::string> out;
  std::set<std::string> keep;  // read somewhere, or unread for different reasons: stay in the rows
  for (const auto& r : c.rows)
    for (const auto& d : r.counters) {
      if (d.median_a || d.median_b) {
        keep.insert(d.name);
        continue;
      }
      auto [it, fresh] = out.emplace(d.name, d.note);
      if (!fresh && it->second != d.note) keep.insert(d.name);
    }
  for (const auto& n : keep) out.erase(n);
  return out;
}

std::string counters_text(const PhaseComparison& r, const std::map<std::string, std::string>& unread) {
  std::string s;
  for (const auto& c : r.counters)
    if (!unread.count(c.name)) s += (s.empty() ? "" : ", ") + c.name + " " + c.note;
  return s;
}

// "10/10", or "10x5/10x5" (processes x repetitions each) when processes are the units.
std::string n_cell(const PhaseComparison& r) {
  if (r.unit != "processes") return fmt::format("{}/{}", r.n_a, r.n_b);
  auto side = [](size_t n, size_t samples) {
    return n ? fmt::format("{}x{:g}", n, std::round(10.0 * samples / n) / 10) : std::string("0");
  };
  return side(r.n_a, r.samples_a) + "/" + side(r.n_b, r.samples_b);
}

// The notes under a table: how to read the metric, unit and p columns of these rows.
std::vector<std::string> legend(const Comparison& c) {
  bool secondary = false, processes = false;
  for (const auto& r : c.rows) {
    secondary = secondary || !r.primary;
    processes = processes || r.unit == "processes";
  }
  std::vector<std::string> out;
  if (secondary)
    out.push_back(c.metric == "wall"
                      ? "metric: every phase is judged by wall time (--metric wall); GPU time in parentheses is shown, not judged"
                      : "metric: a phase with GPU time in every sample is judged by it (CUDA events); its wall time in "
                        "parentheses is shown, not judged (--metric wall judges wall time)");
  if (processes)
    out.push_back("n: processes x repetitions; each process's median is one observation (block design; --blocks off: every sample)");
  out.push_back("p: two-sided Mann-Whitney U (* = normal approximation); CI: 95% bootstrap of the ratio of medians");
  std::map<std::string, std::string> by_note;  // note -> counter names
  for (const auto& [name, note] : unread_counters(c)) by_note[note] += (by_note[note].empty() ? "" : ", ") + name;
  for (const auto& [note, names] : by_note)
    out.push_back(fmt::format("counters {}: {} on both sides in every row", names, note));
  return out;
}

std::vector<std::string> row_cells(const PhaseComparison& r, const std::map<std::string, std::string>& unread) {
  if (!r.missing.empty())
    return {case_label(r), r.phase, r.metric, r.missing == "a" ? "0/-" : "-/0", "-", "-", "-", "-", "-", "-",
            r.missing == "a" ? "missing in A" : "missing in B", ""};
  const std::string metric = r.metric == "wall_ns" ? "wall" : (r.metric == "gpu_ns" ? "gpu" : r.metric);
  std::string verdict = r.verdict + (r.verdict == "faster" || r.verdict == "slower" ? " " + pct(r.ratio) : "");
  if (!r.primary) verdict = "(" + verdict + ")";
  return {case_label(r),
          r.phase,
          r.primary ? metric : "(" + metric + ")",
          n_cell(r),
          fmt_ns(r.median_a),
          fmt_ns(r.median_b),
          rel(r.mad_a, r.median_a) + "/" + rel(r.iqr_a, r.median_a),
          rel(r.mad_b, r.median_b) + "/" + rel(r.iqr_b, r.median_b),
          fmt::format("{:.3f} [{:.3f}, {:.3f}]", r.ratio, r.ci_low, r.ci_high),
          fmt::format("{:.3g}{}", r.p_value, r.exact_test ? "" : "*"),
          verdict,
          counters_text(r, unread)};
}

const std::vector<std::string> kHeaders = {"case", "phase", "metric", "n A/B", "median A", "median B",
                                           "MAD/IQR A", "MAD/IQR B", "B/A [95% CI]", "p", "verdict",
                                           "counters (B vs A)"};

}  // namespace

std::string format_table(const Comparison& c) {
  const auto unread = unread_counters(c);
  // The case is printed once, as a line above its rows; the columns start at "phase".
  std::vector<std::string> headers(kHeaders.begin() + 1, kHeaders.end());
  std::vector<std::vector<std::string>> rows{headers};
  std::vector<std::string> group_line{""};
  std::string last_case;
  for (const auto& r : c.rows) {
    auto cells = row_cells(r, unread);
    std::string label = cells[0];
    cells.erase(cells.begin());
    rows.push_back(cells);
    group_line.push_back(label != last_case ? label : "");
    last_case = label;
  }
  std::vector<size_t> w(headers.size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  std::string out = fmt::format("A: {}\nB: {}\n\n", c.path_a, c.path_b);
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    if (!group_line[ri].empty()) out += (ri > 1 ? "\n" : "") + group_line[ri] + "\n";
    std::string line;
    for (size_t i = 0; i < rows[ri].size(); ++i) {
      bool last = i + 1 == rows[ri].size();
      line += last ? rows[ri][i] : fmt::format("{:<{}}  ", rows[ri][i], w[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (ri == 0) {
      size_t total = headers.back().size();
      for (size_t i = 0; i + 1 < w.size(); ++i) total += w[i] + 2;
      out += std::string(total, '-') + "\n";
    }
  }
  out += "\n";
  for (const auto& l : legend(c)) out += l + "\n";
  // One line per distinct warning: with few samples every row carries the same ones.
  std::vector<std::pair<std::string, std::vector<std::string>>> grouped;
  for (const auto& r : c.rows)
    for (const auto& wn : r.warnings) {
      auto it = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == wn; });
      if (it == grouped.end()) it = grouped.insert(grouped.end(), {wn, {}});
      it->second.push_back(fmt::format("{} {} {}", case_label(r), r.phase, r.metric));
    }
  for (const auto& [wn, where] : grouped) {
    if (where.size() == 1)
      out += fmt::format("warning: {}: {}\n", where[0], wn);
    else
      out += fmt::format("warning: {} ({} rows, e.g. {})\n", wn, where.size(), where[0]);
  }
  for (const auto& wn : c.warnings) out += "warning: " + wn + "\n";
  return out;
}

std::string format_markdown(const Comparison& c) {
  const auto unread = unread_counters(c);
  auto esc = [](std::string s) {
    std::string o;
    for (char ch : s) {
      if (ch == '|') o += "\\|";
      else o += ch;
    }
    return o;
  };
  std::string out = fmt::format("**A**: `{}`  \n**B**: `{}`\n\n|", c.path_a, c.path_b);
  for (const auto& h : kHeaders) out += " " + h + " |";
  out += "\n|";
  for (size_t i = 0; i < kHeaders.size(); ++i) out += " --- |";
  out += "\n";
  for (const auto& r : c.rows) {
    auto cells = row_cells(r, unread);
    if (r.primary && (r.verdict == "slower" || r.verdict == "faster")) cells[10] = fmt::format("**{}**", cells[10]);
    out += "|";
    for (const auto& cell : cells) out += fmt::format(" {} |", esc(cell));
    out += "\n";
  }
  out += "\n";
  for (const auto& l : legend(c)) out += l + ".  \n";
  std::string warn;
  for (const auto& r : c.rows)
    for (const auto& wn : r.warnings) warn += fmt::format("- {} `{}` {}: {}\n", esc(case_label(r)), r.phase, r.metric, wn);
  for (const auto& wn : c.warnings) warn += "- " + wn + "\n";
  if (!warn.empty()) out += "\n**Warnings**\n\n" + warn;
  return out;
}

namespace {

json env_json(const EnvSummary& e) {
  return {{"samples", e.samples}, {"throttled", e.throttled}, {"loaded", e.loaded}, {"without_env", e.without_env},
          {"dropped", e.dropped}, {"examples", e.examples}};
}

}  // namespace

nlohmann::json to_json(const Comparison& c) {
  json rows = json::array();
  auto num = [](double v) -> json { return std::isfinite(v) ? json(v) : json(nullptr); };
  for (const auto& r : c.rows) {
    json counters = json::array();
    for (const auto& d : r.counters)
      counters.push_back({{"name", d.name},
                          {"median_a", d.median_a ? json(*d.median_a) : json(nullptr)},
                          {"median_b", d.median_b ? json(*d.median_b) : json(nullptr)},
                          {"ratio", d.ratio ? json(*d.ratio) : json(nullptr)},
                          {"note", d.note}});
    rows.push_back({{"suite", r.suite}, {"case", r.case_name}, {"parameters", r.params},
                    {"phase", r.phase}, {"metric", r.metric}, {"primary", r.primary}, {"unit", r.unit},
                    {"n_a", r.n_a}, {"n_b", r.n_b}, {"samples_a", r.samples_a}, {"samples_b", r.samples_b},
                    {"median_a", num(r.median_a)}, {"median_b", num(r.median_b)},
                    {"mad_a", num(r.mad_a)}, {"mad_b", num(r.mad_b)}, {"iqr_a", num(r.iqr_a)},
                    {"iqr_b", num(r.iqr_b)}, {"ratio", num(r.ratio)}, {"ci_low", num(r.ci_low)},
                    {"ci_high", num(r.ci_high)}, {"p_value", num(r.p_value)},
                    {"exact_test", r.exact_test}, {"threshold", r.threshold}, {"verdict", r.verdict},
                    {"missing", r.missing}, {"counters", counters}, {"warnings", r.warnings}});
  }
  return {{"a", {{"path", c.path_a}, {"format", c.format_a}, {"provenance", c.provenance_a}, {"machine", c.machine_a}}},
          {"b", {{"path", c.path_b}, {"format", c.format_b}, {"provenance", c.provenance_b}, {"machine", c.machine_b}}},
          {"metric", c.metric},
          {"environment", {{"a", env_json(c.env_a)}, {"b", env_json(c.env_b)}}},
          {"rows", rows},
          {"cases_only_a", c.cases_only_a},
          {"cases_only_b", c.cases_only_b},
          {"warnings", c.warnings}};
}

}  // namespace cuzk
