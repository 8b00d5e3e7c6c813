#include "harness/trace/diff.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "harness/analysis/compare.hpp"
#include "harness/analysis/stats.hpp"

namespace cuzk::trace {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The k-th launch rows are many and short; fewer resamples keep a large trace quick.
constexpr int kLaunchResamples = 500;

bool all_zero(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return x == 0; });
}

bool in_scope(const std::string& phase, const std::string& filter) {
  return filter.empty() || phase == filter || phase.rfind(filter + "/", 0) == 0;
}

const PhaseTotals* find_phase(const TraceModel& m, const std::string& phase) {
  auto it = m.phases.find(phase);
  return it == m.phases.end() ? nullptr : &it->second;
}

const ItemTotals* find_item(const PhaseTotals* p, const std::string& name) {
  if (!p) return nullptr;
  auto it = p->items.find(name);
  return it == p->items.end() ? nullptr : &it->second;
}

// One value per trace: f(phase totals), 0 where the trace has no such phase.
template <class F>
std::vector<double> per_trace(const std::vector<TraceModel>& side, const std::string& phase, F&& f) {
  std::vector<double> out;
  static const PhaseTotals none;
  for (const auto& m : side) {
    const PhaseTotals* p = find_phase(m, phase);
    out.push_back(f(p ? *p : none));
  }
  return out;
}

// One value per trace that has the item: f(item); `zero_if_absent` counts the others as 0.
template <class F>
std::vector<double> per_trace_item(const std::vector<TraceModel>& side, const std::string& phase,
                                   const std::string& name, bool zero_if_absent, F&& f) {
  std::vector<double> out;
  for (const auto& m : side) {
    const ItemTotals* it = find_item(find_phase(m, phase), name);
    if (it) out.push_back(f(*it));
    else if (zero_if_absent) out.push_back(0);
  }
  return out;
}

// The geometry and registers the item has in every trace of a side, or "varies" / -1.
void shape_of(const std::vector<TraceModel>& side, const std::string& phase, ItemDiff& d) {
  bool first = true;
  for (const auto& m : side) {
    const ItemTotals* it = find_item(find_phase(m, phase), d.name);
    if (!it || it->kind != "kernel") continue;
    if (first) {
      d.geometry = it->geometry;
      d.registers = it->registers;
      first = false;
    } else {
      if (d.geometry != it->geometry) d.geometry = "varies";
      if (d.registers != it->registers) d.registers = -1;
    }
  }
}

}  // namespace

std::string exposure_word(double exposed, double total) {
  if (!(total > 0)) return "";
  const double f = exposed / total;
  if (f >= 0.95) return "exposed";
  if (f <= 0.05) return "hidden";
  return "partly hidden";
}

size_t traces_for_alpha(double alpha) {
  double c = 1;  // C(2n, n)
  for (size_t n = 1; n < 200; ++n) {
    c = c * static_cast<double>(2 * n) * static_cast<double>(2 * n - 1) / static_cast<double>(n * n);
    if (2.0 / c < alpha) return n;
  }
  return 200;
}

Compared compare_values(std::vector<double> a, std::vector<double> b, const DiffOptions& o) {
  Compared c;
  c.a = std::move(a);
  c.b = std::move(b);
  c.med_a = c.a.empty() ? 0 : median(c.a);
  c.med_b = c.b.empty() ? 0 : median(c.b);
  const bool none_a = all_zero(c.a), none_b = all_zero(c.b);
  if (none_a && none_b) {
    c.verdict = "unchanged";
    return c;
  }
  c.ratio = c.med_a != 0 ? c.med_b / c.med_a : kNaN;
  c.ci_low = c.ci_high = c.p = kNaN;
  if (none_a || none_b) {
    c.verdict = none_a ? "only in B" : "only in A";
    return c;
  }
  if (c.a.size() < 2 || c.b.size() < 2) {
    c.verdict = "n/a";
    return c;
  }
  c.p = mann_whitney_u_p(c.a, c.b);
  if (std::isnan(c.ratio)) {
    c.verdict = "too noisy";  // a median of 0 on A although some traces of A have it
    return c;
  }
  const RatioCI ci = bootstrap_ratio_ci(c.a, c.b, o.resamples);
  c.ci_low = ci.low;
  c.ci_high = ci.high;
  c.verdict = compare_verdict(c.p, c.ratio, c.ci_low, c.ci_high, o.alpha, o.threshold);
  return c;
}

