// `compare`: phase-by-phase comparison of two results files (docs/compare.md).
#include "harness/analysis/compare.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include "harness/measure/clock.hpp"
#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/power.hpp"
#include "harness/analysis/stats.hpp"
#include "harness/measure/inject.hpp"

namespace cuzk {

void describe_counter_delta(CounterDelta& d) {
  auto value = [&](double v) {  // in its unit: nanoseconds as a time, everything else as a count
    const bool ns = d.name.size() > 3 && d.name.compare(d.name.size() - 3, 3, "_ns") == 0;
    return ns ? fmt_ns(v) : fmt::format("{:.0f}", v);
  };
  if (*d.median_a == 0) {
    d.note = *d.median_b == 0 ? "=" : "0 -> " + value(*d.median_b);
    return;
  }
  d.ratio = *d.median_b / *d.median_a;
  if (d.name == "os::cpu_per_wall")  // a level, not a count: both values say more than their ratio
    d.note = fmt::format("{:.2f} -> {:.2f}", *d.median_a, *d.median_b);
  else if (*d.ratio >= 2.0 || *d.ratio <= 0.5)
    d.note = fmt::format("x{:.2g}", *d.ratio);
  else
    d.note = output::change_pct(*d.ratio);
}

namespace {

using json = nlohmann::json;
using namespace compare_detail;


CounterDelta counter_delta(const std::string& name, const PhaseData* a, const PhaseData* b) {
  CounterDelta d;
  d.name = name;
  auto side = [&](const PhaseData* p, std::optional<double>& med, std::string& why) {
    if (!p) {
      why = "not recorded";
      return;
    }
    auto it = p->counters.find(name);
    if (it == p->counters.end()) {
      why = "not recorded";
      return;
    }
    if (it->second.empty()) {
      auto r = p->counter_null_reason.find(name);
      why = r == p->counter_null_reason.end() ? "null" : r->second;
      return;
    }
    med = median(it->second.values());
  };
  std::string wa, wb;
  side(a, d.median_a, wa);
  side(b, d.median_b, wb);
  if (!d.median_a || !d.median_b) {
    std::string why;
    if (!d.median_a && !d.median_b && wa == wb)
      why = wa;
    else {
      why = !d.median_a ? "A: " + wa : "";
      if (!d.median_b) why += std::string(why.empty() ? "" : "; ") + "B: " + wb;
    }
    d.note = "n/a (" + why + ")";
    return d;
  }
  describe_counter_delta(d);
  return d;
}

// Smallest two-sided p-value the exact test can produce with these sizes: 2 / C(m+n, m).
double min_exact_p(size_t m, size_t n) {
  double c = 1;
  for (size_t i = 1; i <= m; ++i) c = c * static_cast<double>(n + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / c);
}

void fill_stats(PhaseComparison& r, const std::vector<double>& a, const std::vector<double>& b,
                const CompareOptions& o) {
  r.observations_a = a.size();
  r.observations_b = b.size();
  r.threshold = o.threshold_for(r.phase);
  if (a.empty() || b.empty()) {
    r.verdict = "too noisy";
    r.warnings.push_back("no samples on one side");
    return;
  }
  describe_sides(r, a, b);
  r.ratio = r.median_a != 0 ? r.median_b / r.median_a : (r.median_b == 0 ? 1.0 : INFINITY);
  auto ci = bootstrap_ratio_ci(a, b, o.bootstrap_resamples, o.bootstrap_seed, o.ci_level);
  r.ci_low = ci.low;
  r.ci_high = ci.high;
  r.delta = r.median_b - r.median_a;
  auto dci = bootstrap_diff_ci(a, b, o.bootstrap_resamples, o.bootstrap_seed, o.ci_level);
  r.delta_low = dci.low;
  r.delta_high = dci.high;
  auto mw = mann_whitney_u(a, b);
  r.p_value = mw.p_value;
  r.exact_test = mw.exact;
  if (r.observations_a < o.min_samples || r.observations_b < o.min_samples)
    r.warnings.push_back(fmt::format("too few {} ({} A, {} B; at least {} per side wanted)", r.unit, r.observations_a,
                                     r.observations_b, o.min_samples));
  if (min_exact_p(r.observations_a, r.observations_b) >= o.alpha)
    r.warnings.push_back(fmt::format("with {} and {} {} no p-value can fall below alpha {}", r.observations_a,
                                     r.observations_b, r.unit, o.alpha));
  if (r.observations_a < 2 || r.observations_b < 2 || std::isnan(r.ci_low))
    r.verdict = "too noisy";
  else
    r.verdict = compare_verdict(r.p_value, r.ratio, r.ci_low, r.ci_high, o.alpha, r.threshold);
}

// A phase only one side has: the other side's observations are zeros (it cost nothing there),
// one per sample of the case, or per process under the block design.
std::vector<double> absent_observations(const CaseData& c, bool blocks) {
  return std::vector<double>(blocks ? c.per_process.size() : c.samples, 0.0);
}

// One side's values of a row's metric; nullptr on a side without the phase.
using Series = const MetricValues*;

// Whether GPU kernel time (without gaps) may judge the phase: it is in every sample (a subset
// would not do) and kernels are most of the phase's GPU work (kernels_dominate).
bool kernel_judges(const PhaseData& d) {
  return d.gpu_kernel_missing == 0 && !d.gpu_kernel.empty() && d.gpu_kernel.size() == d.wall.size() &&
         kernels_dominate(std::accumulate(d.gpu_kernel.values().begin(), d.gpu_kernel.values().end(), 0.0),
                          d.gpu_copy_total);
}

// Whether counter `n` has a value in every sample of the phase, each with its process and round:
// only then can it judge the phase (a subset of the samples would not do, nor an untimed pass).
bool counter_in_every_sample(const PhaseData& d, const std::string& n) {
  auto it = d.counters.find(n);
  return it != d.counters.end() && !d.counter_null.count(n) && !d.untimed_counters.count(n) &&
         it->second.size() == d.wall.size();
}

// The values of a row's metric on one side.
Series row_series(const CaseData& cd, const PhaseComparison& r) {
  auto it = cd.phases.find(r.phase);
  if (it == cd.phases.end()) return nullptr;
  const PhaseData& d = it->second;
  if (r.metric == "gpu_ns") return &d.gpu;
  if (r.metric == "gpu_kernel_ns") return &d.gpu_kernel;
  if (r.metric == "wall_ns") return &d.wall;
  return &d.counters.at(r.metric);
}

// Paired design: each round's median on each side, over the rounds both sides have (0 on a side
// without the phase, which cost nothing there); a round in which a present side lacks the phase
// is left out.
struct PairedValues {
  std::vector<double> a, b;
};
PairedValues paired_values(Series sa, Series sb, const std::vector<int64_t>& rounds) {
  const std::map<int64_t, double> ma = sa ? round_medians(*sa) : std::map<int64_t, double>{};
  const std::map<int64_t, double> mb = sb ? round_medians(*sb) : std::map<int64_t, double>{};
  PairedValues p;
  for (int64_t r : rounds) {
    auto ia = ma.find(r), ib = mb.find(r);
    if ((sa && ia == ma.end()) || (sb && ib == mb.end())) continue;
    p.a.push_back(sa ? ia->second : 0.0);
    p.b.push_back(sb ? ib->second : 0.0);
  }
  return p;
}

// The per-round observations the paired statistics run on: log ratios ln(B_r / A_r) when every
// median is positive and both sides have the phase, else differences B_r - A_r.
bool paired_logs(const PairedValues& p, const PhaseComparison& r) {
  if (r.only_in.has_value() || p.a.empty()) return false;
  for (size_t i = 0; i < p.a.size(); ++i)
    if (!(p.a[i] > 0) || !(p.b[i] > 0)) return false;
  return true;
}
std::vector<double> paired_d(const PairedValues& p, bool logs) {
  std::vector<double> d(p.a.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = logs ? std::log(p.b[i] / p.a[i]) : p.b[i] - p.a[i];
  return d;
}

// The CI of the mean of d at `level`: the t interval over rounds, or the round bootstrap
// (--paired-ci bootstrap).
std::pair<double, double> paired_interval(const std::vector<double>& d, double level, const CompareOptions& o) {
  if (o.analysis.paired_ci == PairedCi::kBootstrap) {
    const DiffCI b = bootstrap_mean_ci(d, o.bootstrap_resamples, o.bootstrap_seed, level);
    return {b.low, b.high};
  }
  const MeanCI t = t_interval(d, level);
  return {t.low, t.high};
}

// A ratio interval from an interval of the mean difference, relative to A's mean (rows analysed
// as differences: a zero median on some round).
std::pair<double, double> ratio_from_difference(std::pair<double, double> iv, const PairedValues& p) {
  const double ma = mean(p.a);
  if (ma > 0) return {1 + iv.first / ma, 1 + iv.second / ma};
  if (iv.first == 0 && iv.second == 0) return {1, 1};  // zero on both sides in every round
  return {NAN, NAN};
}

// The paired design's statistics of one row (docs/compare.md, "Designs").
void fill_paired(PhaseComparison& r, const PairedValues& p, const CompareOptions& o) {
  r.unit = "rounds";
  r.ci_method = choice_name(o.analysis.paired_ci);
  r.observations_a = r.observations_b = p.a.size();
  r.threshold = o.threshold_for(r.phase);
  if (p.a.empty()) {
    r.verdict = "too noisy";
    r.warnings.push_back("no round in which both sides ran the phase");
    return;
  }
  describe_sides(r, p.a, p.b);
  const std::vector<double> diff = paired_d(p, false);
  r.delta = mean(diff);
  std::tie(r.delta_low, r.delta_high) = paired_interval(diff, o.ci_level, o);
  r.log_ratios = paired_logs(p, r);
  const std::vector<double> d = r.log_ratios ? paired_d(p, true) : diff;
  const WilcoxonResult w = wilcoxon_signed_rank(d);
  r.p_value = w.p_value;
  r.exact_test = w.exact;
  if (r.log_ratios) {
    const MeanCI t = t_interval(d, o.ci_level);
    const DiffCI b = bootstrap_mean_ci(d, o.bootstrap_resamples, o.bootstrap_seed, o.ci_level);
    r.ratio = std::exp(t.mean);
    r.t_low = std::exp(t.low);
    r.t_high = std::exp(t.high);
    r.boot_low = std::exp(b.low);
    r.boot_high = std::exp(b.high);
    r.hodges_lehmann = std::exp(hodges_lehmann(d));
    r.sd_log_ratio = t.sd;
    const bool boot = o.analysis.paired_ci == PairedCi::kBootstrap;
    r.ci_low = boot ? r.boot_low : r.t_low;
    r.ci_high = boot ? r.boot_high : r.t_high;
  } else {
    const double ma = mean(p.a), mb = mean(p.b);
    r.ratio = ma != 0 ? mb / ma : (mb == 0 ? 1.0 : INFINITY);
    std::tie(r.ci_low, r.ci_high) = ratio_from_difference({r.delta_low, r.delta_high}, p);
  }
  if (r.observations_a < o.min_samples)
    r.warnings.push_back(fmt::format("too few rounds ({} on both sides; at least {} wanted)", r.observations_a, o.min_samples));
  if (power::signed_rank_smallest_p(static_cast<int>(std::min<size_t>(r.observations_a, 60))) >= o.alpha)
    r.warnings.push_back(fmt::format("with {} rounds no p-value can fall below alpha {}", r.observations_a, o.alpha));
  if (r.observations_a < 2 || std::isnan(r.ci_low))
    r.verdict = "too noisy";
  else
    r.verdict = compare_verdict(r.p_value, r.ratio, r.ci_low, r.ci_high, o.alpha, r.threshold);
}

// The widened CIs of the case's primary rows that report a change (PhaseComparison::family).
void family_intervals(std::vector<PhaseComparison>& rows, size_t first, const CaseData& ca, const CaseData& cb,
                      const CaseDesign& design, const CompareOptions& o) {
  const bool blocks = design.design == Design::kBlocks;
  size_t family = 0;
  for (size_t i = first; i < rows.size(); ++i) family += rows[i].primary;
  const double level = 1.0 - (1.0 - o.ci_level) / static_cast<double>(std::max<size_t>(1, family));
  for (size_t i = first; i < rows.size(); ++i) {
    PhaseComparison& r = rows[i];
    r.family = family;
    if (!r.primary || !(r.verdict == "faster" || r.verdict == "slower" || r.only_in.has_value())) continue;
    const auto sa = row_series(ca, r), sb = row_series(cb, r);
    if (design.design == Design::kPaired) {
      const PairedValues p = paired_values(sa, sb, design.rounds);
      const auto iv = paired_interval(paired_d(p, r.log_ratios), level, o);
      if (r.log_ratios)
        std::tie(r.family_low, r.family_high) = std::pair{std::exp(iv.first), std::exp(iv.second)};
      else if (!r.only_in)
        std::tie(r.family_low, r.family_high) = ratio_from_difference(iv, p);
      else
        std::tie(r.family_low, r.family_high) = iv;
      continue;
    }
    auto obs = [&](Series s, const CaseData& cd) { return s ? observations(*s, blocks) : absent_observations(cd, blocks); };
    const std::vector<double> a = obs(sa, ca), b = obs(sb, cb);
    if (!r.only_in) {
      const RatioCI ci = bootstrap_ratio_ci(a, b, o.bootstrap_resamples, o.bootstrap_seed, level);
      r.family_low = ci.low;
      r.family_high = ci.high;
    } else {
      const DiffCI ci = bootstrap_diff_ci(a, b, o.bootstrap_resamples, o.bootstrap_seed, level);
      r.family_low = ci.low;
      r.family_high = ci.high;
    }
  }
}

// "A (baseline)" from a results header's provenance.
std::string side_label(const char* side, const json& provenance) {
  const json& p = provenance.is_object() ? provenance.value("preset", json(nullptr)) : json(nullptr);
  return p.is_string() && !p.get<std::string>().empty() ? fmt::format("{} ({})", side, p.get<std::string>()) : side;
}

// An injected slowdown (harness/measure/inject.hpp) is planted, not measured: compared with a
// plain file it would read as a real change. That is refused unless allow_injected; whenever a
// side is injected, a warning says so, and every output (table, markdown, JSON, gate) prints it.
void check_injected(const SideData& a, const SideData& b, const CompareOptions& o, std::vector<std::string>& warnings) {
  const bool in_a = a.injected.is_object(), in_b = b.injected.is_object();
  if (!in_a && !in_b) return;
  auto spec = [](const SideData& s) { return fmt::format("{}=\"{}\"", inject::kEnvVar, s.injected.value("spec", "")); };
  if (in_a && in_b) {
    warnings.push_back(spec(a) == spec(b)
                           ? fmt::format("A ({}) and B ({}) were both written under {}: injected slowdowns, not real measurements",
                                         a.path, b.path, spec(a))
                           : fmt::format("A ({}) was written under {} and B ({}) under {}: injected slowdowns, not real measurements",
                                         a.path, spec(a), b.path, spec(b)));
    return;
  }
  const SideData& inj = in_a ? a : b;
  const SideData& plain = in_a ? b : a;
  const std::string msg = fmt::format("{} ({}) was written under {} and {} ({}) was not", in_a ? "A" : "B", inj.path,
                                      spec(inj), in_a ? "B" : "A", plain.path);
  if (!o.allow_injected)
    throw CompareError(msg + ": an injected slowdown is not a real change; pass --allow-injected to compare them anyway");
  warnings.push_back(msg + ": its changes include the injected slowdown, which is not a real one");
}

}  // namespace

namespace compare_detail {

// The design of a case: which unit of observation its rows use (docs/compare.md,
// "Designs"), and the statistics of the paired design.
//
// ab, matrix, calibrate and bisect run A and B interleaved, one process per side and round, and
// every sample says its round ("round_id"). Pairing the sides round by round cancels what the
// two processes of a round share (a machine whose speed drifts over minutes); comparing them as
// two groups leaves that drift in the variance. So a case whose samples all carry round ids on
// both sides, with at least two rounds in common, is paired by default; otherwise processes are
// the blocks where repetitions share a process, else every sample counts.
namespace {

// Whether a case's samples are analysed with processes as the units (block design): every
// sample names its process, each side has at least two processes, and some process ran more
// than one repetition (otherwise a process median is the sample itself).
bool process_blocks_apply(const CaseData& a, const CaseData& b) {
  bool repeated = false;
  for (const CaseData* c : {&a, &b}) {
    if (c->per_process.count("") || c->per_process.size() < 2) return false;
    for (auto& [id, n] : c->per_process) repeated = repeated || n > 1;
  }
  return repeated;
}

std::string design_case_title(const CaseData& c) { return c.suite + "/" + c.case_name; }

}  // namespace

const char* design_name(Design d) {
  switch (d) {
    case Design::kPaired:
      return "paired";
    case Design::kBlocks:
      return "blocks";
    case Design::kSamples:
      break;
  }
  return "samples";
}

CaseDesign choose_design(const CaseData& a, const CaseData& b, const SideData& sa, const SideData& sb, const CompareOptions& o) {
  const DesignChoice want = o.analysis.design;
  CaseDesign d;
  if (want == DesignChoice::kSamples) {
    d.reason = "every sample (--design samples)";
    return d;
  }
  const bool rounds_a = !a.per_round.empty() && !a.per_round.count(kNoRound);
  const bool rounds_b = !b.per_round.empty() && !b.per_round.count(kNoRound);
  std::vector<int64_t> shared;
  if (rounds_a && rounds_b)
    for (const auto& [r, n] : a.per_round)
      if (b.per_round.count(r)) shared.push_back(r);
  std::string why_not;  // why the case is not paired
  if (!rounds_a || !rounds_b) {
    const bool first = !rounds_a;
    const SideData& s = first ? sa : sb;
    const CaseData& without = first ? a : b;
    auto none = without.per_round.find(kNoRound);
    const bool all = none != without.per_round.end() && none->second == without.samples;
    why_not = fmt::format("{} ({}) case {} has no round_id in {} samples", first ? "A" : "B", s.path, design_case_title(a),
                          all ? "its" : "some of its");
  } else if (shared.size() < 2) {
    why_not = fmt::format("case {} has {} round(s) that both A and B measured", design_case_title(a), shared.size());
  }
  // Auto pairs only where the signed-rank test can reach alpha: with n rounds its smallest
  // two-sided p is 2/2^n (0.0625 at 5 rounds), and a design that cannot find a change is no choice.
  size_t rounds_needed = 0;
  const int shared_rounds = static_cast<int>(std::min<size_t>(shared.size(), 60));
  if (why_not.empty() && want == DesignChoice::kAuto && power::signed_rank_smallest_p(shared_rounds) >= o.alpha)
    rounds_needed = static_cast<size_t>(power::min_rounds_signed_rank(o.alpha));
  if (want == DesignChoice::kPaired || want == DesignChoice::kAuto) {
    if (why_not.empty() && rounds_needed == 0) {
      d.design = Design::kPaired;
      d.rounds = shared;
      const size_t only = a.per_round.size() + b.per_round.size() - 2 * shared.size();
      d.reason = fmt::format("paired by round ({} rounds on both sides{}; per-round log ratios of the per-process medians)",
                             shared.size(), only ? fmt::format(", {} round(s) with one side only left out", only) : "");
      return d;
    }
    if (want == DesignChoice::kPaired)
      throw CompareError(fmt::format("--design paired: {}; pairing needs results written by ab, matrix, calibrate or "
                                     "bisect, with at least 2 rounds on both sides",
                                     why_not));
  }
  const bool no_rounds = !rounds_a || !rounds_b;
  const std::string unpaired =
      no_rounds ? "no round ids: the files were not written by an interleaved run"
      : rounds_needed
          ? fmt::format("only {} rounds on both sides: the signed-rank test's smallest p, {:.4g}, cannot fall below "
                        "alpha {}; pairing needs {}",
                        shared.size(), power::signed_rank_smallest_p(shared_rounds), o.alpha, rounds_needed)
          : fmt::format("only {} round(s) on both sides: pairing needs 2", shared.size());
  if (process_blocks_apply(a, b)) {
    d.design = Design::kBlocks;
    d.reason = want == DesignChoice::kBlocks ? "processes as blocks (--design blocks)" : "processes as blocks (" + unpaired + ")";
    return d;
  }
  const size_t pa = a.per_process.size(), pb = b.per_process.size();
  const std::string why_samples =
      a.per_process.count("") || b.per_process.count("") ? "samples without process ids"
      : pa < 2 || pb < 2
          ? (pa == pb ? fmt::format("{} process a side", pa) : fmt::format("{} and {} processes", pa, pb)) +
                ": processes as blocks need 2 or more a side"
          : "each process ran one repetition";
  d.reason = want == DesignChoice::kBlocks ? "every sample (--design blocks, but " + why_samples + ")"
                              : "every sample (" + unpaired + "; " + why_samples + ")";
  return d;
}

void describe_sides(PhaseComparison& r, const std::vector<double>& a, const std::vector<double>& b) {
  r.median_a = median(a);
  r.median_b = median(b);
  r.mad_a = mad(a);
  r.mad_b = mad(b);
  r.iqr_a = iqr(a);
  r.iqr_b = iqr(b);
}

std::map<int64_t, double> round_medians(const MetricValues& v) {
  std::map<int64_t, std::vector<double>> by;
  for (size_t i = 0; i < v.size(); ++i) by[v.rounds()[i]].push_back(v.values()[i]);
  std::map<int64_t, double> out;
  for (auto& [r, vals] : by) out[r] = median(vals);
  return out;
}


std::vector<double> observations(const MetricValues& v, bool blocks) {
  if (!blocks) return v.values();
  std::map<std::string, std::vector<double>> by;
  for (size_t i = 0; i < v.size(); ++i) by[v.processes()[i]].push_back(v.values()[i]);
  std::vector<double> out;
  for (auto& [id, vals] : by) out.push_back(median(vals));
  return out;
}

}  // namespace compare_detail

std::string compare_verdict(double p, double ratio, double lo, double hi, double alpha, double t) {
  bool significant = p < alpha;
  bool beyond = std::fabs(ratio - 1.0) > t;
  if (significant && beyond) return ratio > 1.0 ? "slower" : "faster";
  if (significant) return "unchanged";
  // Not significant: "unchanged" only if the CI rules out a change beyond the threshold.
  if (lo < 1.0 - t || hi > 1.0 + t) return "too noisy";
  return "unchanged";
}

const char* choice_name(MetricChoice m) { return m == MetricChoice::kWall ? "wall" : "auto"; }

const char* choice_name(DesignChoice d) {
  switch (d) {
    case DesignChoice::kPaired: return "paired";
    case DesignChoice::kBlocks: return "blocks";
    case DesignChoice::kSamples: return "samples";
    case DesignChoice::kAuto: break;
  }
  return "auto";
}

const char* choice_name(PairedCi c) { return c == PairedCi::kBootstrap ? "bootstrap" : "t"; }

const char* side_letter(std::optional<Side> s) {
  if (!s) return "";
  return *s == Side::kA ? "a" : "b";
}

std::string only_in_text(Side s) { return s == Side::kA ? "only in A" : "only in B"; }

bool PhaseComparison::change_stands() const {
  if (std::isnan(family_low) || std::isnan(family_high)) return false;
  if (only_in) return only_in == Side::kB ? family_low > 0 : family_high < 0;
  return family_low > 1 || family_high < 1;
}

bool kernels_dominate(double kernel_total_ns, double copy_total_ns) { return kernel_total_ns >= copy_total_ns; }

std::string judged_time_metric(const std::vector<const nlohmann::json*>& records, MetricChoice choice) {
  if (choice == MetricChoice::kWall) return "wall_ns";
  bool kernel = !records.empty();
  double kernel_total = 0, copy_total = 0;
  auto number = [](const nlohmann::json& r, const char* f) { return r.contains(f) && r[f].is_number(); };
  for (const nlohmann::json* rec : records) {
    if (!rec || !number(*rec, "gpu_ns")) return "wall_ns";
    kernel = kernel && number(*rec, "gpu_kernel_ns");
    if (kernel) kernel_total += (*rec)["gpu_kernel_ns"].get<double>();
    if (number(*rec, "gpu_copy_ns")) copy_total += (*rec)["gpu_copy_ns"].get<double>();
  }
  return kernel && kernels_dominate(kernel_total, copy_total) ? "gpu_kernel_ns" : "gpu_ns";
}

const PhaseComparison* primary_row(const Comparison& c, const std::string& phase) {
  for (const auto& r : c.rows)
    if (r.phase == phase && r.primary && r.kind == "phase") return &r;
  return nullptr;
}

const PhaseComparison* find_row(const Comparison& c, const std::string& phase, const std::string& metric) {
  for (const auto& r : c.rows)
    if (r.phase == phase && r.metric == metric) return &r;
  return nullptr;
}

Comparison compare_files(const std::string& pa, const std::string& pb, const CompareOptions& o) {
  SideData a = load_side(pa, o), b = load_side(pb, o);
  if (a.format != b.format)
    throw CompareError(fmt::format("cannot compare a {} file ({}) with a {} file ({})", a.format, pa,
                                   b.format, pb));
  Comparison c;
  c.path_a = pa;
  c.path_b = pb;
  c.format_a = a.format;
  c.format_b = b.format;
  c.provenance_a = a.provenance;
  c.provenance_b = b.provenance;
  c.machine_a = a.machine;
  c.machine_b = b.machine;
  c.metric_choice = o.analysis.metric_choice;
  c.design = o.analysis.design;
  c.label_a = side_label("A", a.provenance);
  c.label_b = side_label("B", b.provenance);
  c.env_a = a.env;
  c.env_b = b.env;
  c.injected_a = a.injected;
  c.injected_b = b.injected;
  check_injected(a, b, o, c.warnings);
  if (a.identity != b.identity) {
    std::string msg = fmt::format("results come from different machines: A ({}) ran on [{}], B ({}) ran on [{}]",
                                  pa, a.identity, pb, b.identity);
    if (!o.allow_machine_mismatch) throw CompareError(msg + " (use --allow-machine-mismatch to compare anyway)");
    c.warnings.push_back(msg);
  }
  std::set<std::string> keys;
  std::map<std::string, CaseDesign> designs;  // the design of each case both sides have
  for (auto& [k, v] : a.cases) keys.insert(k);
  for (auto& [k, v] : b.cases) keys.insert(k);
  for (const auto& k : keys) {
    auto ia = a.cases.find(k), ib = b.cases.find(k);
    if (ia == a.cases.end() || ib == b.cases.end()) {
      const CaseData& cd = ia == a.cases.end() ? ib->second : ia->second;
      std::string label = cd.suite + "/" + cd.case_name + " " + cd.params;
      (ia == a.cases.end() ? c.cases_only_b : c.cases_only_a).push_back(label);
      c.warnings.push_back(fmt::format("case {} is only in {}", label, ia == a.cases.end() ? "B" : "A"));
      continue;
    }
    const CaseData &ca = ia->second, &cb = ib->second;
    const CaseDesign design = choose_design(ca, cb, a, b, o);
    designs[k] = design;
    const bool blocks = design.design == Design::kBlocks;
    // The row's statistics under the case's design; a side without the phase is nullptr.
    auto fill = [&](PhaseComparison& r, Series sa, Series sb) {
      r.design = design_name(design.design);
      if (design.design == Design::kPaired) {
        fill_paired(r, paired_values(sa, sb, design.rounds), o);
        return;
      }
      r.unit = blocks ? "processes" : "samples";
      auto obs = [&](Series s, const CaseData& cd) { return s ? observations(*s, blocks) : absent_observations(cd, blocks); };
      fill_stats(r, obs(sa, ca), obs(sb, cb), o);
    };
    // A counter that every sample of both sides names as its primary metric (an instruction
    // count from a simulator) judges each phase that has it in every sample.
    const std::string primary_counter =
        !ca.primary_metric_mixed && !cb.primary_metric_mixed && ca.primary_metric == cb.primary_metric
            ? ca.primary_metric
            : std::string();
    if (primary_counter.empty() && (!ca.primary_metric.empty() || !cb.primary_metric.empty() ||
                                    ca.primary_metric_mixed || cb.primary_metric_mixed))
      c.warnings.push_back(fmt::format("case {}/{}: the samples do not all name one primary_metric (A: {}, B: {}): "
                                       "its phases are judged by time",
                                       ca.suite, ca.case_name, ca.primary_metric_mixed ? "mixed" : "\"" + ca.primary_metric + "\"",
                                       cb.primary_metric_mixed ? "mixed" : "\"" + cb.primary_metric + "\""));
    const size_t first_row = c.rows.size();
    std::set<std::string> phases;
    for (auto& [p, d] : ca.phases) phases.insert(p);
    for (auto& [p, d] : cb.phases) phases.insert(p);
    for (const auto& ph : phases) {
      auto pa_it = ca.phases.find(ph), pb_it = cb.phases.find(ph);
      PhaseComparison r;
      r.suite = ca.suite;
      r.case_name = ca.case_name;
      r.params = ca.params;
      r.phase = ph;
      r.metric = "wall_ns";
      r.threshold = o.threshold_for(ph);
      if (pa_it == ca.phases.end() || pb_it == cb.phases.end()) {
        // Compared as a cost of 0 on the side without it: the present side's median, and the
        // CI of the change; the ratio is undefined.
        const bool in_b = pa_it == ca.phases.end();
        const PhaseData& d = in_b ? pb_it->second : pa_it->second;
        const bool gpu = o.analysis.metric_choice == MetricChoice::kAuto && d.gpu_null == 0 && !d.gpu.empty();
        const bool kernel = gpu && kernel_judges(d);
        const Series present = kernel ? &d.gpu_kernel : gpu ? &d.gpu : &d.wall;
        const std::vector<double> zeros = absent_observations(in_b ? ca : cb, blocks);
        r.only_in = in_b ? Side::kB : Side::kA;
        r.metric = kernel ? "gpu_kernel_ns" : gpu ? "gpu_ns" : "wall_ns";
        (in_b ? r.samples_b : r.samples_a) = d.wall.size();
        (in_b ? r.samples_a : r.samples_b) = (in_b ? ca : cb).samples;
        fill(r, in_b ? nullptr : present, in_b ? present : nullptr);
        r.ratio = in_b ? INFINITY : 0.0;
        r.ci_low = r.ci_high = NAN;
        r.verdict = only_in_text(*r.only_in);
        // Its counters, like its time, are 0 where it did not run (a counter unread where it ran
        // stays n/a with its reason).
        PhaseData absent;
        for (const auto& [n, v] : d.counters)
          if (!v.empty())
            for (size_t i = 0; i < std::max<size_t>(1, zeros.size()); ++i) absent.counters[n].add(0.0, "", kNoRound);
        for (const auto& [n, v] : d.counters)
          r.counters.push_back(counter_delta(n, in_b ? &absent : &d, in_b ? &d : &absent));
        c.rows.push_back(r);
        continue;
      }
      const PhaseData &da = pa_it->second, &db = pb_it->second;
      r.samples_a = da.wall.size();
      r.samples_b = db.wall.size();
      PhaseComparison wall = r;
      fill(wall, &da.wall, &db.wall);
      if (da.gpu.size() + db.gpu.size() > 0 && (da.gpu_null > 0 || db.gpu_null > 0))
        wall.warnings.push_back(fmt::format("gpu_ns is null in {} A and {} B samples", da.gpu_null, db.gpu_null));
      std::set<std::string> cnames;
      for (auto& [n, v] : da.counters) cnames.insert(n);
      for (auto& [n, v] : db.counters) cnames.insert(n);
      for (const auto& n : cnames) wall.counters.push_back(counter_delta(n, &da, &db));
      std::vector<PhaseComparison> out;  // the phase's rows, the primary one first
      if (da.gpu.empty() || db.gpu.empty()) {
        if (!da.gpu.empty() || !db.gpu.empty())
          wall.warnings.push_back(fmt::format("GPU time only in {}: not compared", da.gpu.empty() ? "B" : "A"));
        out.push_back(std::move(wall));
      } else {
        PhaseComparison gpu = r;
        gpu.metric = "gpu_ns";
        gpu.samples_a = da.gpu.size();
        gpu.samples_b = db.gpu.size();
        fill(gpu, &da.gpu, &db.gpu);
        // GPU time is the verdict of a GPU phase only when every sample has it: a phase whose GPU
        // time is sometimes missing would be judged on a subset of its samples.
        const bool gpu_primary = o.analysis.metric_choice == MetricChoice::kAuto && da.gpu_null == 0 && db.gpu_null == 0;
        // Kernel time without gaps judges it, before CUDA-event time, where every sample of both
        // sides has it and kernels are most of its GPU work (kernel_judges): the events' span
        // includes the GPU's idle gaps, whose noise is the host's.
        const bool kernel_primary = gpu_primary && kernel_judges(da) && kernel_judges(db);
        if (kernel_primary) {
          PhaseComparison kernel = r;
          kernel.metric = "gpu_kernel_ns";
          kernel.samples_a = da.gpu_kernel.size();
          kernel.samples_b = db.gpu_kernel.size();
          fill(kernel, &da.gpu_kernel, &db.gpu_kernel);
          kernel.counters = std::move(wall.counters);
          wall.counters.clear();
          gpu.primary = false;
          wall.primary = false;
          out.push_back(std::move(kernel));
          out.push_back(std::move(gpu));
          out.push_back(std::move(wall));
        } else if (gpu_primary) {
          gpu.counters = std::move(wall.counters);
          wall.counters.clear();
          wall.primary = false;
          out.push_back(std::move(gpu));
          out.push_back(std::move(wall));
        } else {
          gpu.primary = false;
          out.push_back(std::move(wall));
          out.push_back(std::move(gpu));
        }
      }
      if (!primary_counter.empty() && counter_in_every_sample(da, primary_counter) &&
          counter_in_every_sample(db, primary_counter)) {
        PhaseComparison counted = r;
        counted.metric = primary_counter;
        counted.samples_a = da.counters.at(primary_counter).size();
        counted.samples_b = db.counters.at(primary_counter).size();
        fill(counted, &da.counters.at(primary_counter), &db.counters.at(primary_counter));
        counted.counters = std::move(out.front().counters);
        out.front().counters.clear();
        for (auto& x : out) x.primary = false;
        out.insert(out.begin(), std::move(counted));
      }
      for (auto& x : out) c.rows.push_back(std::move(x));
    }
    family_intervals(c.rows, first_row, ca, cb, design, o);
    for (auto& acc : account_case(ca, cb, design, o)) c.accounting.push_back(std::move(acc));
    // After the family: the Bonferroni widening is over the case's phases, which these are not.
    if (o.load_rows && ca.suite == "load")
      for (auto& r : load_rows(a, b, k, o, c.warnings)) c.rows.push_back(std::move(r));
  }
  for (const auto& k : keys)
    if (a.cases.count(k) && b.cases.count(k)) {
      const CaseData& cd = a.cases.at(k);
      CaseSummary s = summarize_case(c, cd.suite, cd.case_name, cd.params, o);
      s.design = design_name(designs.at(k).design);
      s.design_reason = designs.at(k).reason;
      c.summaries.push_back(std::move(s));
    }
  for (const auto& [side, env] : {std::pair{"A", &c.env_a}, std::pair{"B", &c.env_b}}) {
    const size_t disturbed = env->throttled + env->loaded;  // a sample can be both: counted twice at most
    if (disturbed == 0) continue;
    std::string examples;
    for (const auto& e : env->examples) examples += (examples.empty() ? "" : "; ") + e;
    c.warnings.push_back(fmt::format(
        "{}: {} of {} samples ran while the GPU was throttled ({}) or the host was loaded by other work ({}), e.g. {}; {}",
        side, std::min(disturbed, env->samples), env->samples, env->throttled, env->loaded, examples,
        env->dropped ? fmt::format("{} left out (--drop-disturbed)", env->dropped)
                     : std::string("kept (--drop-disturbed leaves them out)")));
  }
  if (a.cases.empty()) c.warnings.push_back("A has no measured samples");
  if (b.cases.empty()) c.warnings.push_back("B has no measured samples");
  return c;
}

}  // namespace cuzk
