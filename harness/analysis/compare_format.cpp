// `compare`, output: the terminal text, markdown and JSON of a Comparison. Each case opens with
// its summary paragraph and the accounting of its parent phases, then its table; the notes and
// warnings that apply to all cases follow once at the end.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "harness/measure/clock.hpp"
#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/output/printers.hpp"

namespace cuzk {
namespace {

using json = nlohmann::json;
using compare_detail::signed_ns;

constexpr size_t kTermsShown = 6;  // child terms named in an accounting line; the rest are summed

std::string rel(double spread, double med) {
  if (med == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * spread / std::fabs(med));
}

std::string case_title(const std::string& suite, const std::string& case_name) { return suite + "/" + case_name; }

// A row's case in a warning line: suite/case, with its parameters only where another case of
// `c` has the same name. The case's heading shows them once; a prove run's dozen parameters
// repeated on every warning line hid the warnings.
std::string case_label(const Comparison& c, const PhaseComparison& r) {
  std::string s = case_title(r.suite, r.case_name);
  if (r.params == "{}" || r.params.empty()) return s;
  for (const auto& o : c.rows)
    if (o.suite == r.suite && o.case_name == r.case_name && o.params != r.params) return s + " " + r.params;
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
      if (r.only_in.has_value()) continue;  // a side without the phase says nothing about the counter
      auto [it, fresh] = out.emplace(d.name, d.note);
      if (!fresh && it->second != d.note) keep.insert(d.name);
    }
  for (const auto& n : keep) out.erase(n);
  return out;
}

// Whether a counter's change is worth a place in the narrow table: 10% or more either way (or
// from 0 to something), and for the OS counters also large enough to matter to the phase: a CPU
// time change of at least 5% of the phase's wall time, at least 10 faults or switches, 1 MiB of
// peak RSS or I/O, 0.1 cores of cpu/wall (a 3 ms phase's CPU time moves by 40% from scheduling
// alone). Unread counters (n/a) stay, with their reason.
}  // namespace

bool counter_is_notable(const CounterDelta& d, double phase_a_ns, double phase_b_ns) {
  if (!d.median_a && !d.median_b) return true;  // unread on both sides: the reason
  if (!d.median_a || !d.median_b) return false;  // one side only (e.g. a counters pass only B ran): --wide
  const bool relative = *d.median_a == 0 ? *d.median_b != 0 : d.ratio && (*d.ratio >= 1.1 || *d.ratio <= 1 / 1.1);
  if (!relative) return false;
  const double change = std::fabs(*d.median_b - *d.median_a);
  auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return d.name.size() >= s.size() && d.name.compare(d.name.size() - s.size(), s.size(), s) == 0;
  };
  if (d.name == "os::cpu_per_wall") return change >= 0.1;
  if (d.name == "os::maxrss_kib") return change >= 1024;
  if (d.name.rfind("os::", 0) == 0 && (ends_with("char") || ends_with("_bytes"))) return change >= (1 << 20);
  if (d.name.rfind("os::", 0) == 0 && ends_with("_ns")) return change >= 0.05 * std::max(phase_a_ns, phase_b_ns);
  if (d.name.rfind("os::", 0) == 0) return change >= 10;
  return true;
}

