// `compare`: phase-by-phase comparison of two results files (docs/compare.md).
#include "harness/analysis/compare.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/measure/clock.hpp"
#include "harness/analysis/compare_detail.hpp"
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
    d.note = compare_detail::pct(*d.ratio);
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
    med = median(it->second);
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

// Whether a case's samples are analysed with processes as the units (block design): every
// sample names its process, each side has at least two processes, and some process ran more
// than one repetition (otherwise a process median is the sample itself).
bool use_process_blocks(const CaseData& a, const CaseData& b, const CompareOptions& o) {
  if (o.analysis.blocks == "off") return false;
  bool repeated = false;
  for (const CaseData* c : {&a, &b}) {
    if (c->per_process.count("") || c->per_process.size() < 2) return false;
    for (auto& [id, n] : c->per_process) repeated = repeated || n > 1;
  }
  return repeated;
}

void fill_stats(PhaseComparison& r, const std::vector<double>& a, const std::vector<double>& b,
                const CompareOptions& o) {
  r.n_a = a.size();
  r.n_b = b.size();
  r.threshold = o.threshold_for(r.phase);
  if (a.empty() || b.empty()) {
    r.verdict = "too noisy";
    r.warnings.push_back("no samples on one side");
    return;
  }
  r.median_a = median(a);
  r.median_b = median(b);
  r.mad_a = mad(a);
  r.mad_b = mad(b);
  r.iqr_a = iqr(a);
  r.iqr_b = iqr(b);
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
  if (r.n_a < o.min_samples || r.n_b < o.min_samples)
    r.warnings.push_back(fmt::format("too few {} ({} A, {} B; at least {} per side wanted)", r.unit, r.n_a,
                                     r.n_b, o.min_samples));
  if (min_exact_p(r.n_a, r.n_b) >= o.alpha)
    r.warnings.push_back(fmt::format("with {} and {} {} no p-value can fall below alpha {}", r.n_a,
                                     r.n_b, r.unit, o.alpha));
  if (r.n_a < 2 || r.n_b < 2 || std::isnan(r.ci_low))
    r.verdict = "too noisy";
  else
    r.verdict = compare_verdict(r.p_value, r.ratio, r.ci_low, r.ci_high, o.alpha, r.threshold);
}

// A phase only one side has: the other side's observations are zeros (it cost nothing there),
// one per sample of the case, or per process under the block design.
std::vector<double> absent_observations(const CaseData& c, bool blocks) {
  return std::vector<double>(blocks ? c.per_process.size() : c.samples, 0.0);
}

// The observations behind a row, as fill_stats saw them (zeros on a side without the phase).
std::pair<std::vector<double>, std::vector<double>> row_observations(const CaseData& ca, const CaseData& cb,
                                                                     const PhaseComparison& r, bool blocks) {
  auto side = [&](const CaseData& cd) {
    auto it = cd.phases.find(r.phase);
    if (it == cd.phases.end()) return absent_observations(cd, blocks);
    const PhaseData& d = it->second;
    return r.metric == "gpu_ns" ? observations(d.gpu, d.gpu_process, blocks) : observations(d.wall, d.wall_process, blocks);
  };
  return {side(ca), side(cb)};
}

