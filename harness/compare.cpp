// `compare`: phase-by-phase comparison of two results files (docs/compare.md).
#include "harness/compare.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/gbench.hpp"
#include "harness/machine.hpp"
#include "harness/results.hpp"
#include "harness/stats.hpp"

namespace cuzk {
namespace {

using json = nlohmann::json;

struct PhaseData {
  std::vector<double> wall, gpu;
  size_t gpu_null = 0;
  std::map<std::string, std::vector<double>> counters;       // non-null values
  std::map<std::string, std::string> counter_null_reason;    // last reason seen for a null
};

struct CaseData {
  std::string suite, case_name, params;
  size_t samples = 0;
  std::map<std::string, PhaseData> phases;
};

struct Side {
  std::string path, format;
  json provenance = json::object(), machine = json::object();
  std::string identity;
  std::map<std::string, CaseData> cases;  // key: suite \x1f case \x1f params
  size_t warmups_skipped = 0;
};

std::string key_of(const std::string& s, const std::string& c, const std::string& p) {
  return s + '\x1f' + c + '\x1f' + p;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw CompareError(fmt::format("{}: cannot open file", path));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

double to_ns(double v, const std::string& unit) {
  if (unit == "ns" || unit.empty()) return v;
  if (unit == "us") return v * 1e3;
  if (unit == "ms") return v * 1e6;
  if (unit == "s") return v * 1e9;
  throw CompareError("unknown Google Benchmark time_unit '" + unit + "'");
}

Side load_gbench(const std::string& path, const json& doc) {
  Side s;
  s.path = path;
  s.format = "gbench";
  const json ctx = doc.value("context", json::object());
  s.machine = {{"host_name", ctx.value("host_name", "")},
               {"num_cpus", ctx.value("num_cpus", 0)},
               {"mhz_per_cpu", ctx.value("mhz_per_cpu", 0)}};
  s.provenance = {{"executable", ctx.value("executable", "")},
                  {"library_build_type", ctx.value("library_build_type", "")}};
  s.identity = fmt::format("host {}, {} CPUs, {} MHz", s.machine["host_name"].get<std::string>(),
                           s.machine["num_cpus"].dump(), s.machine["mhz_per_cpu"].dump());
  if (!doc["benchmarks"].is_array()) throw CompareError(path + ": 'benchmarks' is not an array");
  // The case is the benchmark executable's name, so two builds of bench_ff match.
  std::string exe = ctx.value("executable", "");
  if (auto slash = exe.find_last_of('/'); slash != std::string::npos) exe = exe.substr(slash + 1);
  if (exe.empty()) exe = "benchmarks";
  CaseData& c = s.cases[key_of("gbench", exe, "{}")];
  c.suite = "gbench";
  c.case_name = exe;
  c.params = "{}";
  for (const auto& b : doc["benchmarks"]) {
    if (!b.is_object()) continue;
    std::string rt = b.value("run_type", "iteration");
    if (rt != "iteration") continue;
    if (b.contains("error_occurred") && b["error_occurred"].is_boolean() && b["error_occurred"].get<bool>())
      continue;
    std::string name = b.value("run_name", b.value("name", ""));
    if (name.empty() || !b.contains("real_time") || !b["real_time"].is_number())
      throw CompareError(path + ": benchmark entry without name or real_time");
    c.phases[name].wall.push_back(to_ns(b["real_time"].get<double>(), b.value("time_unit", "ns")));
    ++c.samples;
  }
  return s;
}

Side load_cuzk(const std::string& path, const std::string& text, const CompareOptions& o) {
  ResultsFile rf;
  try {
    rf = parse_results(text, path);
  } catch (const std::exception& e) {
    throw CompareError(e.what());
  }
  Side s;
  s.path = path;
  s.format = "cuzk";
  s.provenance = rf.header.value.value("provenance", json::object());
  s.machine = rf.header.value.value("machine", json::object());
  s.identity = machine_identity(s.machine);
  for (const auto& line : rf.samples) {
    const json& v = line.value;
    if (v.value("warmup", false) && !o.include_warmup) {
      ++s.warmups_skipped;
      continue;
    }
    std::string suite = v.value("suite", ""), cname = v.value("case", "");
    std::string params = v.value("parameters", json::object()).dump();
    CaseData& c = s.cases[key_of(suite, cname, params)];
    c.suite = suite;
    c.case_name = cname;
    c.params = params;
    ++c.samples;
    for (auto& [phase, rec] : v["phases"].items()) {
      PhaseData& pd = c.phases[phase];
      pd.wall.push_back(rec["wall_ns"].get<double>());
      if (rec.contains("gpu_ns") && rec["gpu_ns"].is_number())
        pd.gpu.push_back(rec["gpu_ns"].get<double>());
      else
        ++pd.gpu_null;
      if (rec.contains("counters") && rec["counters"].is_object()) {
        for (auto& [cn, cv] : rec["counters"].items()) {
          auto& vec = pd.counters[cn];  // creates the entry even when null
          if (cv.is_number()) {
            vec.push_back(cv.get<double>());
          } else {
            std::string why = "null";
            if (rec.contains("counter_errors") && rec["counter_errors"].contains(cn) &&
                rec["counter_errors"][cn].is_string())
              why = rec["counter_errors"][cn].get<std::string>();
            pd.counter_null_reason[cn] = why;
          }
        }
      }
    }
  }
  return s;
}

Side load_side(const std::string& path, const CompareOptions& o) {
  std::string text = read_text(path);
  // Google Benchmark output is one JSON document (with NaN where a statistic is undefined);
  // a cuzk results file is JSON Lines, which does not parse as one document.
  json doc = json::parse(gbench_json_nonfinite_to_null(text), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded() && doc.is_object() && doc.contains("benchmarks")) return load_gbench(path, doc);
  return load_cuzk(path, text, o);
}

std::string pct(double r) {
  double d = (r - 1.0) * 100.0;
  return fmt::format("{}{:.1f}%", d >= 0 ? "+" : "", d);
}

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
  if (*d.median_a == 0) {
    d.note = *d.median_b == 0 ? "=" : fmt::format("0 -> {:.0f}", *d.median_b);
    return d;
  }
  d.ratio = *d.median_b / *d.median_a;
  if (*d.ratio >= 2.0 || *d.ratio <= 0.5)
    d.note = fmt::format("x{:.2g}", *d.ratio);
  else
    d.note = pct(*d.ratio);
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
  auto mw = mann_whitney_u(a, b);
  r.p_value = mw.p_value;
  r.exact_test = mw.exact;
  if (r.n_a < o.min_samples || r.n_b < o.min_samples)
    r.warnings.push_back(fmt::format("too few samples ({} A, {} B; at least {} per side wanted)", r.n_a,
                                     r.n_b, o.min_samples));
  if (min_exact_p(r.n_a, r.n_b) >= o.alpha)
    r.warnings.push_back(fmt::format("with {} and {} samples no p-value can fall below alpha {}", r.n_a,
                                     r.n_b, o.alpha));
  if (r.n_a < 2 || r.n_b < 2 || std::isnan(r.ci_low))
    r.verdict = "too noisy";
  else
    r.verdict = compare_verdict(r.p_value, r.ratio, r.ci_low, r.ci_high, o.alpha, r.threshold);
}

std::string fmt_ns(double ns) {
  double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{:.1f} ns", ns);
}

std::string rel(double spread, double med) {
  if (med == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * spread / std::fabs(med));
}

std::string case_label(const PhaseComparison& r) {
  std::string s = r.suite + "/" + r.case_name;
  if (r.params != "{}" && !r.params.empty()) s += " " + r.params;
  return s;
}

std::string counters_text(const PhaseComparison& r) {
  std::string s;
  for (const auto& c : r.counters) s += (s.empty() ? "" : ", ") + c.name + " " + c.note;
  return s;
}

std::vector<std::string> row_cells(const PhaseComparison& r) {
  if (!r.missing.empty())
    return {case_label(r), r.phase, r.metric, r.missing == "a" ? "0/-" : "-/0", "-", "-", "-", "-", "-", "-",
            r.missing == "a" ? "missing in A" : "missing in B", ""};
  return {case_label(r),
          r.phase,
          r.metric == "wall_ns" ? "wall" : (r.metric == "gpu_ns" ? "gpu" : r.metric),
          fmt::format("{}/{}", r.n_a, r.n_b),
          fmt_ns(r.median_a),
          fmt_ns(r.median_b),
          rel(r.mad_a, r.median_a) + "/" + rel(r.iqr_a, r.median_a),
          rel(r.mad_b, r.median_b) + "/" + rel(r.iqr_b, r.median_b),
          fmt::format("{:.3f} [{:.3f}, {:.3f}]", r.ratio, r.ci_low, r.ci_high),
          fmt::format("{:.3g}{}", r.p_value, r.exact_test ? "" : "*"),
          r.verdict + (r.verdict == "faster" || r.verdict == "slower" ? " " + pct(r.ratio) : ""),
          counters_text(r)};
}

const std::vector<std::string> kHeaders = {"case", "phase", "metric", "n A/B", "median A", "median B",
                                           "MAD/IQR A", "MAD/IQR B", "B/A [95% CI]", "p", "verdict",
                                           "counters (B vs A)"};

}  // namespace

std::string compare_verdict(double p, double ratio, double lo, double hi, double alpha, double t) {
  bool significant = p < alpha;
  bool beyond = std::fabs(ratio - 1.0) > t;
  if (significant && beyond) return ratio > 1.0 ? "slower" : "faster";
  if (significant) return "unchanged";
  // Not significant: "unchanged" only if the CI rules out a change beyond the threshold.
  if (lo < 1.0 - t || hi > 1.0 + t) return "too noisy";
  return "unchanged";
}

Comparison compare_files(const std::string& pa, const std::string& pb, const CompareOptions& o) {
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
        r.missing = pa_it == ca.phases.end() ? "a" : "b";
        r.verdict = "missing";
        r.warnings.push_back(fmt::format("phase {} is missing in {}", ph, r.missing == "a" ? "A" : "B"));
        if (pa_it != ca.phases.end()) r.n_a = pa_it->second.wall.size();
        if (pb_it != cb.phases.end()) r.n_b = pb_it->second.wall.size();
        c.rows.push_back(r);
        continue;
      }
      const PhaseData &da = pa_it->second, &db = pb_it->second;
      fill_stats(r, da.wall, db.wall, o);
      if (da.gpu.size() + db.gpu.size() > 0 && (da.gpu_null > 0 || db.gpu_null > 0))
        r.warnings.push_back(fmt::format("gpu_ns is null in {} A and {} B samples", da.gpu_null, db.gpu_null));
      std::set<std::string> cnames;
      for (auto& [n, v] : da.counters) cnames.insert(n);
      for (auto& [n, v] : db.counters) cnames.insert(n);
      for (const auto& n : cnames) r.counters.push_back(counter_delta(n, &da, &db));
      c.rows.push_back(r);
      if (!da.gpu.empty() && !db.gpu.empty()) {
        PhaseComparison g = r;
        g.metric = "gpu_ns";
        g.warnings.clear();
        g.counters.clear();
        fill_stats(g, da.gpu, db.gpu, o);
        c.rows.push_back(g);
      } else if (!da.gpu.empty() || !db.gpu.empty()) {
        c.rows.back().warnings.push_back(
            fmt::format("GPU time only in {}: not compared", da.gpu.empty() ? "B" : "A"));
      }
    }
  }
  if (a.cases.empty()) c.warnings.push_back("A has no measured samples");
  if (b.cases.empty()) c.warnings.push_back("B has no measured samples");
  return c;
}

