// `compare`, the rows of load runs: tails and throughput (load_rows.hpp, docs/compare.md).
#include "harness/analysis/load_rows.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/stats.hpp"

namespace cuzk {

std::string quantile_metric(double q) { return fmt::format("p{:g}", 100 * q); }

std::optional<double> metric_quantile(const std::string& metric) {
  if (metric.size() < 2 || metric[0] != 'p') return std::nullopt;
  size_t digits = 0, dots = 0;
  for (size_t i = 1; i < metric.size(); ++i) {
    const char ch = metric[i];
    if (ch == '.') {
      if (++dots > 1 || digits == 0 || i + 1 == metric.size()) return std::nullopt;
    } else if (ch >= '0' && ch <= '9') {
      ++digits;
    } else {
      return std::nullopt;
    }
  }
  const double pct = std::strtod(metric.c_str() + 1, nullptr);
  if (!(pct > 0 && pct < 100)) return std::nullopt;
  return pct / 100;
}

size_t jobs_for_upper_bound(double q, double level) {
  // quantile_ci's ends depend on the ranks only: ask it about 1..n, doubling n, then halving
  // the gap (an upper end, once there, stays as n grows).
  auto bounded = [&](size_t n) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i + 1);
    return !quantile_ci(std::move(v), q, level).hi_open;
  };
  constexpr size_t kMost = size_t(1) << 24;  // a p99.9999 and beyond: no load run comes near
  size_t hi = 1;
  while (!bounded(hi) && hi < kMost) hi *= 2;
  size_t lo = hi / 2;  // not bounded (or 0)
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (bounded(mid) ? hi : lo) = mid;
  }
  return hi;
}

namespace compare_detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

PhaseComparison load_row(const CaseData& c, const std::string& phase, const std::string& metric, const char* kind) {
  PhaseComparison r;
  r.suite = c.suite;
  r.case_name = c.case_name;
  r.params = c.params;
  r.phase = phase;
  r.metric = metric;
  r.kind = kind;
  return r;
}

// A row with no observation on a side: no ratio, "too noisy", and why. False when both have some.
bool empty_side(PhaseComparison& r, const std::vector<double>& a, const std::vector<double>& b, const char* why) {
  if (!a.empty() && !b.empty()) return false;
  r.ratio = r.ci_low = r.ci_high = kNaN;
  r.verdict = "too noisy";
  r.warnings.push_back(why);
  return true;
}

// The q-quantile of one phase over each side's measured jobs (load_rows.hpp).
PhaseComparison tail_row(const CaseData& ca, const CaseData& cb, const std::string& phase, double q,
                         const CompareOptions& o) {
  PhaseComparison r = load_row(ca, phase, quantile_metric(q), "tail");
  r.unit = "jobs";
  r.ci_method = "order statistics";
  r.exact_test = true;
  r.threshold = o.threshold_for(phase);
  if (auto p = o.tail_thresholds.find(phase); p != o.tail_thresholds.end())
    if (auto m = p->second.find(r.metric); m != p->second.end()) r.threshold = m->second;
  const std::vector<double>&a = ca.phases.at(phase).wall.values(), &b = cb.phases.at(phase).wall.values();
  r.observations_a = r.samples_a = a.size();
  r.observations_b = r.samples_b = b.size();
  if (empty_side(r, a, b, "no measured job on one side")) return r;
  describe_sides(r, a, b);
  r.median_a = quantile(a, q);  // the "median" columns of a tail row hold its quantile
  r.median_b = quantile(b, q);
  r.ratio = r.median_a != 0 ? r.median_b / r.median_a : (r.median_b == 0 ? 1.0 : kInf);
  r.p_value = mood_quantile_test(a, b, q).p_value;
  // Each side at 1 - (1 - level) / 2: both hold with at least `level` (a union bound).
  const double side_level = 1 - (1 - o.ci_level) / 2;
  const QuantileCI ia = quantile_ci(a, q, side_level), ib = quantile_ci(b, q, side_level);
  const bool no_low = ib.lo_open || ia.hi_open, no_high = ib.hi_open || ia.lo_open;
  r.ci_low = no_low || !(ia.hi > 0) ? 0.0 : ib.lo / ia.hi;
  r.ci_high = no_high || !(ia.lo > 0) ? kInf : ib.hi / ia.lo;
  r.delta = r.median_b - r.median_a;
  r.delta_low = no_low ? -kInf : ib.lo - ia.hi;
  r.delta_high = no_high ? kInf : ib.hi - ia.lo;
  if (ia.hi_open || ib.hi_open)
    r.warnings.push_back(fmt::format("{} and {} jobs leave the {} without an upper {:g}% bound: that takes at least {} "
                                     "jobs a side",
                                     a.size(), b.size(), r.metric, 100 * side_level, jobs_for_upper_bound(q, side_level)));
  if (a.size() < o.min_samples || b.size() < o.min_samples)
    r.warnings.push_back(fmt::format("too few jobs ({} A, {} B; at least {} per side wanted)", a.size(), b.size(),
                                     o.min_samples));
  r.verdict = a.size() < 2 || b.size() < 2
                  ? "too noisy"
                  : compare_verdict(r.p_value, r.ratio, r.ci_low, r.ci_high, o.alpha, r.threshold);
  return r;
}

// One side's throughput per round, with the rounds that have too few completions for one.
struct RoundRates {
  std::map<int64_t, double> per_round;  // completions per second
  size_t completions = 0;
  std::vector<int64_t> short_rounds;
};

