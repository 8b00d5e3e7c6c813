// The pull-request comment of a gated merge (pr_comment.hpp): the gate's verdict told as a story,
// from the comparison the gate judged and the history the caller read.
#include "harness/analysis/pr_comment.hpp"

#include <fmt/core.h>

#include <cmath>
#include <set>

#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/output/printers.hpp"

namespace cuzk {
namespace {

const GatedPhase* gated_of(const GateResult& g, const PhaseComparison& r) {
  for (const auto& p : g.gated)
    if (p.suite == r.suite && p.case_name == r.case_name && p.params == r.params && p.phase == r.phase &&
        p.metric == r.metric)
      return &p;
  return nullptr;
}

// The metric too: a load case's tail and throughput rows share their phase with its median row.
bool alarmed(const std::vector<GateAlarm>& alarms, const PhaseComparison& r) {
  for (const auto& a : alarms)
    if (a.suite == r.suite && a.case_name == r.case_name && a.params == r.params && a.phase == r.phase &&
        a.metric == r.metric)
      return true;
  return false;
}

// The verdict a row carries in the comment: the gate's (its adjusted p) where it gated the row,
// else compare's.
std::string verdict_of(const GateResult& g, const PhaseComparison& r) {
  if (const GatedPhase* p = gated_of(g, r)) return p->verdict;
  return r.verdict;
}

bool is_change(const std::string& v) { return v == "slower" || v == "faster" || v == "only in A" || v == "only in B"; }

std::string headline(const GateResult& g) {
  if (g.result == "error") return "cuzk perf: ERROR, the gate could not decide (it fails closed)";
  if (g.result == "regression")
    return fmt::format("cuzk perf: REGRESSION in {} phase{}", g.regressions.size(), g.regressions.size() == 1 ? "" : "s");
  if (!g.warned.empty())
    return fmt::format("cuzk perf: pass, with {} regression{} in phases whose policy is warn", g.warned.size(),
                       g.warned.size() == 1 ? "" : "s");
  return "cuzk perf: pass";
}

std::string ci_text(const PhaseComparison& r) {
  if (std::isnan(r.ci_low) || std::isnan(r.ci_high)) return "-";
  return fmt::format("[{}, {}]", output::change_pct(r.ci_low), output::change_pct(r.ci_high));
}

std::string p_text(const GateResult& g, const PhaseComparison& r) {
  if (const GatedPhase* p = gated_of(g, r))
    return fmt::format("{} (adjusted {})", output::pval(p->p_value), output::pval(p->adjusted_p));
  return output::pval(r.p_value);
}

// A row's median in its unit: a time, except a load case's throughput (jobs per second).
std::string value_text(const PhaseComparison& r, double v) {
  return compare_detail::value_text(r.kind == "phase" ? "wall_ns" : r.metric, v);
}

// "`proof`", or "`request` p99" for a load case's tail row.
std::string phase_cell(const PhaseComparison& r) {
  return "`" + r.phase + "`" + (r.kind == "phase" ? "" : " " + r.metric);
}

}  // namespace

std::vector<ChangedPhase> changed_phases(const GateResult& g) {
  std::vector<ChangedPhase> out;
  std::set<std::string> seen;
  if (!g.comparison) return out;
  for (const auto& r : g.comparison->rows) {
    if (!r.primary || r.kind != "phase") continue;  // the history keeps phases' times, not tails or throughput
    if (!is_change(verdict_of(g, r)) && !alarmed(g.alarms, r) && !alarmed(g.warn_alarms, r)) continue;
    if (seen.insert(r.suite + '\x1f' + r.case_name + '\x1f' + r.phase + '\x1f' + r.metric).second)
      out.push_back({r.suite, r.case_name, r.phase, r.metric});
  }
  return out;
}

std::string format_pr_comment(const GateResult& g, const PrCommentInput& in) {
  std::string md = std::string(kPrCommentMarker) + "\n## " + headline(g) + "\n\n";
  const Comparison* c = g.comparison ? &*g.comparison : nullptr;
  md += fmt::format("**{}** against **{}**", in.base.empty() ? "`" + g.baseline + "` (base)" : in.base,
                    in.head.empty() ? "`" + g.candidate + "` (head)" : in.head);
  if (c) {
    const std::string machine = c->machine_b.is_object() ? c->machine_b.value("cpu_model", std::string()) : std::string();
    if (!machine.empty()) md += ", on " + machine;
  }
  md += g.family_summary.empty() ? ".\n\n" : fmt::format(". {}.\n\n", g.family_summary);

  if (!g.errors.empty()) {
    md += "### Errors: no decision\n\n";
    for (const auto& e : g.errors) md += "- " + output::markdown_escape(e) + "\n";
    md += "\n";
  }
  if (c)
    for (const auto& s : c->summaries) md += s.text + "\n\n";

  // The rows whose verdict is a change, and every alarmed row: what a reviewer acts on.
  if (c) {
    output::Table t({{"case"}, {"phase"}, {"policy"}, {"base"}, {"head"}, {"change", output::Align::right},
                     {"95% CI", output::Align::right}, {"p"}, {"verdict"}});
    for (const auto& r : c->rows) {
      if (!r.primary) continue;
      const std::string v = verdict_of(g, r);
      const bool fails = alarmed(g.alarms, r), warns = alarmed(g.warn_alarms, r);
      if (!is_change(v) && !fails && !warns) continue;
      const std::string policy = g.thresholds ? policy_of(*g.thresholds, r.phase) : "fail";
      t.add_row({r.suite + "/" + r.case_name, phase_cell(r), policy, value_text(r, r.median_a),
                 value_text(r, r.median_b),
                 output::change_pct(r.ratio), ci_text(r), p_text(g, r),
                 fails ? "**" + v + ": fails the gate**" : warns ? v + ": warns" : v});
    }
    md += "### Significant changes\n\n";
    md += t.rows.empty() ? "None: no phase's change is significant beyond its threshold.\n\n" : output::markdown(t) + "\n";
  }

  if (!g.warned.empty()) {
    md += "### Regressions in phases whose policy is warn\n\n";
    for (const auto& w : g.warned) md += "- " + output::markdown_escape(w) + "\n";
    md += "\n";
  }

  // Where the time went: each parent whose change is significant, as a sum of its children.
  if (c) {
    std::vector<std::string> lines;
    for (const auto& a : c->accounting)
      if (a.significant) lines.push_back(fmt::format("- {}/{}: {}", a.suite, a.case_name, format_accounting_line(a)));
    if (!lines.empty()) {
      md += "### Where the time went\n\n";
      for (const auto& l : lines) md += l + "\n";
      md += "\n";
    }
  }

  // Counters whose change is notable beside their phase (compare's rule), in phases that changed.
  if (c) {
    output::Table t({{"case"}, {"phase"}, {"counter"}, {"base", output::Align::right}, {"head", output::Align::right},
                     {"change", output::Align::right}});
    for (const auto& r : c->rows) {
      if (!r.primary || !is_change(verdict_of(g, r))) continue;
      for (const auto& d : r.counters) {
        if (!d.median_a || !d.median_b || !counter_is_notable(d, r.median_a, r.median_b)) continue;
        t.add_row({r.suite + "/" + r.case_name, "`" + r.phase + "`", d.name, output::sig3(*d.median_a),
                   output::sig3(*d.median_b), d.note});
      }
    }
    if (!t.rows.empty()) md += "### Counters that moved\n\n" + output::markdown(t) + "\n";
  }

  md += "### History of the changed phases\n\n";
  if (!in.history_read) {
    md += "No results history was given (`--history`): `cuzk-bench history ingest` keeps every run, and the change "
          "points of these phases would show here.\n\n";
  } else {
    for (const auto& e : in.history_errors) md += "- could not read the history: " + output::markdown_escape(e) + "\n";
    if (in.history.empty()) {
      md += fmt::format("No change point in the {} series of the changed phases in {}.\n\n", in.history_series,
                        in.history_where);
    } else {
      output::Table t({{"change point"}, {"status"}, {"case"}, {"phase"}, {"commits"}, {"change", output::Align::right},
                       {"95% CI", output::Align::right}, {"p"}});
      for (const auto& h : in.history)
        t.add_row({"`" + h.id + "`", h.status, h.case_name, "`" + h.phase + "`" + (h.metric == "wall_ns" ? "" : " " + h.metric),
                   h.before.substr(0, 10) + ".." + h.after.substr(0, 10), output::change_pct(h.ratio) + " (" + h.direction + ")",
                   fmt::format("[{}, {}]", output::change_pct(h.low), output::change_pct(h.high)), output::pval(h.p_value)});
      md += fmt::format("{} change point{} in the {} series of the changed phases in {}, newest first:\n\n",
                        in.history.size(), in.history.size() == 1 ? "" : "s", in.history_series, in.history_where);
      md += output::markdown(t) + "\n";
    }
  }

  md += "### Reproduce\n\n```\n";
  md += in.reproduce.empty() ? fmt::format("cuzk-bench gate --baseline {} --candidate {} --thresholds {}", g.baseline,
                                           g.candidate, g.thresholds_path)
                             : in.reproduce;
  md += "\n```\n\n";
  if (!g.warnings.empty()) {
    md += "<details><summary>Warnings (" + std::to_string(g.warnings.size()) + ")</summary>\n\n";
    for (const auto& w : g.warnings) md += "- " + output::markdown_escape(w) + "\n";
    md += "\n</details>\n\n";
  }
  if (c) {
    const std::string full = "<details><summary>The whole comparison</summary>\n\n" + format_markdown(*c) + "\n</details>\n";
    md += md.size() + full.size() <= kPrCommentLimit
              ? full
              : "The whole comparison is too long for a comment: it is in the job's summary and its artifacts.\n";
  }
  if (md.size() > kPrCommentLimit) md = md.substr(0, kPrCommentLimit - 100) + "\n\n(cut: the comment's size limit)\n";
  return md;
}

}  // namespace cuzk