// The widened CIs of the case's primary rows that report a change (PhaseComparison::family).
void family_intervals(std::vector<PhaseComparison>& rows, size_t first, const CaseData& ca, const CaseData& cb,
                      bool blocks, const CompareOptions& o) {
  size_t family = 0;
  for (size_t i = first; i < rows.size(); ++i) family += rows[i].primary;
  const double level = 1.0 - (1.0 - o.ci_level) / static_cast<double>(std::max<size_t>(1, family));
  for (size_t i = first; i < rows.size(); ++i) {
    PhaseComparison& r = rows[i];
    r.family = family;
    if (!r.primary || !(r.verdict == "faster" || r.verdict == "slower" || !r.missing.empty())) continue;
    auto [a, b] = row_observations(ca, cb, r, blocks);
    if (r.missing.empty()) {
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
void check_injected(const Side& a, const Side& b, const CompareOptions& o, std::vector<std::string>& warnings) {
  const bool in_a = a.injected.is_object(), in_b = b.injected.is_object();
  if (!in_a && !in_b) return;
  auto spec = [](const Side& s) { return fmt::format("{}=\"{}\"", inject::kEnvVar, s.injected.value("spec", "")); };
  if (in_a && in_b) {
    warnings.push_back(spec(a) == spec(b)
                           ? fmt::format("A ({}) and B ({}) were both written under {}: injected slowdowns, not real measurements",
                                         a.path, b.path, spec(a))
                           : fmt::format("A ({}) was written under {} and B ({}) under {}: injected slowdowns, not real measurements",
                                         a.path, spec(a), b.path, spec(b)));
    return;
  }
  const Side& inj = in_a ? a : b;
  const Side& plain = in_a ? b : a;
  const std::string msg = fmt::format("{} ({}) was written under {} and {} ({}) was not", in_a ? "A" : "B", inj.path,
                                      spec(inj), in_a ? "B" : "A", plain.path);
  if (!o.allow_injected)
    throw CompareError(msg + ": an injected slowdown is not a real change; pass --allow-injected to compare them anyway");
  warnings.push_back(msg + ": its changes include the injected slowdown, which is not a real one");
}

}  // namespace

namespace compare_detail {

std::vector<double> observations(const std::vector<double>& v, const std::vector<std::string>& process, bool blocks) {
  if (!blocks) return v;
  std::map<std::string, std::vector<double>> by;
  for (size_t i = 0; i < v.size(); ++i) by[process[i]].push_back(v[i]);
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

bool PhaseComparison::change_stands() const {
  if (std::isnan(family_low) || std::isnan(family_high)) return false;
  if (!missing.empty()) return missing == "a" ? family_low > 0 : family_high < 0;
  return family_low > 1 || family_high < 1;
}

const PhaseComparison* primary_row(const Comparison& c, const std::string& phase) {
  for (const auto& r : c.rows)
    if (r.phase == phase && r.primary) return &r;
  return nullptr;
}

Comparison compare_files(const std::string& pa, const std::string& pb, const CompareOptions& o) {
  if (o.analysis.metric != "auto" && o.analysis.metric != "wall")
    throw CompareError(fmt::format("metric must be auto or wall (got \"{}\")", o.analysis.metric));
  if (o.analysis.blocks != "auto" && o.analysis.blocks != "off")
    throw CompareError(fmt::format("blocks must be auto or off (got \"{}\")", o.analysis.blocks));
  Side a = load_side(pa, o), b = load_side(pb, o);
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
  c.metric = o.analysis.metric;
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
    const bool blocks = use_process_blocks(ca, cb, o);
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
        const bool gpu = o.analysis.metric == "auto" && d.gpu_null == 0 && !d.gpu.empty();
        const std::vector<double> present = observations(gpu ? d.gpu : d.wall, gpu ? d.gpu_process : d.wall_process, blocks);
        const std::vector<double> zeros = absent_observations(in_b ? ca : cb, blocks);
        r.missing = in_b ? "a" : "b";
        r.metric = gpu ? "gpu_ns" : "wall_ns";
        r.unit = blocks ? "processes" : "samples";
        (in_b ? r.samples_b : r.samples_a) = d.wall.size();
        (in_b ? r.samples_a : r.samples_b) = (in_b ? ca : cb).samples;
        fill_stats(r, in_b ? zeros : present, in_b ? present : zeros, o);
        r.ratio = in_b ? INFINITY : 0.0;
        r.ci_low = r.ci_high = NAN;
        r.verdict = in_b ? "only in B" : "only in A";
        // Its counters, like its time, are 0 where it did not run (a counter unread where it ran
        // stays n/a with its reason).
        PhaseData absent;
        for (const auto& [n, v] : d.counters)
          if (!v.empty()) absent.counters[n].assign(zeros.size(), 0.0);
        for (const auto& [n, v] : d.counters)
          r.counters.push_back(counter_delta(n, in_b ? &absent : &d, in_b ? &d : &absent));
        c.rows.push_back(r);
        continue;
      }
      const PhaseData &da = pa_it->second, &db = pb_it->second;
      r.unit = blocks ? "processes" : "samples";
      r.samples_a = da.wall.size();
      r.samples_b = db.wall.size();
      PhaseComparison wall = r;
      fill_stats(wall, observations(da.wall, da.wall_process, blocks), observations(db.wall, db.wall_process, blocks), o);
      if (da.gpu.size() + db.gpu.size() > 0 && (da.gpu_null > 0 || db.gpu_null > 0))
        wall.warnings.push_back(fmt::format("gpu_ns is null in {} A and {} B samples", da.gpu_null, db.gpu_null));
      std::set<std::string> cnames;
      for (auto& [n, v] : da.counters) cnames.insert(n);
      for (auto& [n, v] : db.counters) cnames.insert(n);
      for (const auto& n : cnames) wall.counters.push_back(counter_delta(n, &da, &db));
      if (da.gpu.empty() || db.gpu.empty()) {
        if (!da.gpu.empty() || !db.gpu.empty())
          wall.warnings.push_back(fmt::format("GPU time only in {}: not compared", da.gpu.empty() ? "B" : "A"));
        c.rows.push_back(wall);
        continue;
      }
      PhaseComparison gpu = r;
      gpu.metric = "gpu_ns";
      gpu.samples_a = da.gpu.size();
      gpu.samples_b = db.gpu.size();
      fill_stats(gpu, observations(da.gpu, da.gpu_process, blocks), observations(db.gpu, db.gpu_process, blocks), o);
      // GPU time is the verdict of a GPU phase only when every sample has it: a phase whose GPU
      // time is sometimes missing would be judged on a subset of its samples.
      const bool gpu_primary = o.analysis.metric == "auto" && da.gpu_null == 0 && db.gpu_null == 0;
      if (gpu_primary) {
        gpu.counters = std::move(wall.counters);
        wall.counters.clear();
        wall.primary = false;
        c.rows.push_back(gpu);
        c.rows.push_back(wall);
      } else {
        gpu.primary = false;
        c.rows.push_back(wall);
        c.rows.push_back(gpu);
      }
    }
    family_intervals(c.rows, first_row, ca, cb, blocks, o);
    for (auto& acc : account_case(ca, cb, blocks, o)) c.accounting.push_back(std::move(acc));
  }
  for (const auto& k : keys)
    if (a.cases.count(k) && b.cases.count(k)) {
      const CaseData& cd = a.cases.at(k);
      c.summaries.push_back(summarize_case(c, cd.suite, cd.case_name, cd.params, o));
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