RoundRates round_rates(const LoadCase& lc) {
  std::map<int64_t, std::vector<double>> by;
  for (const auto& d : lc.done) by[d.round].push_back(d.done_s);
  RoundRates out;
  for (const auto& [round, done] : by) {
    out.completions += done.size();
    const auto [first, last] = std::minmax_element(done.begin(), done.end());
    if (done.size() < 2 || !(*last > *first)) {
      out.short_rounds.push_back(round);
      continue;
    }
    out.per_round[round] = static_cast<double>(done.size() - 1) / (*last - *first);
  }
  return out;
}

std::vector<double> values_of(const std::map<int64_t, double>& m) {
  std::vector<double> v;
  for (const auto& [k, x] : m) v.push_back(x);
  return v;
}

std::string round_list(const std::vector<int64_t>& rounds) {
  std::string s;
  for (int64_t r : rounds) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

// The throughput row of one case (load_rows.hpp).
PhaseComparison throughput_row(const CaseData& ca, const LoadCase& la, const LoadCase& lb, const CompareOptions& o) {
  PhaseComparison r = load_row(ca, kThroughputPhase, kThroughputMetric, "throughput");
  r.unit = "rounds";
  r.log_ratios = true;
  r.threshold = o.throughput_threshold.value_or(o.noise_threshold);
  const RoundRates ra = round_rates(la), rb = round_rates(lb);
  for (const auto& [side, rr] : {std::pair{"A", &ra}, std::pair{"B", &rb}})
    if (!rr->short_rounds.empty())
      r.warnings.push_back(fmt::format("round(s) {} of {} have fewer than 2 distinct completion times: no throughput",
                                       round_list(rr->short_rounds), side));
  r.observations_a = ra.per_round.size();
  r.observations_b = rb.per_round.size();
  r.samples_a = ra.completions;
  r.samples_b = rb.completions;
  const std::vector<double> va = values_of(ra.per_round), vb = values_of(rb.per_round);
  if (empty_side(r, va, vb, "no round with a throughput on one side")) return r;
  describe_sides(r, va, vb);
  r.delta = r.median_b - r.median_a;
  r.delta_low = r.delta_high = kNaN;
  // load's A/B runs one schedule per round on both sides: same round numbers, paired.
  const bool paired = va.size() == vb.size() &&
                      std::equal(ra.per_round.begin(), ra.per_round.end(), rb.per_round.begin(),
                                 [](const auto& x, const auto& y) { return x.first == y.first; });
  TTest t;
  if (paired) {
    std::vector<double> d;
    for (size_t i = 0; i < va.size(); ++i) d.push_back(std::log(va[i] / vb[i]));
    t = paired_t_test(d, o.ci_level);
    r.design = "paired";
    r.ci_method = "t";
    r.hodges_lehmann = std::exp(hodges_lehmann(d));
    r.sd_log_ratio = t_interval(d, o.ci_level).sd;
  } else {
    std::vector<double> la_log, lb_log;
    for (double x : va) la_log.push_back(std::log(x));
    for (double x : vb) lb_log.push_back(std::log(x));
    t = welch_t_test(la_log, lb_log, o.ci_level);
    r.design = "samples";
    r.ci_method = "welch";
  }
  r.ratio = std::exp(t.estimate);
  r.ci_low = r.t_low = std::exp(t.low);
  r.ci_high = r.t_high = std::exp(t.high);
  r.p_value = t.p_value;
  if (va.size() < 2 || vb.size() < 2) {
    r.warnings.push_back(fmt::format("throughput needs at least 2 rounds per side (load --rounds); A has {}, B {}",
                                     va.size(), vb.size()));
    r.verdict = "too noisy";
    return r;
  }
  r.verdict = compare_verdict(r.p_value, r.ratio, r.ci_low, r.ci_high, o.alpha, r.threshold);
  return r;
}

}  // namespace

std::vector<PhaseComparison> load_rows(const SideData& a, const SideData& b, const std::string& key,
                                       const CompareOptions& o, std::vector<std::string>& warnings) {
  std::vector<PhaseComparison> out;
  const CaseData &ca = a.cases.at(key), &cb = b.cases.at(key);
  std::set<std::string> phases_done, metrics_done;
  for (const auto& phase : o.tail_phases) {
    if (!phases_done.insert(phase).second || !ca.phases.count(phase) || !cb.phases.count(phase)) continue;
    metrics_done.clear();
    for (double q : o.tail_quantiles)
      if (metrics_done.insert(quantile_metric(q)).second) out.push_back(tail_row(ca, cb, phase, q, o));
  }
  auto ia = a.load.find(key), ib = b.load.find(key);
  const std::string title = ca.suite + "/" + ca.case_name;
  if (ia == a.load.end() || ib == b.load.end()) return out;  // no load sample at all: not a load case
  std::string missing;
  for (const auto& [side, s, lc] : {std::tuple{"A", &a, &ia->second}, std::tuple{"B", &b, &ib->second}})
    if (lc->without_done > 0)
      missing += fmt::format("{}{} of {} samples of {} ({}) have no load.done_s", missing.empty() ? "" : "; ",
                             lc->without_done, lc->samples, side, s->path);
  if (!missing.empty()) {
    warnings.push_back(fmt::format("{}: no throughput row: {} (the completion times, which cuzk-bench load records; "
                                   "record the runs again to compare throughput)",
                                   title, missing));
    return out;
  }
  out.push_back(throughput_row(ca, ia->second, ib->second, o));
  return out;
}

}  // namespace compare_detail
}  // namespace cuzk
