#include "harness/trace/diff_format.hpp"

#include <fmt/core.h>

#include <cmath>

#include "harness/analysis/output/format.hpp"
#include "harness/analysis/output/printers.hpp"

namespace cuzk::trace {

namespace {

// A duration in the unit that keeps it readable: "850 us", "12.3 ms".
std::string dur(double ns) {
  if (std::isnan(ns)) return "-";
  if (std::fabs(ns) < 1e6) return output::sig3(ns / 1e3) + " us";
  return output::sig3(ns / 1e6) + " ms";
}

std::string signed_dur(double ns) { return (ns > 0 ? "+" : ns < 0 ? "-" : "") + dur(std::fabs(ns)); }

std::string change_text(const Compared& c) {
  if (std::isnan(c.ratio)) return c.verdict.rfind("only", 0) == 0 ? c.verdict : "-";
  return output::change_pct(c.ratio);
}

std::string ci_text(const Compared& c) {
  if (std::isnan(c.ci_low)) return "-";
  return fmt::format("[{}, {}]", output::change_pct(c.ci_low), output::change_pct(c.ci_high));
}

output::Cell dur_cell(double ns) { return {dur(ns), ns}; }
output::Cell p_cell(const Compared& c) {
  return std::isnan(c.p) ? output::Cell("-", nullptr) : output::Cell(output::pval(c.p), c.p);
}
output::Cell ratio_cell(const Compared& c) {
  return std::isnan(c.ratio) ? output::Cell(change_text(c), nullptr) : output::Cell(change_text(c), c.ratio);
}

bool is_change(const Compared& c, double threshold) {
  if (c.verdict == "slower" || c.verdict == "faster" || c.verdict.rfind("only", 0) == 0) return true;
  return c.verdict == "n/a" && std::fabs(c.ratio - 1) > threshold;
}

// Phases the summary explains: a verdict of a change, or without statistics a change beyond the threshold.
bool phase_moved(const PhaseDiff& p, double threshold) { return is_change(p.busy, threshold); }

std::string count_pair(double a, double b) { return fmt::format("{:g}/{:g}", a, b); }

}  // namespace

output::Summary diff_summary(const Diff& d) {
  output::Summary s;
  size_t moved = 0;
  const double t = d.options.threshold;
  for (const auto& p : d.phases) moved += phase_moved(p, t);
  s.headline = fmt::format("trace-diff: {} of {} phase(s) changed GPU busy time ({} trace(s) A, {} trace(s) B)",
                           moved, d.phases.size(), d.files_a.size(), d.files_b.size());
  s.lines = d.notes;
  output::Section hidden{"Changed but hidden behind another stream", {}};
  for (const auto& p : d.phases) {
    if (phase_moved(p, t)) {
      output::Section sec;
      sec.title = fmt::format("{}: GPU busy {} -> {} ({}, {}{})", p.phase, dur(p.busy.med_a), dur(p.busy.med_b),
                              change_text(p.busy), p.busy.verdict,
                              std::isnan(p.busy.p) ? "" : ", p " + output::pval(p.busy.p));
      for (const auto& it : p.items) {
        if (sec.items.size() == kSummaryItems) break;
        if (it.exposed.change() == 0 || std::fabs(it.share) < 0.05) continue;
        sec.items.push_back(fmt::format("{} ({}): exposed {}, {} of the phase's change; total {} ({})", it.name,
                                        it.kind, signed_dur(it.exposed.change()), output::pct(it.share),
                                        change_text(it.total), it.total.verdict));
      }
      if (sec.items.empty())
        sec.items.push_back("no single kernel or copy explains it: the change sits in work overlapped across streams");
      s.sections.push_back(std::move(sec));
    }
    for (const auto& it : p.items)
      if ((it.total.verdict == "slower" || it.total.verdict == "faster") && it.where != "exposed" &&
          std::fabs(it.exposed.change()) < 0.5 * std::fabs(it.total.change()))
        hidden.items.push_back(fmt::format("{}: {} {} ({}), {}; the phase's GPU busy time: {}", p.phase, it.name,
                                           change_text(it.total), it.total.verdict, it.where, p.busy.verdict));
  }
  s.sections.push_back(std::move(hidden));
  return s;
}

output::Table phase_table(const Diff& d) {
  using output::Align;
  output::Table t({{"phase"},
                   {"occ A/B", Align::right, "occurrences"},
                   {"busy A", Align::right, "busy_a_ns"},
                   {"busy B", Align::right, "busy_b_ns"},
                   {"change", Align::right, "ratio"},
                   {"95% CI", Align::right, "ci"},
                   {"p", Align::right},
                   {"verdict"},
                   {"kernels", Align::right, "kernel_change_ns"},
                   {"copies", Align::right, "copy_change_ns"},
                   {"idle A", Align::right, "idle_a_ns"},
                   {"idle B", Align::right, "idle_b_ns"},
                   {"launches A/B", Align::right, "launches"}});
  std::vector<std::string> idle_phases;  // no GPU work on either side: rows of zeros say nothing
  for (const auto& p : d.phases) {
    if (p.launches.med_a == 0 && p.launches.med_b == 0 && p.busy.med_a == 0 && p.busy.med_b == 0) {
      idle_phases.push_back(p.phase);
      continue;
    }
    t.add_row({p.phase, count_pair(p.occurrences_a, p.occurrences_b), dur_cell(p.busy.med_a), dur_cell(p.busy.med_b),
               ratio_cell(p.busy), ci_text(p.busy), p_cell(p.busy), p.busy.verdict,
               {signed_dur(p.kernel.change()), p.kernel.change()}, {signed_dur(p.copy.change()), p.copy.change()},
               dur_cell(p.idle.med_a), dur_cell(p.idle.med_b), count_pair(p.launches.med_a, p.launches.med_b)});
  }
  if (!idle_phases.empty()) {
    std::string names;
    for (const auto& n : idle_phases) names += (names.empty() ? "" : ", ") + n;
    t.notes.push_back(fmt::format("not listed: {} phase(s) that launched no GPU work on either side ({})",
                                  idle_phases.size(), names));
  }
  t.notes.push_back("busy: the union of the phase's GPU activity per trace, summed over its occurrences (median over "
                    "traces); change: B/A of the medians; kernels, copies: change of their summed time; idle: the "
                    "phase's GPU span less busy");
  return t;
}

output::Table item_table(const PhaseDiff& p, bool phase_changed) {
  using output::Align;
  output::Table t({{"item"},
                   {"kind"},
                   {"launches A/B", Align::right, "launches"},
                   {"total A", Align::right, "total_a_ns"},
                   {"total B", Align::right, "total_b_ns"},
                   {"change", Align::right, "ratio"},
                   {"p", Align::right},
                   {"verdict"},
                   {"per launch", Align::right, "launch_median_ratio"},
                   {"exposed A", Align::right, "exposed_a_ns"},
                   {"exposed B", Align::right, "exposed_b_ns"},
                   {"where"},
                   {"share", Align::right},
                   {"geometry"},
                   {"regs", Align::right, "registers"}});
  for (const auto& it : p.items)
    t.add_row({it.name, it.kind, count_pair(it.launches_a, it.launches_b), dur_cell(it.total.med_a),
               dur_cell(it.total.med_b), ratio_cell(it.total), p_cell(it.total), it.total.verdict,
               ratio_cell(it.launch_median), dur_cell(it.exposed.med_a), dur_cell(it.exposed.med_b), it.where,
               // A share of a change that did not happen would be noise over noise.
               phase_changed ? output::Cell(output::pct(it.share), it.share) : output::Cell("-", nullptr), it.geometry,
               it.registers < 0 ? output::Cell(it.kind == "kernel" ? "varies" : "", nullptr)
                                : output::Cell(std::to_string(it.registers), it.registers)});
  t.notes.push_back("exposed: time no activity of the process ran on another stream of the device; share: change of "
                    "exposed time / change of the phase's busy time, where the phase changed; per launch: B/A of "
                    "the median launch");
  return t;
}

output::Table launch_table(const PhaseDiff& p, double threshold) {
  using output::Align;
  output::Table t({{"launch"},
                   {"A", Align::right, "a_ns"},
                   {"B", Align::right, "b_ns"},
                   {"change", Align::right, "ratio"},
                   {"p", Align::right},
                   {"verdict"}});
  size_t same = 0;
  for (const auto& l : p.launches_by_k) {
    if (!is_change(l.duration, threshold)) {
      ++same;
      continue;
    }
    t.add_row({{fmt::format("{} #{}", l.name, l.k), fmt::format("{} #{}", l.name, l.k)},
               l.duration.a.empty() ? output::Cell("-", nullptr) : dur_cell(l.duration.med_a),
               l.duration.b.empty() ? output::Cell("-", nullptr) : dur_cell(l.duration.med_b), ratio_cell(l.duration),
               p_cell(l.duration), l.duration.verdict});
  }
  if (same) t.notes.push_back(fmt::format("{} launch(es) unchanged, not listed", same));
  return t;
}

std::string format_text(const Diff& d) {
  std::string out = output::text(diff_summary(d)) + "\n" + output::text(phase_table(d)) +
                    output::text_notes(phase_table(d));
  for (const auto& p : d.phases) {
    if (p.items.empty()) continue;
    out += fmt::format("\n{}\n", p.phase);
    const auto items = item_table(p, phase_moved(p, d.options.threshold));
    out += output::text(items);
    const auto launches = launch_table(p, d.options.threshold);
    if (!launches.rows.empty()) out += "\nk-th launches that differ:\n" + output::text(launches);
    out += output::text_notes(launches);
  }
  if (!d.phases.empty()) out += "\n" + output::text_notes(item_table(d.phases.front(), true));
  return out;
}

std::string format_markdown(const Diff& d) {
  const auto phases = phase_table(d);
  std::string out = output::markdown(diff_summary(d)) + "\n" + output::markdown(phases);
  for (const auto& n : phases.notes) out += "\n" + n + "\n";
  for (const auto& p : d.phases) {
    if (p.items.empty()) continue;
    out += fmt::format("\n### {}\n\n", output::markdown_escape(p.phase)) + output::markdown(item_table(p, phase_moved(p, d.options.threshold)));
    const auto launches = launch_table(p, d.options.threshold);
    if (!launches.rows.empty()) out += "\nk-th launches that differ:\n\n" + output::markdown(launches);
    for (const auto& n : launches.notes) out += "\n" + n + "\n";
  }
  return out;
}

nlohmann::json to_json(const Diff& d) {
  nlohmann::json j;
  j["schema"] = "cuzk.trace-diff";
  j["version"] = 1;
  j["files"] = {{"a", d.files_a}, {"b", d.files_b}};
  j["options"] = {{"alpha", d.options.alpha}, {"threshold", d.options.threshold}, {"phase", d.options.phase}};
  j["traces_needed"] = d.traces_needed;
  j["summary"] = output::to_json(diff_summary(d));
  j["phases"] = output::to_json(phase_table(d));
  nlohmann::json details = nlohmann::json::array();
  for (const auto& p : d.phases)
    details.push_back({{"phase", p.phase},
                       {"items", output::to_json(item_table(p, phase_moved(p, d.options.threshold)))},
                       {"launches", output::to_json(launch_table(p, d.options.threshold))}});
  j["details"] = std::move(details);
  return j;
}

}  // namespace cuzk::trace