std::string format_table(const Comparison& c) {
  // The case is printed once, as a line above its rows; the columns start at "phase".
  std::vector<std::string> headers(kHeaders.begin() + 1, kHeaders.end());
  std::vector<std::vector<std::string>> rows{headers};
  std::vector<std::string> group_line{""};
  std::string last_case;
  for (const auto& r : c.rows) {
    auto cells = row_cells(r);
    std::string label = cells[0];
    cells.erase(cells.begin());
    rows.push_back(cells);
    group_line.push_back(label != last_case ? label : "");
    last_case = label;
  }
  std::vector<size_t> w(headers.size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  std::string out = fmt::format("A: {}\nB: {}\n\n", c.path_a, c.path_b);
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    if (!group_line[ri].empty()) out += (ri > 1 ? "\n" : "") + group_line[ri] + "\n";
    std::string line;
    for (size_t i = 0; i < rows[ri].size(); ++i) {
      bool last = i + 1 == rows[ri].size();
      line += last ? rows[ri][i] : fmt::format("{:<{}}  ", rows[ri][i], w[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (ri == 0) {
      size_t total = headers.back().size();
      for (size_t i = 0; i + 1 < w.size(); ++i) total += w[i] + 2;
      out += std::string(total, '-') + "\n";
    }
  }
  out += "\np: two-sided Mann-Whitney U (* = normal approximation); CI: bootstrap of the ratio of medians\n";
  // One line per distinct warning: with few samples every row carries the same ones.
  std::vector<std::pair<std::string, std::vector<std::string>>> grouped;
  for (const auto& r : c.rows)
    for (const auto& wn : r.warnings) {
      auto it = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == wn; });
      if (it == grouped.end()) it = grouped.insert(grouped.end(), {wn, {}});
      it->second.push_back(fmt::format("{} {} {}", case_label(r), r.phase, r.metric));
    }
  for (const auto& [wn, where] : grouped) {
    if (where.size() == 1)
      out += fmt::format("warning: {}: {}\n", where[0], wn);
    else
      out += fmt::format("warning: {} ({} rows, e.g. {})\n", wn, where.size(), where[0]);
  }
  for (const auto& wn : c.warnings) out += "warning: " + wn + "\n";
  return out;
}

std::string format_markdown(const Comparison& c) {
  auto esc = [](std::string s) {
    std::string o;
    for (char ch : s) {
      if (ch == '|') o += "\\|";
      else o += ch;
    }
    return o;
  };
  std::string out = fmt::format("**A**: `{}`  \n**B**: `{}`\n\n|", c.path_a, c.path_b);
  for (const auto& h : kHeaders) out += " " + h + " |";
  out += "\n|";
  for (size_t i = 0; i < kHeaders.size(); ++i) out += " --- |";
  out += "\n";
  for (const auto& r : c.rows) {
    auto cells = row_cells(r);
    if (r.verdict == "slower" || r.verdict == "faster") cells[10] = fmt::format("**{}**", cells[10]);
    out += "|";
    for (const auto& cell : cells) out += fmt::format(" {} |", esc(cell));
    out += "\n";
  }
  out += "\np: two-sided Mann-Whitney U (* = normal approximation); CI: 95% bootstrap of the ratio of medians.\n";
  std::string warn;
  for (const auto& r : c.rows)
    for (const auto& wn : r.warnings) warn += fmt::format("- {} `{}` {}: {}\n", esc(case_label(r)), r.phase, r.metric, wn);
  for (const auto& wn : c.warnings) warn += "- " + wn + "\n";
  if (!warn.empty()) out += "\n**Warnings**\n\n" + warn;
  return out;
}

nlohmann::json to_json(const Comparison& c) {
  json rows = json::array();
  auto num = [](double v) -> json { return std::isfinite(v) ? json(v) : json(nullptr); };
  for (const auto& r : c.rows) {
    json counters = json::array();
    for (const auto& d : r.counters)
      counters.push_back({{"name", d.name},
                          {"median_a", d.median_a ? json(*d.median_a) : json(nullptr)},
                          {"median_b", d.median_b ? json(*d.median_b) : json(nullptr)},
                          {"ratio", d.ratio ? json(*d.ratio) : json(nullptr)},
                          {"note", d.note}});
    rows.push_back({{"suite", r.suite}, {"case", r.case_name}, {"parameters", r.params},
                    {"phase", r.phase}, {"metric", r.metric}, {"n_a", r.n_a}, {"n_b", r.n_b},
                    {"median_a", num(r.median_a)}, {"median_b", num(r.median_b)},
                    {"mad_a", num(r.mad_a)}, {"mad_b", num(r.mad_b)}, {"iqr_a", num(r.iqr_a)},
                    {"iqr_b", num(r.iqr_b)}, {"ratio", num(r.ratio)}, {"ci_low", num(r.ci_low)},
                    {"ci_high", num(r.ci_high)}, {"p_value", num(r.p_value)},
                    {"exact_test", r.exact_test}, {"threshold", r.threshold}, {"verdict", r.verdict},
                    {"missing", r.missing}, {"counters", counters}, {"warnings", r.warnings}});
  }
  return {{"a", {{"path", c.path_a}, {"format", c.format_a}, {"provenance", c.provenance_a}, {"machine", c.machine_a}}},
          {"b", {{"path", c.path_b}, {"format", c.format_b}, {"provenance", c.provenance_b}, {"machine", c.machine_b}}},
          {"rows", rows},
          {"cases_only_a", c.cases_only_a},
          {"cases_only_b", c.cases_only_b},
          {"warnings", c.warnings}};
}

}  // namespace cuzk
