// The noise diagnosis (harness/analysis/noise.hpp, docs/noise.md): grouping, the diagnosis sentence,
// and the terminal / markdown / JSON renderings of an Analysis; its statistics are in stats.cpp.
#include "harness/analysis/noise.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

#include "harness/measure/clock.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/output/printers.hpp"
#include "harness/analysis/stats.hpp"

namespace cuzk::noise {

using json = nlohmann::json;

// ---------------------------------------------------------------- loading and grouping

namespace {

// One analysed sample line, with what the analysis needs of it.
struct SampleRef {
  size_t file = 0, line = 0, order = 0;
  bool warmup = false;
  int64_t repetition = 0;
  const json* phases = nullptr;
  std::map<std::string, double> env;  // numeric readings only
};

struct Process {
  std::string id;
  std::map<std::string, std::vector<SampleRef>> by_case;  // case key -> samples, repetition order
};

struct EnvTally {
  size_t numeric = 0;
  std::set<double> values;
  std::string reason;                         // first reason given for a null
  std::vector<double> value_at, interval_at;  // pairs with the sample's env.interval_ns
};

// A reading whose ranks follow the window's length exactly (e.g. the +- resolution of a rate,
// ticks / wall) is a function of the sample's own duration: it would "explain" the time
// perfectly without saying anything about the machine. Needs enough samples for an exact
// monotone match not to happen by chance (1 in n! for an unrelated reading).
constexpr size_t kWindowDerivedMinSamples = 6;
constexpr double kWindowDerivedRho = 0.999;

[[noreturn]] void fail_at(const ResultsFile& f, const ResultsLine& l, const std::string& what) {
  throw NoiseError(fmt::format("{}:{}: {}", f.path, l.line, what));
}

// Reads the sample's "env" (optional): numeric readings into `ref`, every reading into `tally`.
void read_env(const ResultsFile& f, const ResultsLine& l, SampleRef& ref, std::map<std::string, EnvTally>& tally) {
  const json& e = l.value["env"];
  if (!e.is_object()) fail_at(f, l, fmt::format("field 'env' must be an object, not {}", e.dump()));
  const json errors = e.value("errors", json::object());
  if (!errors.is_object()) fail_at(f, l, "field 'env.errors' must be an object (reading -> reason)");
  const json interval = e.value("interval_ns", json(nullptr));
  if (!interval.is_null() && !interval.is_number())
    fail_at(f, l, fmt::format("field 'env.interval_ns' must be a number or null, not {}", interval.dump()));
  if (e.contains("values")) {
    const json& v = e["values"];
    if (!v.is_object()) fail_at(f, l, "field 'env.values' must be an object (reading -> number or null)");
    for (const auto& [name, x] : v.items()) {
      EnvTally& t = tally[name];
      if (x.is_number()) {
        ref.env[name] = x.get<double>();
        ++t.numeric;
        t.values.insert(x.get<double>());
        if (interval.is_number()) {
          t.value_at.push_back(x.get<double>());
          t.interval_at.push_back(interval.get<double>());
        }
      } else if (!x.is_null()) {
        fail_at(f, l, fmt::format("env value '{}' must be a number or null, not {}", name, x.dump()));
      }
    }
  }
  for (const auto& [name, why] : errors.items()) {
    if (!why.is_string()) fail_at(f, l, fmt::format("env error of '{}' must be a string, not {}", name, why.dump()));
    EnvTally& t = tally[name];
    if (t.reason.empty()) t.reason = why.get<std::string>();
  }
}

std::string case_key_of(const json& s) {
  std::string key = s.value("case", std::string());
  const json params = s.value("parameters", json::object());
  if (params.is_object() && !params.empty()) key += " " + params.dump();
  return key;
}

// ---------------------------------------------------------------- number formatting

json num_or_null(double v, const std::string& why) { return why.empty() && std::isfinite(v) ? json(v) : json(nullptr); }

// ---------------------------------------------------------------- the diagnosis

std::string diagnose(const PhaseNoise& r, double alpha) {
  std::vector<std::string> parts;
  const Anova& a = r.anova;
  if (a.why.empty()) {
    if (a.p < alpha && a.between_share >= 0.5)
      parts.push_back(fmt::format("between-process noise dominates (sd {}%, {}% of the variance; F p {})",
                                  output::pct_digits(a.sd_between), output::pct_digits(a.between_share), output::pval(a.p)));
    else if (a.p < alpha)
      parts.push_back(fmt::format(
          "within-process noise dominates (sd {}%, {}% of the variance), with a significant between-process part "
          "(sd {}%; F p {})",
          output::pct_digits(a.sd_within), output::pct_digits(1 - a.between_share), output::pct_digits(a.sd_between), output::pval(a.p)));
    else if (a.between_share < 0.5)
      parts.push_back(
          fmt::format("within-process noise dominates (sd {}%); no significant difference between processes (F p {})",
                      output::pct_digits(a.sd_within), output::pval(a.p)));
    else
      parts.push_back(fmt::format(
          "within-process sd {}%; processes do not differ significantly (F p {}) although the estimated between "
          "share is {}%: run more processes to tell",
          output::pct_digits(a.sd_within), output::pval(a.p), output::pct_digits(a.between_share)));
  }
  const FirstRep& f = r.first;
  if (f.why.empty()) {
    if (f.p < alpha)
      parts.push_back(fmt::format("first repetition {}% (slower in {} of {} processes, p {})",
                                  output::signed_pct_digits(f.median_effect), f.slower, f.processes, output::pval(f.p)));
    else
      parts.push_back(fmt::format("no significant first-repetition effect (median {}%, p {})",
                                  output::signed_pct_digits(f.median_effect), output::pval(f.p)));
  }
  const Trend& t = r.trend;
  if (t.why.empty()) {
    if (t.ci_low > 0 || t.ci_high < 0)
      parts.push_back(fmt::format("{} {}% per repetition (95% CI {} to {})",
                                  t.slope > 0 ? "slows down by" : "speeds up by", output::pct_digits(std::fabs(t.slope)),
                                  output::signed_pct_digits(t.ci_low), output::signed_pct_digits(t.ci_high)));
    else
      parts.push_back("no significant trend");
  }
  if (!r.env.empty()) {
    const EnvCorrelation& e = r.env.front();
    if (e.p_adjusted < alpha)
      parts.push_back(fmt::format("slower when {} is {} (rho {:+.2f}, p {})", e.name, e.rho > 0 ? "high" : "low", e.rho,
                                  output::pval(e.p_adjusted)));
    else
      parts.push_back(fmt::format("no significant environment correlate ({} reading{} tested)", r.env.size(),
                                  r.env.size() == 1 ? "" : "s"));
  }
  if (parts.empty())  // nothing could be computed: say why (the ANOVA's reason covers the others)
    parts.push_back(fmt::format("median {}; {}", fmt_ns(r.median_ns), a.why));
  std::string s = r.label + ": ";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s;
}

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
  bool all_gpu = true;
  for (const auto& s : series)
    for (const SampleRef* ref : s) all_gpu = all_gpu && (*ref->phases)[phase]["gpu_ns"].is_number();
  r.metric = all_gpu ? "gpu_ns" : "wall_ns";

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

Analysis analyse_files(const std::vector<std::string>& paths, const Options& o) {
  std::vector<ResultsFile> files;
  for (const std::string& p : paths) {
    try {
      files.push_back(read_results(p));
    } catch (const ResultsError& e) {
      throw NoiseError(e.what());
    }
  }
  return analyse(files, o);
}

// ---------------------------------------------------------------- output

namespace {

// The table with its footnotes, legend, diagnosis and environment notes: rendered for the
// terminal or as markdown.
struct Page {
  output::Table table{{{"phase"},
                       {"metric"},
                       {"n (P x R)", output::Align::right},
                       {"median", output::Align::right},
                       {"cv", output::Align::right},
                       {"within", output::Align::right},
                       {"between", output::Align::right},
                       {"between share", output::Align::right},
                       {"F p", output::Align::right},
                       {"first rep", output::Align::right},
                       {"trend %/rep [95% CI]", output::Align::right},
                       {"top env correlate"}}};
  std::vector<std::string> footnotes;
  std::vector<std::string> legend;
  std::vector<std::string> diagnosis;
  std::vector<std::string> env_lines;
};

Page page(const Analysis& a) {
  Page m;
  // One footnote per distinct reason, shared by every cell it explains.
  auto dash = [&](const std::string& why) {
    auto it = std::find(m.footnotes.begin(), m.footnotes.end(), why);
    if (it == m.footnotes.end()) it = m.footnotes.insert(m.footnotes.end(), why);
    return fmt::format("-[{}]", it - m.footnotes.begin() + 1);
  };
  for (const PhaseNoise& r : a.rows) {
    std::vector<output::Cell> c;
    c.push_back(r.label);
    c.push_back(r.metric);
    c.push_back(r.reps_min == r.reps_max ? fmt::format("{} x {}", r.processes, r.reps_min)
                                         : fmt::format("{} x {}-{}", r.processes, r.reps_min, r.reps_max));
    c.push_back(fmt_ns(r.median_ns));
    c.push_back(r.cv_why.empty() ? output::pct_digits(r.cv) + "%" : dash(r.cv_why));
    if (r.anova.why.empty()) {
      c.push_back(output::pct_digits(r.anova.sd_within) + "%");
      c.push_back(output::pct_digits(r.anova.sd_between) + "%");
      c.push_back(output::pct_digits(r.anova.between_share) + "%");
      c.push_back(output::pval(r.anova.p));
    } else {
      const std::string d = dash(r.anova.why);
      c.insert(c.end(), 4, output::Cell(d));
    }
    c.push_back(r.first.why.empty()
                    ? fmt::format("{}% ({}/{})", output::signed_pct_digits(r.first.median_effect), r.first.slower, r.first.processes)
                    : dash(r.first.why));
    c.push_back(r.trend.why.empty() ? fmt::format("{:+.3f} [{:+.3f}, {:+.3f}]", 100 * r.trend.slope,
                                                  100 * r.trend.ci_low, 100 * r.trend.ci_high)
                                    : dash(r.trend.why));
    c.push_back(r.env.empty() ? dash(r.env_why)
                              : fmt::format("{} {:+.2f} (p {})", r.env.front().name, r.env.front().rho,
                                            output::pval(r.env.front().p_adjusted)));
    m.table.add_row(std::move(c));
    m.diagnosis.push_back(r.diagnosis);
  }
  m.legend = {
      "metric: gpu_ns when every analysed sample of the phase has GPU time, else wall_ns. n: P processes x R "
      "repetitions each; median and cv (1.4826 MAD / median) over every analysed sample.",
      "within, between: sd of ln(time) x 100 (~cv%) inside a process and between process means (one-way "
      "random-effects ANOVA); between share: between variance / total; F p: the ANOVA's F test.",
      "first rep: first / median(later) - 1 per process, median over processes (slower/processes); the first "
      "repetition is left out of within, between, F p, trend and env.",
      "trend: pooled within-process slope of ln(time) per repetition, x 100 (~% per repetition). top env "
      "correlate: strongest Spearman rho of the time with an environment reading, p Bonferroni-adjusted over the "
      "readings tested.",
      a.options.include_warmup ? "warm-up samples are included as the earliest repetitions of their process."
      : a.warmup_skipped       ? fmt::format("{} warm-up samples skipped (--include-warmup counts them as the first "
                                                   "repetitions).",
                                             a.warmup_skipped)
                               : "no warm-up samples in the input.",
  };
  if (!a.env_seen) m.env_lines.push_back("the samples carry no environment readings (\"env\"): no correlations");
  for (const auto& [name, why] : a.env_null)
    m.env_lines.push_back(fmt::format("{}: null in every sample ({})", name, why));
  for (const auto& [name, v] : a.env_constant)
    m.env_lines.push_back(fmt::format("{}: constant {} in every sample (no correlation possible)", name, v));
  for (const auto& [name, rho] : a.env_window_derived)
    m.env_lines.push_back(fmt::format(
        "{}: follows the sample's window length (rho {:+.3f} with env.interval_ns): a function of the sample's own "
        "duration, not tested",
        name, rho));
  return m;
}

// `prefix` + `text` broken at spaces into lines of at most `width` columns; continuation lines
// start with `indent`.
std::string wrap(const std::string& prefix, const std::string& text, size_t width, const std::string& indent) {
  std::string out, line = prefix;
  bool fresh = true;  // nothing but the prefix or indent on `line` yet
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (!fresh && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
      fresh = true;
    }
    line += (fresh ? "" : " ") + word;
    fresh = false;
    pos = end + 1;
  }
  return out + line + "\n";
}

std::string inputs_line(const Analysis& a) {
  std::string s = fmt::format("noise: {} process{}, {} file{}", a.processes.size(), a.processes.size() == 1 ? "" : "es",
                              a.files.size(), a.files.size() == 1 ? "" : "s");
  if (!a.files.empty()) s += " (" + a.files.front() + (a.files.size() > 1 ? ", ..." : "") + ")";
  return s;
}

}  // namespace

std::string format_table(const Analysis& a) {
  const Page m = page(a);
  std::string out = inputs_line(a) + "\n\n" + output::text(m.table);
  out += "\n";
  for (size_t i = 0; i < m.footnotes.size(); ++i) out += fmt::format("[{}] {}\n", i + 1, m.footnotes[i]);
  if (!m.footnotes.empty()) out += "\n";
  for (const auto& l : m.legend) out += wrap("", l, 110, "  ");
  out += "\ndiagnosis:\n";
  for (const auto& d : m.diagnosis) out += wrap("  ", d, 110, "    ");
  if (!m.env_lines.empty()) {
    out += "\nenvironment readings:\n";
    for (const auto& l : m.env_lines) out += "  " + l + "\n";
  }
  return out;
}

std::string format_markdown(const Analysis& a) {
  const Page m = page(a);
  std::string out = inputs_line(a) + "\n\n" + output::markdown(m.table);
  out += "\n";
  for (size_t i = 0; i < m.footnotes.size(); ++i) out += fmt::format("[{}] {}  \n", i + 1, output::markdown_escape(m.footnotes[i]));
  if (!m.footnotes.empty()) out += "\n";
  for (const auto& l : m.legend) out += "- " + l + "\n";
  out += "\n**Diagnosis**\n\n";
  for (const auto& d : m.diagnosis) out += "- " + d + "\n";
  if (!m.env_lines.empty()) {
    out += "\n**Environment readings**\n\n";
    for (const auto& l : m.env_lines) out += "- " + l + "\n";
  }
  return out;
}

json to_json(const Analysis& a) {
  json j = {{"schema", kNoiseSchema}, {"version", kNoiseVersion}};
  j["options"] = {
      {"phases", a.options.phases}, {"include_warmup", a.options.include_warmup}, {"alpha", a.options.alpha}};
  j["run"] = a.run;
  j["inputs"] = a.files;
  j["processes"] = json::array();
  for (const auto& p : a.processes) j["processes"].push_back({{"id", p.id}, {"file", p.file}, {"samples", p.samples}});
  j["warmup_skipped"] = a.warmup_skipped;
  j["rows"] = json::array();
  for (const PhaseNoise& r : a.rows) {
    const Anova& an = r.anova;
    const FirstRep& f = r.first;
    const Trend& t = r.trend;
    json env = json::array();
    for (const auto& e : r.env)
      env.push_back({{"name", e.name}, {"n", e.n}, {"rho", e.rho}, {"p", e.p}, {"p_adjusted", e.p_adjusted}});
    auto why = [](const std::string& w) { return w.empty() ? json(nullptr) : json(w); };
    j["rows"].push_back({
        {"case", r.case_key},
        {"phase", r.phase},
        {"label", r.label},
        {"metric", r.metric},
        {"processes", r.processes},
        {"reps_min", r.reps_min},
        {"reps_max", r.reps_max},
        {"samples", r.samples},
        {"median_ns", r.median_ns},
        {"cv", num_or_null(r.cv, r.cv_why)},
        {"cv_unavailable", why(r.cv_why)},
        {"anova",
         {{"unavailable", why(an.why)},
          {"groups", an.groups},
          {"n", an.n},
          {"df_between", num_or_null(an.df_between, an.why)},
          {"df_within", num_or_null(an.df_within, an.why)},
          {"ms_between", num_or_null(an.ms_between, an.why)},
          {"ms_within", num_or_null(an.ms_within, an.why)},
          {"n0", num_or_null(an.n0, an.why)},
          {"sd_within_log", num_or_null(an.sd_within, an.why)},
          {"sd_between_log", num_or_null(an.sd_between, an.why)},
          {"between_share", num_or_null(an.between_share, an.why)},
          {"f", num_or_null(an.f, an.why)},
          {"p", num_or_null(an.p, an.why)}}},
        {"first_rep",
         {{"unavailable", why(f.why)},
          {"processes", f.processes},
          {"slower", f.slower},
          {"median_effect", num_or_null(f.median_effect, f.why)},
          {"t", num_or_null(f.t, f.why)},
          {"p", num_or_null(f.p, f.why)}}},
        {"trend",
         {{"unavailable", why(t.why)},
          {"n", t.n},
          {"df", num_or_null(t.df, t.why)},
          {"slope_log_per_rep", num_or_null(t.slope, t.why)},
          {"se", num_or_null(t.se, t.why)},
          {"ci95_low", num_or_null(t.ci_low, t.why)},
          {"ci95_high", num_or_null(t.ci_high, t.why)}}},
        {"env", {{"unavailable", why(r.env_why)}, {"tested", r.env.size()}, {"correlations", env}}},
        {"diagnosis", r.diagnosis},
    });
  }
  j["env_seen"] = a.env_seen;
  j["env_null"] = a.env_null;
  j["env_constant"] = a.env_constant;
  j["env_window_derived"] = a.env_window_derived;
  return j;
}

}  // namespace cuzk::noise