namespace {

std::string counters_text(const PhaseComparison& r, const std::map<std::string, std::string>& unread,
                          const FormatOptions& f) {
  std::string s;
  for (const auto& c : r.counters)
    if (!unread.count(c.name) && (f.wide || counter_is_notable(c, r.median_a, r.median_b))) s += (s.empty() ? "" : ", ") + c.name + " " + c.note;
  return s;
}

// "10/10", or "10x5/10x5" (processes x repetitions each) when processes are the units.
std::string n_cell(const PhaseComparison& r) {
  if (r.unit == "rounds" && r.observations_a != r.observations_b)  // an unpaired throughput row
    return fmt::format("{}/{} rounds", r.observations_a, r.observations_b);
  if (r.unit == "rounds") return fmt::format("{} rounds", r.observations_a);
  if (r.unit != "processes") return fmt::format("{}/{}", r.observations_a, r.observations_b);
  auto side = [](size_t n, size_t samples) {
    return n ? fmt::format("{}x{:g}", n, std::round(10.0 * samples / n) / 10) : std::string("0");
  };
  return side(r.observations_a, r.samples_a) + "/" + side(r.observations_b, r.samples_b);
}

// The notes under the tables: how to read the metric, unit and p columns of these rows.
std::vector<std::string> legend(const Comparison& c, const FormatOptions& f) {
  bool secondary = false, processes = false, only = false, rounds = false, counted = false, tails = false,
       throughput = false, kernels = false;
  for (const auto& r : c.rows) {
    if (r.kind != "phase") {  // their own notes below; their units are not the phases' designs
      tails = tails || r.kind == "tail";
      throughput = throughput || r.kind == "throughput";
      continue;
    }
    secondary = secondary || r.metric == "gpu_ns";  // the GPU-or-wall note: only where GPU time was compared
    kernels = kernels || (r.primary && r.metric == "gpu_kernel_ns");
    processes = processes || r.unit == "processes";
    rounds = rounds || r.unit == "rounds";
    only = only || r.only_in.has_value();
    counted = counted || (r.primary && !compare_detail::is_time_metric(r.metric));
  }
  std::vector<std::string> out;
  if (secondary)
    out.push_back(c.metric_choice == MetricChoice::kWall
                      ? "metric: every phase is judged by wall time (--metric wall); GPU time in parentheses is shown, not judged"
                      : "metric: a phase with GPU time in every sample is judged by it (CUDA events); its wall time in "
                        "parentheses is shown, not judged (--metric wall judges wall time)");
  if (kernels)
    out.push_back("metric: kernel = GPU kernel time without gaps (--gpu-activity: the union of the phase's kernels); where "
                  "every sample of both sides has it, it judges the phase, and its GPU (CUDA event) and wall times in "
                  "parentheses are shown, not judged");
  if (counted)
    out.push_back("metric: a phase whose samples all name a counter as their primary_metric (a simulator's instruction "
                  "count) is judged by it; its times are shown, not judged");
  if (processes)
    out.push_back("n: processes x repetitions; each process's median is one observation (block design; --design samples: every sample)");
  if (rounds)
    out.push_back(std::string("n: rounds both sides ran (paired design): each round's medians on both sides give one log ratio; "
                              "B/A = exp(mean log ratio), CI: ") +
                  (c.rows.empty() || c.rows.front().ci_method != "bootstrap" ? "t interval over rounds" : "rounds resampled") +
                  ", change: mean per-round difference" + (f.wide ? ", p: Wilcoxon signed-rank (* = normal approximation)" : ""));
  if (only)
    out.push_back("only in A/B: a phase one build does not have costs 0 there; its row shows the other side's median "
                  "and the 95% bootstrap CI of that cost");
  if (tails)
    out.push_back("p90, p99 (load runs): each side's quantile over its measured jobs; p: Mood's quantile test (Fisher's "
                  "exact test of the jobs above the pooled quantile); CI: each side's distribution-free 97.5% CI of its "
                  "quantile, combined (jointly at least 95%; 0 or inf: too few jobs for that end)");
  if (throughput)
    out.push_back("throughput (load runs): completions per second in each round, medians over rounds; its B/A, change % "
                  "and verdict are those of the time between completions (A's throughput over B's), so above 1 is "
                  "slower, as in every row; CI: t over rounds (paired by round where both sides ran the same rounds, "
                  "else Welch)");
  if (!rounds || processes || std::any_of(c.rows.begin(), c.rows.end(), [](const PhaseComparison& r) { return r.unit == "samples"; }))
    out.push_back(std::string(f.wide ? "p: two-sided Mann-Whitney U (* = normal approximation); " : "") +
                  "change: median B - median A; CI: 95% bootstrap of the ratio of medians" +
                  (f.wide ? "" : " (--wide adds spreads and p-values)"));
  if (!c.accounting.empty())
    out.push_back("accounting: a parent's change = its children's changes (wall time, change of medians) - the change of "
                  "the time children ran side by side (overlap, from the recorded spans) + what no child explains "
                  "(remainder); n.s.: the term's 95% bootstrap CI includes 0; concurrent: ran on another thread than its parent, beside it");
  const auto unread = unread_counters(c);
  bool counters = false;  // some counter was read somewhere, so the column's filter matters
  for (const auto& r : c.rows)
    for (const auto& d : r.counters) counters = counters || !unread.count(d.name);
  if (counters && !f.wide) out.push_back("counters: those that changed by 10% or more and, for os:: counters, by enough to matter to the phase (docs/compare.md; --wide: every counter, and those read on one side only)");
  std::map<std::string, std::string> by_note;  // note -> counter names
  for (const auto& [name, note] : unread) by_note[note] += (by_note[note].empty() ? "" : ", ") + name;
  for (const auto& [note, names] : by_note)
    out.push_back(fmt::format("counters {}: {} on both sides in every row", names, note));
  return out;
}

std::vector<std::string> headers(const FormatOptions& f) {
  if (f.wide)
    return {"phase", "metric", "n A/B", "median A", "median B", "MAD/IQR A", "MAD/IQR B", "change",
            "B/A [95% CI]", "p", "verdict", "counters (B vs A)"};
  return {"phase", "metric", "n A/B", "median A", "median B", "change", "B/A [95% CI]", "verdict",
          "counters (B vs A)"};
}

std::vector<std::string> row_cells(const PhaseComparison& r, const std::map<std::string, std::string>& unread,
                                   const FormatOptions& f) {
  const std::string metric = r.metric == "wall_ns"         ? "wall"
                             : r.metric == "gpu_ns"        ? "gpu"
                             : r.metric == "gpu_kernel_ns" ? "kernel"
                                                           : r.metric;
  const bool only = r.only_in.has_value();
  std::string verdict = r.verdict + (r.verdict == "faster" || r.verdict == "slower" ? " " + output::change_pct(r.ratio) : "");
  if (!r.primary) verdict = "(" + verdict + ")";
  std::string ratio = only ? (std::isnan(r.delta_low) ? "-"
                                                      : fmt::format("cost [{}, {}]", fmt_ns(std::fabs(r.delta_low)),
                                                                    fmt_ns(std::fabs(r.delta_high))))
                           : fmt::format("{:.3f} [{:.3f}, {:.3f}]", r.ratio, r.ci_low, r.ci_high);
  auto value = [&](double v, bool absent) { return absent ? std::string("-") : compare_detail::value_text(r.metric, v); };
  std::vector<std::string> cells = {r.phase, r.primary ? metric : "(" + metric + ")", n_cell(r),
                                    value(r.median_a, r.only_in == Side::kB), value(r.median_b, r.only_in == Side::kA)};
  if (f.wide) {
    cells.push_back(r.only_in == Side::kB ? "-" : rel(r.mad_a, r.median_a) + "/" + rel(r.iqr_a, r.median_a));
    cells.push_back(r.only_in == Side::kA ? "-" : rel(r.mad_b, r.median_b) + "/" + rel(r.iqr_b, r.median_b));
  }
  cells.push_back(compare_detail::signed_value_text(r.metric, r.delta));
  cells.push_back(ratio);
  if (f.wide) cells.push_back(fmt::format("{:.3g}{}", r.p_value, r.exact_test ? "" : "*"));
  cells.push_back(verdict);
  cells.push_back(counters_text(r, unread, f));
  return cells;
}

std::vector<output::Cell> cells_of(const std::vector<std::string>& texts) { return {texts.begin(), texts.end()}; }

// The rows, accounting and summary of one case, in the order of the Comparison.
struct CaseView {
  std::string suite, case_name, params;
  std::vector<const PhaseComparison*> rows;
  std::vector<const Accounting*> accounting;
  const CaseSummary* summary = nullptr;
};

std::vector<CaseView> cases_of(const Comparison& c) {
  std::vector<CaseView> out;
  auto find = [&](const std::string& s, const std::string& n, const std::string& p) -> CaseView& {
    for (auto& v : out)
      if (v.suite == s && v.case_name == n && v.params == p) return v;
    out.push_back({s, n, p, {}, {}, nullptr});
    return out.back();
  };
  for (const auto& r : c.rows) find(r.suite, r.case_name, r.params).rows.push_back(&r);
  for (const auto& a : c.accounting) find(a.suite, a.case_name, a.params).accounting.push_back(&a);
  for (const auto& s : c.summaries) find(s.suite, s.case_name, s.params).summary = &s;
  return out;
}

std::string last_component(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string term_text(const AccountingTerm& t) {
  std::vector<std::string> notes;
  if (t.only_in) notes.push_back(only_in_text(*t.only_in));
  if (!t.significant) notes.push_back("n.s.");
  if (t.concurrent) notes.push_back("concurrent");
  const std::string name = t.kind == "child" ? last_component(t.phase) : t.kind;
  std::string s = fmt::format("{} {}", name, signed_ns(t.delta));
  if (!notes.empty()) {
    s += " (";
    for (size_t i = 0; i < notes.size(); ++i) s += (i ? ", " : "") + notes[i];
    s += ")";
  }
  return s;
}

// Which parents to show: a parent whose change, or some part of it, is significant.
bool worth_showing(const Accounting& a) {
  if (a.significant) return true;
  for (const auto& t : a.terms)
    if (t.significant && t.kind != "remainder") return true;
  return false;
}

// Depth of a parent below the case's shallowest parent, for the tree's indentation.
size_t depth(const std::string& path) { return static_cast<size_t>(std::count(path.begin(), path.end(), '/')); }

// One entry per distinct row warning with the rows that carry it: with few samples every row
// carries the same ones. `where` names a row.
template <class Where>
std::vector<std::pair<std::string, std::vector<std::string>>> grouped_warnings(const Comparison& c, Where where) {
  std::vector<std::pair<std::string, std::vector<std::string>>> grouped;
  for (const auto& r : c.rows)
    for (const auto& wn : r.warnings) {
      auto it = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == wn; });
      if (it == grouped.end()) it = grouped.insert(grouped.end(), {wn, {}});
      it->second.push_back(where(r));
    }
  return grouped;
}

