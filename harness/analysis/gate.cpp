// `gate`: see gate.hpp and docs/gating.md.
#include "harness/analysis/gate.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <toml++/toml.h>

namespace cuzk {
namespace {

using json = nlohmann::json;

double read_fraction(const toml::node& n, const std::string& what, const std::string& name) {
  std::optional<double> v = n.value<double>();
  if (!v || !std::isfinite(*v) || *v < 0 || *v > 10)
    throw GateError(fmt::format("{}: {} must be a number between 0 and 10 (a fraction: 0.05 = 5%)", name, what));
  return *v;
}

std::vector<std::string> read_strings(const toml::node* n, const std::string& what, const std::string& name) {
  std::vector<std::string> out;
  if (!n) return out;
  const toml::array* arr = n->as_array();
  if (!arr) throw GateError(fmt::format("{}: {} must be an array of strings", name, what));
  for (const auto& e : *arr) {
    auto s = e.value<std::string>();
    if (!s || s->empty()) throw GateError(fmt::format("{}: {} must be an array of non-empty strings", name, what));
    out.push_back(*s);
  }
  return out;
}

std::string case_key(const PhaseComparison& r) { return r.suite + "/" + r.case_name; }

// max_ms / max_share of a [new_phases] table (or of one phase's table inside it).
void read_new_phase_key(NewPhaseLimit& l, const std::string& key, const toml::node& v, const std::string& where,
                        const std::string& name) {
  if (key == "max_ms") {
    std::optional<double> ms = v.value<double>();
    if (!ms || !std::isfinite(*ms) || *ms < 0)
      throw GateError(fmt::format("{}: {} max_ms must be a number of milliseconds >= 0", name, where));
    l.max_ms = *ms;
  } else if (key == "max_share") {
    l.max_share = read_fraction(v, where + " max_share", name);
  } else {
    throw GateError(fmt::format("{}: unknown key '{}' in {} (known: max_ms, max_share, and \"phase\" tables)", name,
                                key, where));
  }
}

// The limit for one new phase: its own table's keys, else [new_phases]' keys.
NewPhaseLimit new_phase_limit(const GateThresholds& t, const std::string& phase) {
  NewPhaseLimit l = t.new_phases;
  if (auto it = t.new_phase_overrides.find(phase); it != t.new_phase_overrides.end()) {
    if (it->second.max_ms) l.max_ms = it->second.max_ms;
    if (it->second.max_share) l.max_share = it->second.max_share;
  }
  return l;
}

// A row only the candidate has, against its limit: the regression line, or "" when within it.
std::string new_phase_regression(const Comparison& c, const PhaseComparison& r, const NewPhaseLimit& l) {
  if (!(r.delta_low > 0)) return "";  // the cost is not significant
  const double cost = r.median_b;
  std::string parent_text, over;
  if (auto slash = r.phase.rfind('/'); slash != std::string::npos) {
    const std::string parent = r.phase.substr(0, slash);
    for (const auto& p : c.rows)
      if (p.primary && p.phase == parent && p.suite == r.suite && p.case_name == r.case_name && p.params == r.params &&
          p.median_b > 0) {
        const double share = cost / p.median_b;
        parent_text = fmt::format(" = {:.1f}% of {}", 100 * share, parent);
        if (l.max_share && share > *l.max_share) over = fmt::format("max_share {:g}%", 100 * *l.max_share);
      }
  }
  if (l.max_ms && cost > *l.max_ms * 1e6)
    over = fmt::format("max_ms {:g} ms", *l.max_ms) + (over.empty() ? "" : " and " + over);
  if (over.empty()) return "";
  return fmt::format("{} {} {}: new in the candidate, costs {:.1f} ms (95% CI [{:.1f}, {:.1f}] ms){}, above {}",
                     case_key(r), r.phase, r.metric, cost / 1e6, r.delta_low / 1e6, r.delta_high / 1e6, parent_text,
                     over);
}

}  // namespace

GateThresholds parse_thresholds(const std::string& text, const std::string& name) {
  toml::table t;
  try {
    t = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw GateError(fmt::format("{}: invalid TOML: {}", name, e.description()));
  }
  GateThresholds g;
  static const std::set<std::string> top = {"default", "phases", "required", "ignore", "new_phases", "counters"};
  for (auto& [k, v] : t)
    if (!top.count(std::string(k.str())))
      throw GateError(fmt::format(
          "{}: unknown table or key '{}' (known: default, phases, required, ignore, new_phases, counters)", name,
          std::string(k.str())));
  const toml::table* def = t["default"].as_table();
  if (!def) throw GateError(name + ": missing [default] table with max_slowdown");
  for (auto& [k, v] : *def) {
    std::string key(k.str());
    if (key == "max_slowdown") g.max_slowdown = read_fraction(v, "[default] max_slowdown", name);
    else if (key == "alpha") {
      g.alpha = read_fraction(v, "[default] alpha", name);
      if (g.alpha <= 0 || g.alpha >= 1) throw GateError(name + ": [default] alpha must be in (0, 1)");
    } else if (key == "min_samples") {
      // The type first: toml++'s value<int64_t>() on a float casts it before its range check
      // (undefined behavior for 2.2e59, found by fuzz_gate), and would take 5.0 for 5.
      if (!v.is_integer())
        throw GateError(fmt::format("{}: [default] min_samples must be an integer >= 2, not a {}", name,
                                    v.is_floating_point() ? "float" : "non-number"));
      const int64_t n = v.as_integer()->get();
      if (n < 2) throw GateError(name + ": [default] min_samples must be an integer >= 2");
      g.min_samples = static_cast<size_t>(n);
    } else if (key == "fail_on_noisy") {
      auto b = v.value<bool>();
      if (!b) throw GateError(name + ": [default] fail_on_noisy must be true or false");
      g.fail_on_noisy = *b;
    } else {
      throw GateError(fmt::format("{}: unknown key '{}' in [default]", name, key));
    }
  }
  if (!def->contains("max_slowdown")) throw GateError(name + ": [default] needs max_slowdown");
  if (auto* ph = t["phases"].as_table()) {
    for (auto& [k, v] : *ph) g.phases[std::string(k.str())] = read_fraction(v, fmt::format("[phases] \"{}\"", std::string(k.str())), name);
  } else if (t.contains("phases")) {
    throw GateError(name + ": [phases] must be a table of \"phase\" = max slowdown");
  }
  if (auto* rq = t["required"].as_table()) {
    for (auto& [k, v] : *rq) {
      std::string key(k.str());
      if (key == "phases") g.required_phases = read_strings(&v, "[required] phases", name);
      else if (key == "cases") g.required_cases = read_strings(&v, "[required] cases", name);
      else throw GateError(fmt::format("{}: unknown key '{}' in [required]", name, key));
    }
  }
  if (auto* ig = t["ignore"].as_table()) {
    for (auto& [k, v] : *ig) {
      std::string key(k.str());
      if (key == "phases") g.ignore_phases = read_strings(&v, "[ignore] phases", name);
      else throw GateError(fmt::format("{}: unknown key '{}' in [ignore]", name, key));
    }
  }
  if (auto* np = t["new_phases"].as_table()) {
    for (auto& [k, v] : *np) {
      const std::string key(k.str());
      if (auto* one = v.as_table()) {
        NewPhaseLimit& l = g.new_phase_overrides[key];
        for (auto& [k2, v2] : *one)
          read_new_phase_key(l, std::string(k2.str()), v2, fmt::format("[new_phases.\"{}\"]", key), name);
        if (!l.any()) throw GateError(fmt::format("{}: [new_phases.\"{}\"] needs max_ms or max_share", name, key));
      } else {
        read_new_phase_key(g.new_phases, key, v, "[new_phases]", name);
      }
    }
  } else if (t.contains("new_phases")) {
    throw GateError(name + ": [new_phases] must be a table (max_ms, max_share)");
  }
  if (auto* cs = t["counters"].as_table()) {
    for (auto& [phase, v] : *cs) {
      const std::string p(phase.str());
      auto* one = v.as_table();
      if (!one || one->empty())
        throw GateError(fmt::format("{}: [counters.\"{}\"] must be a table of \"counter\" = max ratio B/A", name, p));
      for (auto& [counter, lim] : *one) {
        const std::string cn(counter.str());
        const double r = read_fraction(lim, fmt::format("[counters.\"{}\"] \"{}\"", p, cn), name);
        if (r <= 0) throw GateError(fmt::format("{}: [counters.\"{}\"] \"{}\" must be a ratio above 0", name, p, cn));
        g.counter_limits[p][cn] = r;
      }
    }
  } else if (t.contains("counters")) {
    throw GateError(name + ": [counters] must hold one table per phase: [counters.\"proof/synth\"] \"os::minflt\" = 2.0");
  }
  return g;
}

GateThresholds load_thresholds(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw GateError(path + ": cannot open thresholds file");
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
  std::fclose(f);
  return parse_thresholds(text, path);
}

GateResult run_gate(const std::string& baseline, const std::string& candidate, const std::string& thresholds_path,
                    const GateOptions& o) {
  GateResult g;
  g.baseline = baseline;
  g.candidate = candidate;
  g.thresholds_path = thresholds_path;
  auto fail = [&](std::string why) {
    g.errors.push_back(std::move(why));
    g.exit_code = 2;
    g.result = "error";
    return g;
  };
  try {
    g.thresholds = load_thresholds(thresholds_path);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  const GateThresholds& t = *g.thresholds;
  CompareOptions co;
  co.alpha = t.alpha;
  co.noise_threshold = t.max_slowdown;
  co.phase_thresholds = t.phases;
  co.min_samples = t.min_samples;
  co.bootstrap_resamples = o.bootstrap_resamples;
  co.bootstrap_seed = o.bootstrap_seed;
  co.allow_machine_mismatch = o.allow_machine_mismatch;
  co.allow_injected = o.allow_injected;  // refused by compare_files: a gate error (exit 2)
  co.analysis = o.analysis;
  try {
    g.comparison = compare_files(baseline, candidate, co);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  const Comparison& c = *g.comparison;
  for (const auto& w : c.warnings) g.warnings.push_back(w);

  // Same build variant: the flags are what an A/B changes; a gate compares revisions.
  if (c.format_a == "cuzk") {
    json fa = c.provenance_a.value("flags", json::object()), fb = c.provenance_b.value("flags", json::object());
    if (fa != fb) {
      std::string diff;
      std::set<std::string> keys;
      for (auto& [k, v] : fa.items()) keys.insert(k);
      for (auto& [k, v] : fb.items()) keys.insert(k);
      for (const auto& k : keys) {
        json va = fa.value(k, json()), vb = fb.value(k, json());
        if (va != vb) diff += fmt::format("{}{}: {} vs {}", diff.empty() ? "" : ", ", k, va.dump(), vb.dump());
      }
      std::string msg = "baseline and candidate were built with different variant flags (" + diff + ")";
      if (o.allow_variant_mismatch) g.warnings.push_back(msg);
      else g.errors.push_back(msg + " (use --allow-variant-mismatch to gate anyway)");
    }
  } else {
    std::string ba = c.provenance_a.value("library_build_type", ""), bb = c.provenance_b.value("library_build_type", "");
    if (ba != bb) {
      std::string msg = fmt::format("Google Benchmark library build types differ ({} vs {})", ba, bb);
      if (o.allow_variant_mismatch) g.warnings.push_back(msg);
      else g.errors.push_back(msg + " (use --allow-variant-mismatch to gate anyway)");
    }
  }

  for (const auto& k : c.cases_only_a) g.errors.push_back("case " + k + " is in the baseline but not in the candidate");
  for (const auto& k : c.cases_only_b) g.warnings.push_back("case " + k + " is new in the candidate (not gated)");
  if (c.rows.empty()) g.errors.push_back("no phases to compare (no measured samples in common)");

  // Named phases (thresholds and [required]) must exist in both files.
  std::set<std::string> named(t.required_phases.begin(), t.required_phases.end());
  for (auto& [p, v] : t.phases) named.insert(p);
  for (auto& [p, v] : t.counter_limits) named.insert(p);
  for (const auto& p : named) {
    bool in_a = false, in_b = false;
    for (const auto& r : c.rows) {
      if (r.phase != p) continue;
      in_a = in_a || r.missing != "a";
      in_b = in_b || r.missing != "b";
    }
    if (!in_a) g.errors.push_back("phase " + p + " (named in " + thresholds_path + ") is missing in the baseline");
    if (!in_b) g.errors.push_back("phase " + p + " (named in " + thresholds_path + ") is missing in the candidate");
  }
  for (const auto& rc : t.required_cases) {
    bool found = false;
    for (const auto& r : c.rows) found = found || case_key(r) == rc;
    if (!found) g.errors.push_back("required case " + rc + " is not in both files");
  }
  std::set<std::string> ignored(t.ignore_phases.begin(), t.ignore_phases.end());
  for (const auto& r : c.rows) {
    std::string where = fmt::format("{} {} {}", case_key(r), r.phase, r.metric);
    if (r.missing == "b") {
      g.errors.push_back("phase " + where + " is in the baseline but missing in the candidate");
      continue;
    }
    if (r.missing == "a") {
      const NewPhaseLimit l = new_phase_limit(t, r.phase);
      if (ignored.count(r.phase) || !l.any()) {
        g.warnings.push_back(fmt::format("phase {} is new in the candidate, costs {:.1f} ms (not gated{})", where,
                                         r.median_b / 1e6, ignored.count(r.phase) ? ": [ignore]" : "; [new_phases] gates it"));
        continue;
      }
      if (std::string reg = new_phase_regression(c, r, l); !reg.empty()) g.regressions.push_back(reg);
      continue;
    }
    if (ignored.count(r.phase)) continue;
    if (!r.primary) continue;  // shown for reference; the phase's verdict is its primary row's
    if (r.n_a == 0 || r.n_b == 0) {
      g.errors.push_back("phase " + where + " has no samples on one side");
      continue;
    }
    if (r.n_a < t.min_samples || r.n_b < t.min_samples) {
      g.errors.push_back(fmt::format("phase {} has too few samples ({} baseline, {} candidate; min_samples = {})",
                                     where, r.n_a, r.n_b, t.min_samples));
      continue;
    }
    if (auto lim = t.counter_limits.find(r.phase); lim != t.counter_limits.end()) {
      for (const auto& [name, max] : lim->second) {
        // init-capture: clang before 16 (the fuzz preset's clang-14) cannot capture a structured binding
        auto d = std::find_if(r.counters.begin(), r.counters.end(),
                              [&want = name](const CounterDelta& x) { return x.name == want; });
        if (d == r.counters.end() || !d->median_a || !d->median_b) {
          g.errors.push_back(fmt::format("counter {} of {} cannot be gated: {}", name, where,
                                         d == r.counters.end() ? "not recorded" : d->note));
          continue;
        }
        const double ratio = *d->median_a == 0 ? (*d->median_b == 0 ? 1.0 : INFINITY) : *d->median_b / *d->median_a;
        if (ratio > max)
          g.regressions.push_back(fmt::format("{}: counter {} went {:.6g} -> {:.6g} (medians, x{:.3g}), above max ratio {:g}",
                                              where, name, *d->median_a, *d->median_b, ratio, max));
      }
    }
    if (r.verdict == "slower") {
      g.regressions.push_back(fmt::format("{}: {:+.1f}% (B/A {:.3f}, 95% CI [{:.3f}, {:.3f}], p = {:.3g}) exceeds max slowdown {:.1f}%",
                                          where, (r.ratio - 1) * 100, r.ratio, r.ci_low, r.ci_high, r.p_value,
                                          r.threshold * 100));
    } else if (r.verdict == "too noisy") {
      std::string msg = fmt::format("{}: too noisy to tell (B/A {:.3f}, 95% CI [{:.3f}, {:.3f}], p = {:.3g})", where,
                                    r.ratio, r.ci_low, r.ci_high, r.p_value);
      if (t.fail_on_noisy) g.errors.push_back(msg + " and fail_on_noisy is set");
      else g.warnings.push_back(msg);
    }
  }
  if (!g.errors.empty()) {
    g.exit_code = 2;
    g.result = "error";
  } else if (!g.regressions.empty()) {
    g.exit_code = 1;
    g.result = "regression";
  } else {
    g.exit_code = 0;
    g.result = "pass";
  }
  return g;
}

nlohmann::json to_json(const GateResult& g) {
  json j = {{"result", g.result},         {"exit_code", g.exit_code},   {"baseline", g.baseline},
            {"candidate", g.candidate},   {"thresholds_file", g.thresholds_path},
            {"errors", g.errors},         {"regressions", g.regressions}, {"warnings", g.warnings}};
  if (g.thresholds) {
    j["thresholds"] = {{"max_slowdown", g.thresholds->max_slowdown}, {"alpha", g.thresholds->alpha},
                       {"min_samples", g.thresholds->min_samples},   {"fail_on_noisy", g.thresholds->fail_on_noisy},
                       {"phases", g.thresholds->phases},             {"required_phases", g.thresholds->required_phases},
                       {"required_cases", g.thresholds->required_cases}, {"ignore_phases", g.thresholds->ignore_phases}};
    auto limit = [](const NewPhaseLimit& l) {
      return json{{"max_ms", l.max_ms ? json(*l.max_ms) : json(nullptr)},
                  {"max_share", l.max_share ? json(*l.max_share) : json(nullptr)}};
    };
    json overrides = json::object();
    for (const auto& [p, l] : g.thresholds->new_phase_overrides) overrides[p] = limit(l);
    j["thresholds"]["new_phases"] = limit(g.thresholds->new_phases);
    j["thresholds"]["new_phase_overrides"] = overrides;
    j["thresholds"]["counters"] = g.thresholds->counter_limits;
  }
  j["comparison"] = g.comparison ? to_json(*g.comparison) : json(nullptr);
  return j;
}

std::string format_markdown(const GateResult& g) {
  std::string head = g.result == "pass" ? "PASS" : (g.result == "regression" ? "REGRESSION" : "ERROR");
  std::string out = fmt::format("## cuzk gate: {}\n\nbaseline `{}`, candidate `{}`, thresholds `{}` (exit {})\n\n", head,
                                g.baseline, g.candidate, g.thresholds_path, g.exit_code);
  if (!g.errors.empty()) {
    out += "### Errors (the gate fails closed)\n\n";
    for (const auto& e : g.errors) out += "- " + e + "\n";
    out += "\n";
  }
  if (!g.regressions.empty()) {
    out += "### Regressions\n\n";
    for (const auto& e : g.regressions) out += "- " + e + "\n";
    out += "\n";
  }
  if (!g.warnings.empty()) {
    out += "### Warnings\n\n";
    for (const auto& e : g.warnings) out += "- " + e + "\n";
    out += "\n";
  }
  if (g.comparison) out += "### Comparison\n\n" + format_markdown(*g.comparison);
  return out;
}

}  // namespace cuzk
