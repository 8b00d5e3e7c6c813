#include "harness/trace/gate_kernels.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/analysis/compare.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/trace/model.hpp"
#include "harness/trace/nsys_export.hpp"

namespace cuzk::trace {
namespace {

// The key of a [kernels."phase"] table that names the phase's GPU idle time, not a kernel.
constexpr const char* kIdleKey = "idle";

// One named limit and the row of the comparison it judges.
struct KernelLimit {
  std::string phase, key;
  double max = 0;
  const Compared* row = nullptr;
};

const PhaseDiff* find_phase(const Diff& d, const std::string& name) {
  for (const auto& p : d.phases)
    if (p.phase == name) return &p;
  return nullptr;
}

std::string ms(double ns) { return output::sig3(ns / 1e6) + " ms"; }

}  // namespace

DiffOptions kernel_diff_options(const GateThresholds& t) {
  DiffOptions o;
  o.alpha = t.alpha;
  o.threshold = t.max_slowdown;
  return o;
}

void gate_kernels(GateResult& g, const Diff& d, const GateThresholds& t) {
  if (d.files_a.size() < 2 || d.files_b.size() < 2) {
    g.errors.push_back(fmt::format("[kernels] needs at least 2 traces a side to test ({} baseline, {} candidate); {} a "
                                   "side let the U test reach alpha {:g}",
                                   d.files_a.size(), d.files_b.size(), traces_for_alpha(t.alpha), t.alpha));
    set_result(g);
    return;
  }
  std::vector<KernelLimit> limits;
  for (const auto& [phase, keys] : t.kernel_limits) {
    const PhaseDiff* p = find_phase(d, phase);
    if (!p || p->occurrences_a == 0 || p->occurrences_b == 0) {
      const char* side = !p ? "either side's" : p->occurrences_a == 0 ? "the baseline's" : "the candidate's";
      g.errors.push_back(fmt::format("phase {} (named in [kernels]) is not in {} traces", phase, side));
      continue;
    }
    for (const auto& [key, max] : keys) {
      if (key == kIdleKey) {
        limits.push_back({phase, key, max, &p->idle});
        continue;
      }
      auto it = std::find_if(p->items.begin(), p->items.end(),
                             [&k = key](const ItemDiff& i) { return i.kind == "kernel" && i.name == k; });
      if (it == p->items.end() || it->total.verdict == "only in A" || it->total.verdict == "only in B") {
        const char* side = it == p->items.end()           ? "either side's"
                           : it->total.verdict == "only in A" ? "the candidate's"
                                                              : "the baseline's";
        g.errors.push_back(fmt::format("kernel {} of phase {} (named in [kernels]) is not in {} traces (names as "
                                       "trace-diff prints them)",
                                       key, phase, side));
        continue;
      }
      limits.push_back({phase, key, max, &it->total});
    }
    for (const auto& i : p->items)
      if (i.kind == "kernel" && i.total.verdict == "only in B")
        g.warnings.push_back(fmt::format("{} kernel {}: only in the candidate's traces, {} a trace (median; not gated)",
                                         phase, i.name, ms(i.total.med_b)));
  }

  // Their own Holm family: the limits named are the tests made on the traces.
  std::vector<double> p;
  for (const auto& l : limits) p.push_back(std::isnan(l.row->p) ? 1.0 : l.row->p);
  const std::vector<double> adjusted = holm_adjusted(p);
  for (size_t i = 0; i < limits.size(); ++i) {
    const KernelLimit& l = limits[i];
    const Compared& c = *l.row;
    const std::string verdict = std::isnan(c.ci_low) ? c.verdict
                                                     : compare_verdict(adjusted[i], c.ratio, c.ci_low, c.ci_high, t.alpha,
                                                                       t.max_slowdown);
    if (verdict != "slower" || !(c.ratio > l.max)) continue;
    const std::string what = l.key == kIdleKey ? l.phase + " idle" : l.phase + " kernel " + l.key;
    GateAlarm a;
    a.kind = "kernel";
    a.phase = l.phase;
    a.metric = l.key;
    a.p_value = c.p;
    a.adjusted_p = adjusted[i];
    a.text = fmt::format("{}: {} -> {} ({}, p = {}, adjusted p = {}, Holm over {} kernel limit{}) exceeds max ratio {:.2f}",
                         what, ms(c.med_a), ms(c.med_b), output::change_pct(c.ratio), output::pval(c.p),
                         output::pval(adjusted[i]), limits.size(), limits.size() == 1 ? "" : "s", l.max);
    g.regressions.push_back(a.text);
    g.alarms.push_back(std::move(a));
  }
  if (!limits.empty()) {
    const std::string family =
        fmt::format("[kernels]: Holm's procedure over its own family of {} kernel limit{} at alpha {:g} ({} and {} traces)",
                    limits.size(), limits.size() == 1 ? "" : "s", t.alpha, d.files_a.size(), d.files_b.size());
    g.family_summary = g.family_summary.empty() ? family : g.family_summary + "; " + family;
    const size_t needed = traces_for_alpha(t.alpha / static_cast<double>(limits.size()));
    if (std::min(d.files_a.size(), d.files_b.size()) < needed)
      g.warnings.push_back(fmt::format("[kernels]: with {} and {} traces the first of {} kernel limits cannot reach alpha "
                                       "{:g} / {}: about {} traces a side would let it",
                                       d.files_a.size(), d.files_b.size(), limits.size(), t.alpha, limits.size(), needed));
  }
  set_result(g);
}

void gate_traces(GateResult& g, const std::string& dir_a, const std::string& dir_b) {
  if (!g.thresholds) return;
  const GateThresholds& t = *g.thresholds;
  const bool traces = !dir_a.empty() || !dir_b.empty();
  if (traces && (dir_a.empty() || dir_b.empty())) {
    g.errors.push_back("--traces-a and --traces-b: give both folders, or neither");
  } else if (traces && t.kernel_limits.empty()) {
    g.errors.push_back("--traces-a/--traces-b given, but the thresholds have no [kernels.\"phase\"] table to judge them by");
  } else if (!traces && !t.kernel_limits.empty()) {
    g.errors.push_back("[kernels] limits need the traces: give --traces-a DIR --traces-b DIR (nsys exports of each side)");
  } else if (traces) {
    try {
      const DiffOptions o = kernel_diff_options(t);
      const Diff d = diff_traces(load_models(sqlite_files_in(dir_a, "--traces-a")),
                                 load_models(sqlite_files_in(dir_b, "--traces-b")), o);
      gate_kernels(g, d, t);
      return;
    } catch (const TraceError& e) {
      g.errors.push_back(e.what());
    }
  }
  set_result(g);
}

}  // namespace cuzk::trace