// The parents of one case worth a line, with the depth of the shallowest (the tree's root).
std::pair<std::vector<const Accounting*>, size_t> shown_accounting(const CaseView& v) {
  std::vector<const Accounting*> shown;
  size_t base = SIZE_MAX;
  for (const auto* a : v.accounting)
    if (worth_showing(*a)) {
      shown.push_back(a);
      base = std::min(base, depth(a->parent));
    }
  return {shown, base};
}

}  // namespace

std::string format_accounting_line(const Accounting& a) {
  std::string s = fmt::format("{} {}", a.parent, signed_ns(a.delta));
  s += std::isnan(a.ci_low) ? "" : fmt::format(" [{}, {}]", signed_ns(a.ci_low), signed_ns(a.ci_high));
  if (!a.significant) s += " (n.s.)";
  s += " =";
  size_t children_shown = 0, lumped = 0;
  double lumped_delta = 0;
  bool first = true;
  auto add = [&](const std::string& text) {
    s += (first ? " " : " + ") + text;
    first = false;
  };
  for (const auto& t : a.terms) {
    if (t.kind == "child") {
      if (t.significant || children_shown < kTermsShown) {
        add(term_text(t));
        ++children_shown;
      } else {
        ++lumped;
        lumped_delta += t.delta;
      }
      continue;
    }
    if (lumped) {
      add(fmt::format("{} more {} (each n.s.)", lumped, signed_ns(lumped_delta)));
      lumped = 0;
    }
    add(term_text(t));
  }
  if (!a.overlap_measured) s += "; no complete spans on both sides: children counted as serial";
  return s;
}