Diff diff_traces(const std::vector<TraceModel>& a, const std::vector<TraceModel>& b, const DiffOptions& o) {
  if (a.empty() || b.empty()) throw TraceError("trace-diff needs at least one trace on each side");
  Diff d;
  d.options = o;
  for (const auto& m : a) d.files_a.push_back(m.path);
  for (const auto& m : b) d.files_b.push_back(m.path);
  d.traces_needed = traces_for_alpha(o.alpha);

  std::set<std::string> phases;
  for (const auto* side : {&a, &b})
    for (const auto& m : *side)
      for (const auto& [name, p] : m.phases)
        if (in_scope(name, o.phase)) phases.insert(name);
  if (phases.empty()) {
    std::set<std::string> all;
    for (const auto& m : a)
      for (const auto& [name, p] : m.phases) all.insert(name);
    std::string list;
    for (const auto& n : all) list += (list.empty() ? "" : ", ") + n;
    throw TraceError(fmt::format("--phase {}: no such phase in the traces (they have: {})", o.phase, list));
  }

  DiffOptions launch_o = o;
  launch_o.resamples = kLaunchResamples;
  for (const auto& phase : phases) {
    PhaseDiff pd;
    pd.phase = phase;
    auto side = [&](const std::vector<TraceModel>& s, auto f) { return per_trace(s, phase, f); };
    auto both = [&](auto f) { return compare_values(side(a, f), side(b, f), o); };
    pd.busy = both([](const PhaseTotals& p) { return p.busy_ns; });
    pd.exposed = both([](const PhaseTotals& p) { return p.exposed_ns; });
    pd.kernel = both([](const PhaseTotals& p) { return p.kernel_ns; });
    pd.copy = both([](const PhaseTotals& p) { return p.copy_ns; });
    pd.memset = both([](const PhaseTotals& p) { return p.memset_ns; });
    pd.idle = both([](const PhaseTotals& p) { return p.idle_ns; });
    pd.launches = both([](const PhaseTotals& p) { return static_cast<double>(p.launches); });
    pd.occurrences_a = median(side(a, [](const PhaseTotals& p) { return static_cast<double>(p.occurrences); }));
    pd.occurrences_b = median(side(b, [](const PhaseTotals& p) { return static_cast<double>(p.occurrences); }));

    std::set<std::string> names;
    std::set<std::pair<std::string, uint32_t>> kth;
    for (const auto* s : {&a, &b})
      for (const auto& m : *s)
        if (const PhaseTotals* p = find_phase(m, phase)) {
          for (const auto& [n, it] : p->items) names.insert(n);
          for (const auto& [key, v] : p->kth) kth.insert(key);
        }
    for (const auto& n : names) {
      ItemDiff it;
      it.name = n;
      for (const auto* s : {&a, &b})
        for (const auto& m : *s)
          if (const ItemTotals* t = find_item(find_phase(m, phase), n)) it.kind = t->kind;
      auto item = [&](bool zero, auto f) {
        return compare_values(per_trace_item(a, phase, n, zero, f), per_trace_item(b, phase, n, zero, f), o);
      };
      it.total = item(true, [](const ItemTotals& t) { return t.total_ns; });
      it.exposed = item(true, [](const ItemTotals& t) { return t.exposed_ns; });
      it.launch_median = item(false, [](const ItemTotals& t) { return median(t.durations); });
      it.launches_a = median(per_trace_item(a, phase, n, true, [](const ItemTotals& t) { return double(t.launches); }));
      it.launches_b = median(per_trace_item(b, phase, n, true, [](const ItemTotals& t) { return double(t.launches); }));
      const bool only_a = it.total.verdict == "only in A";
      it.where = only_a ? exposure_word(it.exposed.med_a, it.total.med_a) : exposure_word(it.exposed.med_b, it.total.med_b);
      it.share = pd.busy.change() != 0 ? it.exposed.change() / pd.busy.change() : 0;
      shape_of(only_a ? a : b, phase, it);
      pd.items.push_back(std::move(it));
    }
    std::stable_sort(pd.items.begin(), pd.items.end(), [](const ItemDiff& x, const ItemDiff& y) {
      const double ex = std::fabs(x.exposed.change()), ey = std::fabs(y.exposed.change());
      if (ex != ey) return ex > ey;
      return std::fabs(x.total.change()) > std::fabs(y.total.change());
    });

    for (const auto& key : kth) {
      auto values = [&](const std::vector<TraceModel>& s) {
        std::vector<double> out;
        for (const auto& m : s)
          if (const PhaseTotals* p = find_phase(m, phase)) {
            auto it = p->kth.find(key);
            if (it != p->kth.end()) out.push_back(median(it->second));
          }
        return out;
      };
      LaunchDiff ld;
      ld.name = key.first;
      ld.k = key.second;
      ld.duration = compare_values(values(a), values(b), launch_o);
      pd.launches_by_k.push_back(std::move(ld));
    }
    d.phases.push_back(std::move(pd));
  }
  if (a.size() < 2 || b.size() < 2)
    d.notes.push_back(fmt::format(
        "Statistics need at least 2 traces per side ({} per side for the U test to reach alpha {}); with {} A and {} B "
        "the differences are shown without verdicts.",
        d.traces_needed, o.alpha, a.size(), b.size()));
  else if (a.size() < d.traces_needed || b.size() < d.traces_needed)
    d.notes.push_back(fmt::format(
        "With {} A and {} B traces the U test cannot reach alpha {}: a change reads at best \"unchanged\" or \"too "
        "noisy\"; give {} per side.",
        a.size(), b.size(), o.alpha, d.traces_needed));
  return d;
}

}  // namespace cuzk::trace
