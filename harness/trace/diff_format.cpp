#include "harness/trace/diff_format.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

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
  output::Section hidden{kHiddenSection, {}};
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
  // A phase's CUDA-event time is its busy time plus its idle time: where compare saw a GPU phase
  // move while its work did not, the idle time inside it is what moved.
  output::Section idle{kIdleSection, {}};
  for (const auto& p : d.phases) {
    const bool moved = p.idle.verdict == "slower" || p.idle.verdict == "faster";
    if (!moved || std::fabs(p.idle.change()) < 0.05 * (p.busy.med_a + p.idle.med_a)) continue;
    idle.items.push_back(fmt::format("{}: idle {} -> {} ({}, {}); GPU busy {} -> {} ({}){}", p.phase, dur(p.idle.med_a),
                                     dur(p.idle.med_b), signed_dur(p.idle.change()), p.idle.verdict, dur(p.busy.med_a),
                                     dur(p.busy.med_b), p.busy.verdict,
                                     phase_moved(p, t) ? "" : ": the GPU waited inside the phase; its work did not change"));
  }
  s.sections.push_back(std::move(idle));
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
  // Per item, in launch order: the compared launches that changed, and the runs of launches that
  // only one side has (a key upload in 1400 chunks reads as one line, not 400 rows).
  struct PerItem {
    std::vector<const LaunchDiff*> changed;
    size_t compared = 0;
    std::vector<std::pair<uint32_t, uint32_t>> only_a, only_b;  // [first k, last k]
  };
  std::vector<std::string> order;
  std::map<std::string, PerItem> items;
  for (const auto& l : p.launches_by_k) {
    if (!items.count(l.name)) order.push_back(l.name);
    PerItem& it = items[l.name];
    const bool only_a = l.duration.verdict == "only in A", only_b = l.duration.verdict == "only in B";
    if (only_a || only_b) {
      auto& runs = only_a ? it.only_a : it.only_b;
      if (!runs.empty() && runs.back().second + 1 == l.k)
        runs.back().second = l.k;
      else
        runs.push_back({l.k, l.k});
      continue;
    }
    ++it.compared;
    if (!is_change(l.duration, threshold)) {
      ++same;
      continue;
    }
    it.changed.push_back(&l);
  }
  for (const auto& name : order) {
    PerItem& it = items[name];
    if (it.changed.size() > kLaunchRowsPerItem) {
      const size_t n = it.changed.size();
      std::stable_sort(it.changed.begin(), it.changed.end(), [](const LaunchDiff* x, const LaunchDiff* y) {
        return std::fabs(std::log(x->duration.ratio)) > std::fabs(std::log(y->duration.ratio));
      });
      it.changed.resize(kLaunchRowsPerItem);
      std::sort(it.changed.begin(), it.changed.end(), [](const LaunchDiff* x, const LaunchDiff* y) { return x->k < y->k; });
      t.notes.push_back(fmt::format("{}: {} of its {} compared launches differ; the {} largest changes are listed. Each "
                                    "launch is its own test: at alpha 0.05 about {} would differ by chance",
                                    name, n, it.compared, kLaunchRowsPerItem, (it.compared + 10) / 20));
    }
    for (const LaunchDiff* l : it.changed)
      t.add_row({{fmt::format("{} #{}", l->name, l->k), fmt::format("{} #{}", l->name, l->k)},
                 dur_cell(l->duration.med_a), dur_cell(l->duration.med_b), ratio_cell(l->duration), p_cell(l->duration),
                 l->duration.verdict});
    for (const auto& [side, runs] : {std::pair{"A", &it.only_a}, std::pair{"B", &it.only_b}})
      for (const auto& [first, last] : *runs)
        t.notes.push_back(first == last ? fmt::format("{} #{}: only in {}", name, first, side)
                                        : fmt::format("{} #{}-#{} ({} launches): only in {}", name, first, last,
                                                      last - first + 1, side));
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
