// The noise diagnosis (harness/analysis/noise.hpp, docs/noise.md): grouping samples into processes
// and phases, and each row's statistics. Reading is in noise_load.cpp, the diagnosis sentence in
// noise_diagnosis.cpp, the renderings in noise_format.cpp; the statistics themselves in stats.hpp.
#include "harness/analysis/noise.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "harness/measure/clock.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/analysis/noise_detail.hpp"
#include "harness/analysis/stats.hpp"

namespace cuzk::noise {

using json = nlohmann::json;
using detail::case_key_of;
using detail::diagnose;
using detail::EnvTally;
using detail::fail_at;
using detail::kWindowDerivedMinSamples;
using detail::kWindowDerivedRho;
using detail::Process;
using detail::read_env;
using detail::SampleRef;

namespace {

// ---------------------------------------------------------------- one row

PhaseNoise analyse_row(const std::string& case_key, const std::string& phase, const std::string& label,
                       const std::vector<Process>& procs, const std::map<std::string, double>& window_derived,
                       double alpha) {
  PhaseNoise r;
  r.case_key = case_key;
  r.phase = phase;
  r.label = label;
  // Each process's samples holding the phase, in repetition order.
  std::vector<std::vector<const SampleRef*>> series;
  for (const Process& p : procs) {
    auto it = p.by_case.find(case_key);
    if (it == p.by_case.end()) continue;
    std::vector<const SampleRef*> s;
    for (const SampleRef& ref : it->second)
      if (ref.phases->contains(phase)) s.push_back(&ref);
    if (!s.empty()) series.push_back(std::move(s));
  }
  std::vector<const json*> records;
  for (const auto& s : series)
    for (const SampleRef* ref : s) records.push_back(&(*ref->phases)[phase]);
  r.metric = judged_time_metric(records);

  std::vector<std::vector<double>> times;
  std::vector<double> all;
  for (const auto& s : series) {
    auto& t = times.emplace_back();
    for (const SampleRef* ref : s) t.push_back((*ref->phases)[phase][r.metric].get<double>());
    all.insert(all.end(), t.begin(), t.end());
  }
  r.processes = series.size();
  r.samples = all.size();
  r.reps_min = r.reps_max = times.front().size();
  for (const auto& t : times) {
    r.reps_min = std::min(r.reps_min, t.size());
    r.reps_max = std::max(r.reps_max, t.size());
  }
  r.median_ns = median(all);
  if (r.median_ns > 0)
    r.cv = 1.4826 * mad(all) / r.median_ns;
  else
    r.cv_why = "the median time is 0 ns: no cv";

  const size_t zeros = size_t(std::count_if(all.begin(), all.end(), [](double t) { return !(t > 0); }));
  if (zeros > 0) {
    const std::string why = fmt::format(
        "{} of {} times are 0 ns (the phase did no work there, e.g. parameters already resident): no log-scale "
        "statistics",
        zeros, all.size());
    r.anova.why = r.first.why = r.trend.why = r.env_why = why;
    r.diagnosis = diagnose(r, alpha);
    return r;
  }

  // Repetitions 2..R on the log scale: the ANOVA, the trend and the correlations.
  std::vector<std::vector<double>> groups;
  std::vector<std::vector<std::pair<double, double>>> trend_groups;
  std::vector<std::pair<double, const SampleRef*>> later;  // (time, sample)
  for (size_t i = 0; i < series.size(); ++i) {
    auto& g = groups.emplace_back();
    auto& tg = trend_groups.emplace_back();
    for (size_t j = 1; j < series[i].size(); ++j) {
      g.push_back(std::log(times[i][j]));
      tg.emplace_back(double(j), std::log(times[i][j]));
      later.emplace_back(times[i][j], series[i][j]);
    }
  }
  r.anova = one_way_anova(groups);
  r.first = first_repetition(times);
  r.trend = pooled_trend(trend_groups);

  std::set<std::string> names;
  for (const auto& [t, ref] : later)
    for (const auto& [name, v] : ref->env)
      if (!window_derived.count(name)) names.insert(name);
  for (const std::string& name : names) {
    std::vector<double> x, y;
    for (const auto& [t, ref] : later)
      if (auto it = ref->env.find(name); it != ref->env.end()) {
        x.push_back(it->second);
        y.push_back(t);
      }
    const Spearman s = spearman(x, y);
    if (!s.why.empty()) continue;  // too few values, or the reading (or the time) does not vary
    r.env.push_back({name, s.n, s.rho, s.p, 1});
  }
  for (EnvCorrelation& e : r.env) e.p_adjusted = std::min(1.0, e.p * double(r.env.size()));
  std::stable_sort(r.env.begin(), r.env.end(), [](const EnvCorrelation& a, const EnvCorrelation& b) {
    return std::fabs(a.rho) > std::fabs(b.rho);
  });
  if (r.env.empty())
    r.env_why = later.empty()   ? "no repetition after the first"
                : names.empty() ? "the samples carry no environment readings"
                                : "no environment reading varies across these samples";
  r.diagnosis = diagnose(r, alpha);
  return r;
}

}  // namespace

// ---------------------------------------------------------------- analyse

Analysis analyse(const std::vector<ResultsFile>& files, const Options& o) {
  Analysis a;
  a.options = o;
  std::vector<Process> procs;
  std::map<std::string, size_t> proc_index;
  std::vector<std::string> case_order;           // case keys, first seen first
  std::map<std::string, std::string> case_name;  // case key -> the case's name
  std::map<std::string, std::set<std::string>> case_phases;
  std::map<std::string, EnvTally> tally;
  size_t order = 0;
  for (size_t fi = 0; fi < files.size(); ++fi) {
    const ResultsFile& f = files[fi];
    a.files.push_back(f.path);
    for (const ResultsLine& l : f.samples) {
      const json& s = l.value;
      SampleRef ref;
      ref.file = fi;
      ref.line = l.line;
      ref.order = order++;
      ref.warmup = s.value("warmup", false);
      ref.repetition = s.value("repetition", int64_t(0));
      ref.phases = &s["phases"];
      if (ref.warmup && !o.include_warmup) {
        ++a.warmup_skipped;
        continue;
      }
      std::string id = "file:" + f.path;
      if (s.contains("process_id")) {
        if (!s["process_id"].is_string() || s["process_id"].get<std::string>().empty())
          fail_at(f, l, fmt::format("field 'process_id' must be a non-empty string, not {}", s["process_id"].dump()));
        id = s["process_id"].get<std::string>();
      }
      if (s.contains("env")) {
        a.env_seen = true;
        read_env(f, l, ref, tally);
      }
      auto [it, fresh] = proc_index.try_emplace(id, procs.size());
      if (fresh) {
        procs.push_back({id, {}});
        a.processes.push_back({id, f.path, 0});
      }
      ++a.processes[it->second].samples;
      const std::string key = case_key_of(s);
      if (!case_phases.count(key)) {
        case_order.push_back(key);
        case_name[key] = s.value("case", std::string());
      }
      for (const auto& [path, rec] : ref.phases->items()) case_phases[key].insert(path);
      procs[it->second].by_case[key].push_back(std::move(ref));
    }
  }
  std::string inputs;
  for (size_t i = 0; i < a.files.size() && i < 3; ++i) inputs += (i ? ", " : "") + a.files[i];
  if (a.files.size() > 3) inputs += fmt::format(" and {} more", a.files.size() - 3);
  if (procs.empty())
    throw NoiseError(a.warmup_skipped
                         ? fmt::format("{}: no measured sample ({} warm-up samples skipped: pass --include-warmup to "
                                       "analyse them)",
                                       inputs, a.warmup_skipped)
                         : fmt::format("{}: no sample line", inputs.empty() ? "no input file" : inputs));
  if (procs.size() < 2)
    throw NoiseError(fmt::format(
        "{}: the samples come from 1 process ({}); the noise diagnosis needs at least 2 (one results file per "
        "process, or samples with distinct process_id)",
        inputs, procs.front().id));
  for (const std::string& p : o.phases) {
    bool found = false;
    for (const auto& [key, phases] : case_phases) found = found || phases.count(p);
    if (!found) {
      std::set<std::string> known;
      for (const auto& [key, phases] : case_phases) known.insert(phases.begin(), phases.end());
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw NoiseError(fmt::format("--phase {}: no sample holds this phase (phases in the data: {})", p, list));
    }
  }
  // Repetition order within each process: warm-ups first, then by repetition, then as read.
  for (Process& p : procs)
    for (auto& [key, v] : p.by_case)
      std::stable_sort(v.begin(), v.end(), [](const SampleRef& x, const SampleRef& y) {
        return std::make_tuple(!x.warmup, x.repetition, x.order) < std::make_tuple(!y.warmup, y.repetition, y.order);
      });

  for (const auto& [name, t] : tally) {
    if (t.numeric == 0) {
      a.env_null[name] = t.reason.empty() ? "no reason recorded" : t.reason;
    } else if (t.values.size() == 1) {
      a.env_constant[name] = *t.values.begin();
    } else if (t.value_at.size() >= kWindowDerivedMinSamples) {
      const Spearman w = spearman(t.value_at, t.interval_at);
      if (w.why.empty() && std::fabs(w.rho) >= kWindowDerivedRho) a.env_window_derived[name] = w.rho;
    }
  }

  // Labels: the bare phase for one case; "case: phase" when several (case with parameters when
  // a case name alone is ambiguous).
  std::set<std::string> case_names;
  for (const auto& key : case_order) case_names.insert(case_name[key]);
  const bool names_unique = case_names.size() == case_order.size();
  for (const std::string& key : case_order)
    for (const std::string& phase : case_phases[key]) {
      if (!o.phases.empty() && std::find(o.phases.begin(), o.phases.end(), phase) == o.phases.end()) continue;
      const std::string label = case_order.size() == 1 ? phase : (names_unique ? case_name[key] : key) + ": " + phase;
      a.rows.push_back(analyse_row(key, phase, label, procs, a.env_window_derived, o.alpha));
    }
  return a;
}

}  // namespace cuzk::noise