std::string format_table(const Comparison& c, const FormatOptions& f) {
  const auto unread = unread_counters(c);
  std::string out = fmt::format("A: {}{}\nB: {}{}\n", c.path_a, c.label_a == "A" ? "" : "  " + c.label_a.substr(2),
                                c.path_b, c.label_b == "B" ? "" : "  " + c.label_b.substr(2));
  for (const auto& v : cases_of(c)) {
    out += fmt::format("\n== {}", case_title(v.suite, v.case_name));
    if (v.params != "{}" && !v.params.empty()) out += "  " + v.params;
    out += "\n\n";
    if (v.summary) out += v.summary->text + "\n\n";
    if (v.summary && !v.summary->design_reason.empty()) out += "design: " + v.summary->design_reason + "\n\n";
    auto [shown, base] = shown_accounting(v);
    if (!shown.empty()) {
      out += "Where the time went (wall time, change of medians B - A):\n";
      for (const auto* a : shown) out += std::string(2 + 2 * (depth(a->parent) - base), ' ') + format_accounting_line(*a) + "\n";
      out += "\n";
    }
    output::Table t = output::Table::with_titles(headers(f));
    t.rule = output::Rule::header;
    for (const auto* r : v.rows) t.add_row(cells_of(row_cells(*r, unread, f)));
    out += output::text(t);
  }
  out += "\n";
  for (const auto& l : legend(c, f)) out += l + "\n";
  const auto grouped = grouped_warnings(c, [&](const PhaseComparison& r) {
    return fmt::format("{} {} {}", case_label(c, r), r.phase, r.metric);
  });
  for (const auto& [wn, where] : grouped) {
    if (where.size() == 1)
      out += fmt::format("warning: {}: {}\n", where[0], wn);
    else
      out += fmt::format("warning: {} ({} rows, e.g. {})\n", wn, where.size(), where[0]);
  }
  for (const auto& wn : c.warnings) out += "warning: " + wn + "\n";
  return out;
}

std::string format_markdown(const Comparison& c, const FormatOptions& f) {
  const auto unread = unread_counters(c);
  std::string out = fmt::format("**{}**: `{}`  \n**{}**: `{}`\n", c.label_a, c.path_a, c.label_b, c.path_b);
  const auto hdr = headers(f);
  const size_t verdict_col = hdr.size() - 2;
  for (const auto& v : cases_of(c)) {
    out += fmt::format("\n### {}\n\n", case_title(v.suite, v.case_name));
    if (v.params != "{}" && !v.params.empty()) out += fmt::format("Parameters: `{}`\n\n", v.params);
    if (v.summary) out += v.summary->text + "\n\n";
    if (v.summary && !v.summary->design_reason.empty()) out += "Design: " + v.summary->design_reason + ".\n\n";
    auto [shown, base] = shown_accounting(v);
    if (!shown.empty()) {
      out += "Where the time went (wall time, change of medians B - A):\n\n";
      for (const auto* a : shown)
        out += std::string(2 * (depth(a->parent) - base), ' ') + "- " + format_accounting_line(*a) + "\n";
      out += "\n";
    }
    output::Table t = output::Table::with_titles(hdr);
    for (const auto* r : v.rows) {
      auto cells = row_cells(*r, unread, f);
      if (r->primary && (r->verdict == "slower" || r->verdict == "faster" || r->only_in.has_value()))
        cells[verdict_col] = fmt::format("**{}**", cells[verdict_col]);
      t.add_row(cells_of(cells));
    }
    out += output::markdown(t);
  }
  out += "\n";
  for (const auto& l : legend(c, f)) out += l + ".  \n";
  const auto grouped = grouped_warnings(c, [&](const PhaseComparison& r) {
    return fmt::format("{} `{}` {}", output::markdown_escape(case_label(c, r)), r.phase, r.metric);
  });
  std::string warn;
  for (const auto& [wn, where] : grouped)
    warn += where.size() == 1 ? fmt::format("- {}: {}\n", where[0], wn)
                              : fmt::format("- {} ({} rows, e.g. {})\n", wn, where.size(), where[0]);
  for (const auto& wn : c.warnings) warn += "- " + wn + "\n";
  if (!warn.empty()) out += "\n**Warnings**\n\n" + warn;
  return out;
}

namespace {

// The JSON's "missing": the side without the phase, the opposite of only_in.
const char* missing_letter(const PhaseComparison& r) {
  if (!r.only_in) return "";
  return *r.only_in == Side::kA ? "b" : "a";
}

json env_json(const EnvSummary& e) {
  return {{"samples", e.samples}, {"throttled", e.throttled}, {"loaded", e.loaded}, {"without_env", e.without_env},
          {"dropped", e.dropped}, {"examples", e.examples}};
}

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json accounting_json(const Accounting& a) {
  json terms = json::array();
  for (const auto& t : a.terms)
    terms.push_back({{"kind", t.kind}, {"phase", t.phase}, {"only", side_letter(t.only_in)}, {"median_a", num(t.median_a)},
                     {"median_b", num(t.median_b)}, {"delta", num(t.delta)}, {"ci_low", num(t.ci_low)},
                     {"ci_high", num(t.ci_high)}, {"significant", t.significant}, {"concurrent", t.concurrent}});
  return {{"suite", a.suite}, {"case", a.case_name}, {"parameters", a.params}, {"parent", a.parent},
          {"unit", a.unit}, {"n_a", a.observations_a}, {"n_b", a.observations_b}, {"median_a", num(a.median_a)},
          {"median_b", num(a.median_b)}, {"delta", num(a.delta)}, {"ci_low", num(a.ci_low)},
          {"ci_high", num(a.ci_high)}, {"significant", a.significant}, {"overlap_measured", a.overlap_measured},
          {"terms", terms}, {"text", format_accounting_line(a)}};
}

}  // namespace

nlohmann::json to_json(const Comparison& c) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    json counters = json::array();
    for (const auto& d : r.counters)
      counters.push_back({{"name", d.name},
                          {"median_a", d.median_a ? json(*d.median_a) : json(nullptr)},
                          {"median_b", d.median_b ? json(*d.median_b) : json(nullptr)},
                          {"ratio", d.ratio ? json(*d.ratio) : json(nullptr)},
                          {"note", d.note}});
    rows.push_back({{"suite", r.suite}, {"case", r.case_name}, {"parameters", r.params},
                    {"phase", r.phase}, {"metric", r.metric}, {"kind", r.kind}, {"primary", r.primary}, {"unit", r.unit},
                    {"design", r.design}, {"ci_method", r.ci_method}, {"log_ratios", r.log_ratios},
                    {"hodges_lehmann", num(r.hodges_lehmann)}, {"ci_t_low", num(r.t_low)}, {"ci_t_high", num(r.t_high)},
                    {"ci_boot_low", num(r.boot_low)}, {"ci_boot_high", num(r.boot_high)},
                    {"sd_log_ratio", num(r.sd_log_ratio)}, {"family", r.family}, {"family_low", num(r.family_low)},
                    {"family_high", num(r.family_high)},
                    {"n_a", r.observations_a}, {"n_b", r.observations_b}, {"samples_a", r.samples_a}, {"samples_b", r.samples_b},
                    {"median_a", num(r.median_a)}, {"median_b", num(r.median_b)},
                    {"mad_a", num(r.mad_a)}, {"mad_b", num(r.mad_b)}, {"iqr_a", num(r.iqr_a)},
                    {"iqr_b", num(r.iqr_b)}, {"ratio", num(r.ratio)}, {"ci_low", num(r.ci_low)},
                    {"ci_high", num(r.ci_high)}, {"delta", num(r.delta)}, {"delta_low", num(r.delta_low)},
                    {"delta_high", num(r.delta_high)}, {"p_value", num(r.p_value)},
                    {"exact_test", r.exact_test}, {"threshold", r.threshold}, {"verdict", r.verdict},
                    {"missing", missing_letter(r)}, {"counters", counters}, {"warnings", r.warnings}});
  }
  json accounting = json::array();
  for (const auto& a : c.accounting) accounting.push_back(accounting_json(a));
  json summaries = json::array();
  for (const auto& s : c.summaries)
    summaries.push_back({{"suite", s.suite}, {"case", s.case_name}, {"parameters", s.params},
                         {"end_to_end", s.end_to_end}, {"verdict", s.verdict}, {"rounds_needed", s.rounds_needed},
                         {"design", s.design}, {"design_reason", s.design_reason},
                         {"text", s.text}});
  // "injected": the side's header "injected" (spec, slowdowns) or null (harness/measure/inject.hpp).
  return {{"a", {{"path", c.path_a}, {"label", c.label_a}, {"format", c.format_a}, {"provenance", c.provenance_a}, {"machine", c.machine_a}, {"injected", c.injected_a}}},
          {"b", {{"path", c.path_b}, {"label", c.label_b}, {"format", c.format_b}, {"provenance", c.provenance_b}, {"machine", c.machine_b}, {"injected", c.injected_b}}},
          {"metric", choice_name(c.metric_choice)},
          {"design", choice_name(c.design)},
          {"environment", {{"a", env_json(c.env_a)}, {"b", env_json(c.env_b)}}},
          {"summaries", summaries},
          {"rows", rows},
          {"accounting", accounting},
          {"cases_only_a", c.cases_only_a},
          {"cases_only_b", c.cases_only_b},
          {"warnings", c.warnings}};
}

}  // namespace cuzk
