// `gate`: see gate.hpp and docs/gating.md.
#include "harness/analysis/gate.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <toml++/toml.h>

#include "harness/analysis/load_rows.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/output/printers.hpp"
#include "harness/measure/clock.hpp"
#include "prover/interop/input_file.hpp"
#include "prover/interop/input_limits.hpp"

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

// An integer >= least. The type first: toml++'s value<int64_t>() on a float casts it before its
// range check (undefined behavior for 2.2e59, found by fuzz_gate), and would take 5.0 for 5.
size_t read_count(const toml::node& v, const std::string& what, int64_t least, const std::string& name) {
  if (!v.is_integer())
    throw GateError(fmt::format("{}: {} must be an integer >= {}, not a {}", name, what, least,
                                v.is_floating_point() ? "float" : "non-number"));
  const int64_t n = v.as_integer()->get();
  if (n < least) throw GateError(fmt::format("{}: {} must be an integer >= {}", name, what, least));
  return static_cast<size_t>(n);
}

// [tails."phase"]: quantile keys ("p99") = max growth of that quantile.
void read_tails(const toml::table& tails, GateThresholds& g, const std::string& name) {
  const std::string example = "[tails.\"request\"] p99 = 0.25";
  if (tails.empty())
    throw GateError(fmt::format("{}: [tails] is empty: it holds one table per phase, {}", name, example));
  for (auto& [phase, v] : tails) {
    const std::string p(phase.str());
    const toml::table* one = v.as_table();
    if (!one)
      throw GateError(fmt::format("{}: [tails] holds one table per phase, {}; '{}' is not a table", name, example, p));
    if (p.empty()) throw GateError(name + ": [tails] names an empty phase");
    if (one->empty())
      throw GateError(fmt::format("{}: [tails.\"{}\"] is empty: give a quantile's max growth, p99 = 0.25", name, p));
    for (auto& [key, lim] : *one) {
      const std::string k(key.str());
      const std::optional<double> q = metric_quantile(k);
      if (!q)
        throw GateError(fmt::format("{}: unknown key '{}' in [tails.\"{}\"] (known: a quantile, \"p\" and a percent "
                                    "strictly between 0 and 100: p50, p90, p99, p99.9)",
                                    name, k, p));
      const std::string metric = quantile_metric(*q);
      if (g.tails[p].count(metric))
        throw GateError(fmt::format("{}: [tails.\"{}\"] names the {} twice ('{}'): say it once", name, p, metric, k));
      g.tails[p][metric] = read_fraction(lim, fmt::format("[tails.\"{}\"] {}", p, k), name);
    }
  }
}

// [throughput]: max_drop (required) and min_rounds.
// [kernels."phase"]: "kernel" or idle = a ratio B/A above 0 (not a fraction: 1.10 allows 10%).
void read_kernel_limits(const toml::table& kernels, GateThresholds& g, const std::string& name) {
  const char* example = "[kernels.\"proof/prove/msm_h\"] \"sum_runs<...>\" = 1.10";
  if (kernels.empty()) throw GateError(fmt::format("{}: [kernels] is empty: it holds one table per phase, {}", name, example));
  for (auto& [phase, v] : kernels) {
    const std::string p(phase.str());
    const toml::table* one = v.as_table();
    if (!one) throw GateError(fmt::format("{}: [kernels] holds one table per phase, {}; '{}' is not a table", name, example, p));
    if (p.empty()) throw GateError(name + ": [kernels] names an empty phase");
    if (one->empty())
      throw GateError(fmt::format("{}: [kernels.\"{}\"] is empty: give a kernel's max ratio B/A, or idle", name, p));
    for (auto& [key, lim] : *one) {
      const std::string k(key.str());
      const std::optional<double> r = lim.value<double>();
      if (!r || !std::isfinite(*r) || *r <= 0)
        throw GateError(fmt::format("{}: [kernels.\"{}\"] \"{}\" must be a finite ratio B/A above 0 (1.10 allows 10% more)",
                                    name, p, k));
      g.kernel_limits[p][k] = *r;
    }
  }
}

ThroughputLimit read_throughput(const toml::table& tp, const std::string& name) {
  ThroughputLimit l;
  for (auto& [k, v] : tp) {
    const std::string key(k.str());
    if (key == "max_drop") {
      const std::optional<double> d = v.value<double>();
      if (!d || !std::isfinite(*d) || *d < 0 || *d >= 1)
        throw GateError(fmt::format("{}: [throughput] max_drop must be a fraction in [0, 1) (0.10: a step's throughput "
                                    "may fall 10%)",
                                    name));
      l.max_drop = *d;
    } else if (key == "min_rounds") {
      l.min_rounds = read_count(v, "[throughput] min_rounds", 2, name);
    } else {
      throw GateError(fmt::format("{}: unknown key '{}' in [throughput] (known: max_drop, min_rounds)", name, key));
    }
  }
  if (!tp.contains("max_drop")) throw GateError(name + ": [throughput] needs max_drop");
  return l;
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
      if (p.primary && p.kind == "phase" && p.phase == parent && p.suite == r.suite && p.case_name == r.case_name &&
          p.params == r.params && p.median_b > 0) {
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
  static const std::set<std::string> top = {"default",  "phases", "required",   "ignore", "policy", "new_phases",
                                            "counters", "tails",  "throughput", "kernels"};
  for (auto& [k, v] : t)
    if (!top.count(std::string(k.str())))
      throw GateError(fmt::format("{}: unknown table or key '{}' (known: default, phases, required, ignore, policy, "
                                  "new_phases, counters, tails, throughput, kernels)",
                                  name, std::string(k.str())));
  auto read_policy = [&](const toml::node& v, const std::string& where) {
    auto p = v.value<std::string>();
    if (!p || (*p != "fail" && *p != "warn" && *p != "ignore"))
      throw GateError(fmt::format("{}: {} must be \"fail\", \"warn\" or \"ignore\"{}", name, where,
                                  p ? fmt::format(" (got \"{}\")", *p) : std::string(" (a string)")));
    return *p;
  };
  const toml::table* def = t["default"].as_table();
  if (!def) throw GateError(name + ": missing [default] table with max_slowdown");
  for (auto& [k, v] : *def) {
    std::string key(k.str());
    if (key == "max_slowdown") g.max_slowdown = read_fraction(v, "[default] max_slowdown", name);
    else if (key == "alpha") {
      g.alpha = read_fraction(v, "[default] alpha", name);
      if (g.alpha <= 0 || g.alpha >= 1) throw GateError(name + ": [default] alpha must be in (0, 1)");
    } else if (key == "min_samples") {
      g.min_samples = read_count(v, "[default] min_samples", 2, name);
    } else if (key == "multiple") {
      auto m = v.value<std::string>();
      if (!m || (*m != "hierarchy" && *m != "holm" && *m != "none"))
        throw GateError(fmt::format("{}: [default] multiple must be \"hierarchy\", \"holm\" or \"none\"{}", name,
                                    m ? fmt::format(" (got \"{}\")", *m) : std::string(" (a string)")));
      g.multiple = *m;
    } else if (key == "policy") {
      g.default_policy = read_policy(v, "[default] policy");
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
  if (auto* pol = t["policy"].as_table()) {
    for (auto& [k, v] : *pol) {
      const std::string phase(k.str());
      if (phase.empty()) throw GateError(name + ": [policy] names an empty phase");
      g.policies[phase] = read_policy(v, fmt::format("[policy] \"{}\"", phase));
    }
  } else if (t.contains("policy")) {
    throw GateError(name + ": [policy] must be a table of \"phase\" = \"fail\" | \"warn\" | \"ignore\"");
  }
  for (const auto& p : g.ignore_phases) {
    auto it = g.policies.find(p);
    if (it != g.policies.end() && it->second != "ignore")
      throw GateError(fmt::format("{}: phase \"{}\" is in [ignore] phases and has [policy] \"{}\": say it once", name,
                                  p, it->second));
    g.policies[p] = "ignore";
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
  if (auto* tl = t["tails"].as_table())
    read_tails(*tl, g, name);
  else if (t.contains("tails"))
    throw GateError(name + ": [tails] must hold one table per phase: [tails.\"request\"] p99 = 0.25");
  if (auto* tp = t["throughput"].as_table()) g.throughput = read_throughput(*tp, name);
  else if (t.contains("throughput")) throw GateError(name + ": [throughput] must be a table (max_drop, min_rounds)");
  if (auto* ks = t["kernels"].as_table())
    read_kernel_limits(*ks, g, name);
  else if (t.contains("kernels"))
    throw GateError(name + ": [kernels] must hold one table per phase: [kernels.\"proof/prove/msm_h\"] \"sum_runs<...>\" = 1.10");
  return g;
}

GateThresholds load_thresholds(const std::string& path) {
  InputFile in(path, throw_as<GateError>);
  return parse_thresholds(in.read_all(limits::kMaxTomlBytes, "a thresholds file"), path);
}

std::string policy_of(const GateThresholds& t, const std::string& phase) {
  if (auto it = t.policies.find(phase); it != t.policies.end()) return it->second;
  // "path/*" covers every phase below path; the nearest such ancestor decides.
  for (std::string path = phase;;) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) break;
    path.resize(slash);
    if (auto it = t.policies.find(path + "/*"); it != t.policies.end()) return it->second;
  }
  return t.default_policy;
}

std::vector<double> holm_adjusted(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  for (size_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
  std::vector<double> adj(m);
  double running = 0;
  for (size_t k = 0; k < m; ++k) {
    // The running maximum keeps the adjusted values in the order of the raw ones: Holm stops at
    // the first phase it cannot reject, so no later phase may look more significant.
    running = std::max(running, std::min(1.0, static_cast<double>(m - k) * p[order[k]]));
    adj[order[k]] = running;
  }
  return adj;
}

// Named, so that these helpers cannot meet another file's in a unity build.
namespace gate_detail {
namespace {

std::string where_of(const PhaseComparison& r) { return fmt::format("{} {} {}", case_key(r), r.phase, r.metric); }

std::string where_of(const GateAlarm& a) {
  std::string w = fmt::format("{}/{} {} {}", a.suite, a.case_name, a.phase, a.metric);
  return a.kind == "counter" ? w + " counter " + a.counter : w;
}

// Smallest two-sided p-value the exact U test can give with these sizes: 2 / C(m+n, m).
double smallest_u_p(size_t m, size_t n) {
  double c = 1;
  for (size_t i = 1; i <= m; ++i) c = c * static_cast<double>(n + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / c);
}

// Observations per side (equal sides) at which the exact U test can reach p < level.
size_t u_observations_for(double level) {
  size_t n = 2;
  while (n < 64 && smallest_u_p(n, n) >= level) ++n;
  return n;
}

// Different build variants are what an A/B changes; a gate compares revisions of one variant.
void check_variants(const Comparison& c, const GateOptions& o, const std::string& which, GateResult& g) {
  if (c.format_a == "cuzk") {
    json fa = c.provenance_a.value("flags", json::object()), fb = c.provenance_b.value("flags", json::object());
    if (fa == fb) return;
    std::string diff;
    std::set<std::string> keys;
    for (auto& [k, v] : fa.items()) keys.insert(k);
    for (auto& [k, v] : fb.items()) keys.insert(k);
    for (const auto& k : keys) {
      json va = fa.value(k, json()), vb = fb.value(k, json());
      if (va != vb) diff += fmt::format("{}{}: {} vs {}", diff.empty() ? "" : ", ", k, va.dump(), vb.dump());
    }
    std::string msg = which + "baseline and candidate were built with different variant flags (" + diff + ")";
    if (o.allow_variant_mismatch) g.warnings.push_back(msg);
    else g.errors.push_back(msg + " (use --allow-variant-mismatch to gate anyway)");
  } else {
    std::string ba = c.provenance_a.value("library_build_type", ""), bb = c.provenance_b.value("library_build_type", "");
    if (ba == bb) return;
    std::string msg = fmt::format("{}Google Benchmark library build types differ ({} vs {})", which, ba, bb);
    if (o.allow_variant_mismatch) g.warnings.push_back(msg);
    else g.errors.push_back(msg + " (use --allow-variant-mismatch to gate anyway)");
  }
}

std::optional<double> counter_ratio(const PhaseComparison& r, const std::string& name, std::string& why) {
  // init-capture: clang before 16 (the fuzz preset's clang-14) cannot capture a structured binding
  auto d = std::find_if(r.counters.begin(), r.counters.end(), [&want = name](const CounterDelta& x) { return x.name == want; });
  if (d == r.counters.end() || !d->median_a || !d->median_b) {
    why = d == r.counters.end() ? "not recorded" : d->note;
    return std::nullopt;
  }
  return *d->median_a == 0 ? (*d->median_b == 0 ? 1.0 : INFINITY) : *d->median_b / *d->median_a;
}

const CounterDelta* find_counter(const PhaseComparison& r, const std::string& name) {
  for (const auto& d : r.counters)
    if (d.name == name) return &d;
  return nullptr;
}

// Applies the procedure to the gated rows: fills adjusted_p, family and family_size, and
// returns whether each row can reach an adjusted p below alpha at its sample sizes (as far as
// the exact U test tells: rows of other designs count as reachable).
std::vector<bool> adjust(const std::vector<const PhaseComparison*>& rows, std::vector<GatedPhase>& out,
                         const GateThresholds& t) {
  const size_t m = rows.size();
  std::vector<int> parent(m, -1);
  if (t.multiple == "hierarchy") {
    // A row's parent is its nearest ancestor path that is itself gated in the same case, so an
    // ignored phase passes its children up to its own parent. A load case's tail and throughput
    // rows are roots: a tail can grow under an unchanged median, so it must not wait for its
    // phase's row to change.
    std::map<std::string, size_t> by_key;
    for (size_t i = 0; i < m; ++i)
      if (rows[i]->kind == "phase") by_key[case_key(*rows[i]) + '\x1f' + rows[i]->params + '\x1f' + rows[i]->phase] = i;
    for (size_t i = 0; i < m; ++i) {
      if (rows[i]->kind != "phase") continue;
      std::string path = rows[i]->phase;
      for (auto slash = path.rfind('/'); slash != std::string::npos && slash > 0; slash = path.rfind('/')) {
        path.resize(slash);
        auto it = by_key.find(case_key(*rows[i]) + '\x1f' + rows[i]->params + '\x1f' + path);
        if (it != by_key.end()) {
          parent[i] = static_cast<int>(it->second);
          break;
        }
      }
    }
  }
  // Families: the key is the parent's index (-1: every root of every case, or everything for holm).
  std::map<int, std::vector<size_t>> families;
  for (size_t i = 0; i < m; ++i) families[t.multiple == "none" ? static_cast<int>(i) : parent[i]].push_back(i);
  std::vector<double> holm(m, 1.0);
  for (const auto& [key, members] : families) {
    std::vector<double> p;
    for (size_t i : members) p.push_back(rows[i]->p_value);
    std::vector<double> a = holm_adjusted(p);
    for (size_t k = 0; k < members.size(); ++k) {
      const size_t i = members[k];
      holm[i] = a[k];
      out[i].family_size = members.size();
      out[i].family = t.multiple == "none" ? "self" : t.multiple == "holm" ? "all" : key < 0 ? "roots" : rows[key]->phase;
    }
  }
  // A child is rejected only when its parent is: its adjusted p is the larger of its own Holm
  // value and its parent's adjusted p. Parents have shorter paths, so they are settled first.
  std::vector<size_t> by_depth(m);
  for (size_t i = 0; i < m; ++i) by_depth[i] = i;
  std::stable_sort(by_depth.begin(), by_depth.end(),
                   [&](size_t x, size_t y) { return rows[x]->phase.size() < rows[y]->phase.size(); });
  std::vector<bool> reachable(m, true);
  for (size_t i : by_depth) {
    out[i].adjusted_p = parent[i] < 0 ? holm[i] : std::max(holm[i], out[static_cast<size_t>(parent[i])].adjusted_p);
    const PhaseComparison& r = *rows[i];
    const bool u_test = r.unit == "samples" || r.unit == "processes";
    reachable[i] = (!u_test || static_cast<double>(out[i].family_size) * smallest_u_p(r.observations_a, r.observations_b) < t.alpha) &&
                   (parent[i] < 0 || reachable[static_cast<size_t>(parent[i])]);
  }
  return reachable;
}

std::string family_text(const GatedPhase& p, const std::string& method) {
  if (method == "none") return "no adjustment";
  if (method == "holm") return fmt::format("Holm over {} phases", p.family_size);
  if (p.family == "roots") return fmt::format("hierarchy: {} root phase{}", p.family_size, p.family_size == 1 ? "" : "s");
  return fmt::format("hierarchy: {} phase{} under {}", p.family_size, p.family_size == 1 ? "" : "s", p.family);
}

// "(B/A 1.102, 99.6% CI for 13 phases [1.05, 1.15]": the family-widened CI where compare made
// one (a row whose raw verdict is a change), else the 95% CI.
std::string ratio_text(const PhaseComparison& r, const std::string& method) {
  if (method != "none" && !std::isnan(r.family_low) && !std::isnan(r.family_high) && r.family > 1)
    return fmt::format("B/A {:.3f}, {:.4g}% CI for the case's {} phases [{:.3f}, {:.3f}]", r.ratio,
                       100 * (1 - (1 - CompareOptions{}.ci_level) / static_cast<double>(r.family)), r.family,
                       r.family_low, r.family_high);
  return fmt::format("B/A {:.3f}, 95% CI [{:.3f}, {:.3f}]", r.ratio, r.ci_low, r.ci_high);
}

// The regression line of a load case's tail or throughput row: which quantile or the throughput,
// both sides' values, the change and its CI, the test, the limit passed.
std::string load_regression_text(const PhaseComparison& r, const GatedPhase& p, const GateThresholds& t) {
  const std::string test =
      fmt::format("p = {:.3g}, adjusted p = {:.3g} ({})", r.p_value, p.adjusted_p, family_text(p, t.multiple));
  const std::string ci = fmt::format("95% CI [{:.2f}, {:.2f}]", r.ci_low, r.ci_high);
  if (r.kind == "throughput")
    return fmt::format("{} throughput: {} -> {} proofs/s ({:+.1f}%; time between completions B/A {:.3f}, {}), {}, "
                       "exceeds max drop {:g}%",
                       case_key(r), output::sig3(r.median_a), output::sig3(r.median_b),
                       r.median_a > 0 ? 100 * (r.median_b / r.median_a - 1) : 0.0,
                       r.ratio, ci, test, t.throughput ? 100 * t.throughput->max_drop : 0.0);
  return fmt::format("{} {} {}: {} -> {} ({:+.1f}%, B/A {}), {}, exceeds max growth {:g}%", case_key(r), r.phase,
                     r.metric, fmt_ns(r.median_a), fmt_ns(r.median_b), 100 * (r.ratio - 1), ci, test, 100 * r.threshold);
}

// The load cases (suite "load") against [tails] and [throughput]: a tail phase they name must be
// in every load case of both files, and a gated throughput needs its row in each.
void check_load_cases(const Comparison& c, const GateThresholds& t, GateResult& g) {
  if (t.tails.empty() && !t.throughput) return;
  std::vector<const PhaseComparison*> cases;  // the first row of each load case
  for (const auto& r : c.rows)
    if (r.suite == "load" && std::none_of(cases.begin(), cases.end(), [&](const PhaseComparison* x) {
          return x->case_name == r.case_name && x->params == r.params;
        }))
      cases.push_back(&r);
  if (cases.empty()) {
    const char* tables = t.tails.empty() ? "[throughput]" : t.throughput ? "[tails] and [throughput]" : "[tails]";
    g.errors.push_back(fmt::format("the thresholds have {}, but the files have no load case in common (suite \"load\", "
                                   "written by cuzk-bench load)",
                                   tables));
    return;
  }
  for (const auto* k : cases) {
    auto in_case = [&](const PhaseComparison& r) {
      return r.suite == k->suite && r.case_name == k->case_name && r.params == k->params;
    };
    for (const auto& [phase, quantiles] : t.tails) {
      bool in_a = false, in_b = false;
      for (const auto& r : c.rows)
        if (in_case(r) && r.kind == "phase" && r.phase == phase) {
          in_a = in_a || r.only_in != Side::kB;
          in_b = in_b || r.only_in != Side::kA;
        }
      for (const auto& [present, side] : {std::pair{in_a, "baseline"}, std::pair{in_b, "candidate"}})
        if (!present)
          g.errors.push_back(fmt::format("phase {} (named in [tails]) is missing in load case {} of the {}", phase,
                                         case_key(*k), side));
    }
    if (t.throughput && std::none_of(c.rows.begin(), c.rows.end(),
                                     [&](const PhaseComparison& r) { return in_case(r) && r.kind == "throughput"; }))
      g.errors.push_back(fmt::format("{}: [throughput] cannot be gated: the files have no throughput row for it (their "
                                     "samples lack load.done_s, the completion times; record them again with "
                                     "cuzk-bench load)",
                                     case_key(*k)));
  }
}

}  // namespace
}  // namespace gate_detail

void set_result(GateResult& g) {
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
}

CompareOptions gate_compare_options(const GateThresholds& t, const GateOptions& o) {
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
  co.load_rows = true;
  co.tail_thresholds = t.tails;
  for (const auto& [phase, quantiles] : t.tails) {
    if (std::find(co.tail_phases.begin(), co.tail_phases.end(), phase) == co.tail_phases.end())
      co.tail_phases.push_back(phase);
    for (const auto& [metric, max] : quantiles)
      if (std::none_of(co.tail_quantiles.begin(), co.tail_quantiles.end(),
                       [&m = metric](double q) { return quantile_metric(q) == m; }))
        co.tail_quantiles.push_back(*metric_quantile(metric));
  }
  if (t.throughput) co.throughput_threshold = t.throughput->threshold();
  return co;
}

GateResult gate_comparison(const Comparison& c, const GateThresholds& t, const GateOptions& o) {
  using namespace gate_detail;
  GateResult g;
  g.thresholds = t;
  g.comparison = c;
  g.baseline = c.path_a;
  g.candidate = c.path_b;
  g.multiple = t.multiple;
  const std::string tfile = "the thresholds";
  for (const auto& w : c.warnings) g.warnings.push_back(w);
  check_variants(c, o, "", g);

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
      in_a = in_a || r.only_in != Side::kB;
      in_b = in_b || r.only_in != Side::kA;
    }
    if (!in_a) g.errors.push_back("phase " + p + " (named in " + tfile + ") is missing in the baseline");
    if (!in_b) g.errors.push_back("phase " + p + " (named in " + tfile + ") is missing in the candidate");
  }
  for (const auto& rc : t.required_cases) {
    bool found = false;
    for (const auto& r : c.rows) found = found || case_key(r) == rc;
    if (!found) g.errors.push_back("required case " + rc + " is not in both files");
  }
  check_load_cases(c, t, g);
  auto alarm = [&](const PhaseComparison& r, std::string kind, std::string text) {
    GateAlarm a;
    a.kind = std::move(kind);
    a.suite = r.suite;
    a.case_name = r.case_name;
    a.params = r.params;
    a.phase = r.phase;
    a.metric = r.metric;
    a.text = text;
    a.policy = policy_of(t, r.phase);
    if (a.policy == "warn") {
      g.warned.push_back(std::move(text));
      g.warn_alarms.push_back(std::move(a));
      return &g.warn_alarms.back();
    }
    g.regressions.push_back(std::move(text));
    g.alarms.push_back(std::move(a));
    return &g.alarms.back();
  };
  std::set<std::string> ignored;
  for (const auto& r : c.rows)
    if (policy_of(t, r.phase) == "ignore") ignored.insert(r.phase);
  std::vector<const PhaseComparison*> gated;
  for (const auto& r : c.rows) {
    const std::string where = where_of(r);
    if (r.only_in == Side::kA) {
      g.errors.push_back("phase " + where + " is in the baseline but missing in the candidate");
      continue;
    }
    if (r.only_in == Side::kB) {
      const NewPhaseLimit l = new_phase_limit(t, r.phase);
      if (ignored.count(r.phase) || !l.any()) {
        g.warnings.push_back(fmt::format("phase {} is new in the candidate, costs {:.1f} ms (not gated{})", where,
                                         r.median_b / 1e6, ignored.count(r.phase) ? ": policy ignore" : "; [new_phases] gates it"));
        continue;
      }
      if (std::string reg = new_phase_regression(c, r, l); !reg.empty()) alarm(r, "new_phase", reg);
      continue;
    }
    if (ignored.count(r.phase)) continue;
    if (!r.primary) continue;  // shown for reference; the phase's verdict is its primary row's
    // A tail row of a quantile [tails] does not name is compare's own: shown, not gated.
    if (r.kind == "tail" && !(t.tails.count(r.phase) && t.tails.at(r.phase).count(r.metric))) continue;
    if (r.kind == "throughput") {
      if (!t.throughput) continue;
      // Its unit is rounds, not samples: min_rounds, not min_samples.
      if (r.observations_a < t.throughput->min_rounds || r.observations_b < t.throughput->min_rounds) {
        g.errors.push_back(fmt::format("{}: throughput needs at least {} rounds per side ({} baseline, {} candidate; "
                                       "[throughput] min_rounds): record more with load --rounds",
                                       where, t.throughput->min_rounds, r.observations_a, r.observations_b));
        continue;
      }
      gated.push_back(&r);
      continue;
    }
    if (r.observations_a == 0 || r.observations_b == 0) {
      g.errors.push_back("phase " + where + " has no samples on one side");
      continue;
    }
    if (r.observations_a < t.min_samples || r.observations_b < t.min_samples) {
      g.errors.push_back(fmt::format("phase {} has too few samples ({} baseline, {} candidate; min_samples = {})",
                                     where, r.observations_a, r.observations_b, t.min_samples));
      continue;
    }
    if (auto lim = t.counter_limits.find(r.phase); r.kind == "phase" && lim != t.counter_limits.end()) {
      for (const auto& [name, max] : lim->second) {
        std::string why;
        const std::optional<double> ratio = counter_ratio(r, name, why);
        if (!ratio) {
          g.errors.push_back(fmt::format("counter {} of {} cannot be gated: {}", name, where, why));
          continue;
        }
        if (*ratio > max) {
          const CounterDelta* d = find_counter(r, name);
          alarm(r, "counter",
                fmt::format("{}: counter {} went {:.6g} -> {:.6g} (medians, x{:.3g}), above max ratio {:g}", where, name,
                            *d->median_a, *d->median_b, *ratio, max))
              ->counter = name;
        }
      }
    }
    gated.push_back(&r);
  }

  // The multiple-testing procedure over every gated phase of every case (docs/gating.md).
  g.gated.resize(gated.size());
  for (size_t i = 0; i < gated.size(); ++i) {
    const PhaseComparison& r = *gated[i];
    GatedPhase& p = g.gated[i];
    p.suite = r.suite;
    p.case_name = r.case_name;
    p.params = r.params;
    p.phase = r.phase;
    p.metric = r.metric;
    p.kind = r.kind;
    p.p_value = r.p_value;
  }
  const std::vector<bool> reachable = adjust(gated, g.gated, t);
  size_t families = 0, largest = 0, opened = 0, child_families = 0;
  {
    std::map<std::string, size_t> seen;  // family key -> size
    std::set<std::string> opened_keys;
    for (const auto& p : g.gated) {
      const std::string key = p.family == "self" ? p.suite + p.case_name + p.params + p.phase
                                                 : p.family == "roots" || p.family == "all" ? p.family
                                                                                             : p.suite + p.case_name + p.params + p.family;
      seen[key] = p.family_size;
      largest = std::max(largest, p.family_size);
    }
    families = seen.size();
    if (t.multiple == "hierarchy")
      for (const auto& p : g.gated) {
        // A family of children is opened when its parent's adjusted p is below alpha.
        for (const auto& q : g.gated)
          if (q.kind == "phase" && q.phase == p.family && q.suite == p.suite && q.case_name == p.case_name &&
              q.params == p.params && q.adjusted_p < t.alpha)
            opened_keys.insert(p.suite + p.case_name + p.params + p.family);
      }
    for (const auto& [k, n] : seen) child_families += k != "roots";
    opened = opened_keys.size();
  }
  std::set<std::string> cases;
  for (const auto& p : g.gated) cases.insert(p.suite + "/" + p.case_name + " " + p.params);
  const std::string in_cases = fmt::format("{} case{}", cases.size(), cases.size() == 1 ? "" : "s");
  if (t.multiple == "none")
    g.family_summary = fmt::format("no multiple-testing adjustment: each of {} gated phases ({}) is tested at alpha {:g} "
                                   "on its own",
                                   g.gated.size(), in_cases, t.alpha);
  else if (t.multiple == "holm")
    g.family_summary = fmt::format("Holm's procedure over one family of {} gated phases ({}) at alpha {:g}",
                                   g.gated.size(), in_cases, t.alpha);
  else
    g.family_summary = fmt::format(
        "hierarchy over {} gated phases ({}) in {} families (largest {}) at alpha {:g}: the root phases first, then "
        "the children of a phase that changed; {} of {} families of children opened",
        g.gated.size(), in_cases, families, largest, t.alpha, opened, child_families);
  const auto load = std::count_if(g.gated.begin(), g.gated.end(), [](const GatedPhase& p) { return p.kind != "phase"; });
  if (load > 0)
    g.family_summary += fmt::format("; {} of them tail or throughput rows of load cases{}", load,
                                    t.multiple == "hierarchy" ? " (roots)" : "");

  // A phase that cannot fail is not gated, whatever the thresholds say: say so, loudly. Not an
  // error: a gate of counters alone ([counters], with times left wide) is a sound gate.
  size_t unreachable = 0;
  const PhaseComparison* example = nullptr;
  size_t example_family = 0;
  for (size_t i = 0; i < gated.size(); ++i)
    if (!reachable[i]) {
      ++unreachable;
      if (!example || g.gated[i].family_size > example_family) {
        example = gated[i];
        example_family = g.gated[i].family_size;
      }
    }
  if (unreachable > 0) {
    const std::string msg = fmt::format(
        "{} of {} gated phases cannot fail with these sample counts (e.g. {}: with {} and {} {} the U test's smallest "
        "p is {:.2g}, and its family of {} needs p < {:.2g}); about {} per side would let them (multiple = {})",
        unreachable, gated.size(), where_of(*example), example->observations_a, example->observations_b, example->unit,
        smallest_u_p(example->observations_a, example->observations_b), example_family, t.alpha / static_cast<double>(example_family),
        u_observations_for(t.alpha / static_cast<double>(example_family)), t.multiple);
    g.cannot_fail = unreachable == gated.size() ? msg + ": no phase's time can fail this gate" : msg;
    g.warnings.push_back(g.cannot_fail);
  }

  for (size_t i = 0; i < gated.size(); ++i) {
    const PhaseComparison& r = *gated[i];
    GatedPhase& p = g.gated[i];
    // compare's own "too noisy" for rows it could not test stands; otherwise the verdict rule
    // of compare.md with the adjusted p in place of the raw one.
    p.verdict = std::isnan(r.ci_low) || r.observations_a < 2 || r.observations_b < 2
                    ? r.verdict
                    : compare_verdict(p.adjusted_p, r.ratio, r.ci_low, r.ci_high, t.alpha, r.threshold);
    const std::string where = where_of(r);
    if (p.verdict == "slower") {
      const std::string text =
          r.kind != "phase"
              ? load_regression_text(r, p, t)
              : fmt::format("{}: {:+.1f}% ({}), p = {:.3g}, adjusted p = {:.3g} ({}) exceeds max slowdown {:.1f}%", where,
                            (r.ratio - 1) * 100, ratio_text(r, t.multiple), r.p_value, p.adjusted_p,
                            family_text(p, t.multiple), r.threshold * 100);
      GateAlarm* a = alarm(r, "phase", text);
      a->p_value = r.p_value;
      a->adjusted_p = p.adjusted_p;
    } else if (p.verdict == "too noisy") {
      std::string msg = fmt::format("{}: too noisy to tell (B/A {:.3f}, 95% CI [{:.3f}, {:.3f}], p = {:.3g}, adjusted p = {:.3g})",
                                    where, r.ratio, r.ci_low, r.ci_high, r.p_value, p.adjusted_p);
      if (t.fail_on_noisy) g.errors.push_back(msg + " and fail_on_noisy is set");
      else g.warnings.push_back(msg);
    }
  }
  set_result(g);
  return g;
}

void confirm_alarms(GateResult& g, const Comparison& fresh, const GateThresholds& t, const GateOptions& o) {
  using namespace gate_detail;
  if (g.exit_code != 1) return;
  g.confirm_baseline = fresh.path_a;
  g.confirm_candidate = fresh.path_b;
  for (const auto& w : fresh.warnings) g.warnings.push_back("confirmation files: " + w);
  check_variants(fresh, o, "confirmation files: ", g);
  auto find = [&](const GateAlarm& a) -> const PhaseComparison* {
    for (const auto& r : fresh.rows)
      if (r.suite == a.suite && r.case_name == a.case_name && r.params == a.params && r.phase == a.phase &&
          r.metric == a.metric)
        return &r;
    return nullptr;
  };
  // Every alarm needs its row in the fresh data with enough samples; else no honest decision.
  std::vector<const PhaseComparison*> rows(g.alarms.size(), nullptr);
  std::vector<size_t> phase_alarms;
  std::vector<double> p;
  for (size_t i = 0; i < g.alarms.size(); ++i) {
    const GateAlarm& a = g.alarms[i];
    const PhaseComparison* r = find(a);
    const bool wanted_missing = a.kind == "new_phase";
    if (!r || (wanted_missing ? r->only_in != Side::kB : r->only_in.has_value())) {
      g.errors.push_back(fmt::format("cannot confirm the alarm on {}: not in both confirmation files ({}, {})",
                                     where_of(a), fresh.path_a, fresh.path_b));
      continue;
    }
    if (r->kind == "throughput") {
      const size_t least = t.throughput ? t.throughput->min_rounds : 2;
      if (r->observations_a < least || r->observations_b < least) {
        g.errors.push_back(fmt::format("cannot confirm the alarm on {}: too few rounds in the confirmation files ({} "
                                       "baseline, {} candidate; [throughput] min_rounds = {}): record more with load "
                                       "--rounds",
                                       where_of(a), r->observations_a, r->observations_b, least));
        continue;
      }
    } else if (!wanted_missing && (r->observations_a < t.min_samples || r->observations_b < t.min_samples)) {
      g.errors.push_back(fmt::format("cannot confirm the alarm on {}: too few samples in the confirmation files ({} "
                                     "baseline, {} candidate; min_samples = {})",
                                     where_of(a), r->observations_a, r->observations_b, t.min_samples));
      continue;
    }
    rows[i] = r;
    if (a.kind == "phase") {
      phase_alarms.push_back(i);
      p.push_back(r->p_value);
    }
  }
  if (!g.errors.empty()) {
    set_result(g);
    return;
  }
  // The family of the replication is the set of alarms being confirmed, nothing more: only
  // they are tested on the fresh data.
  const std::vector<double> adj = holm_adjusted(p);
  std::vector<std::string> confirmed, not_confirmed;
  for (size_t i = 0; i < g.alarms.size(); ++i) {
    GateAlarm& a = g.alarms[i];
    const PhaseComparison& r = *rows[i];
    std::string first, fresh_text;
    bool yes = false;
    if (a.kind == "phase") {
      const size_t k = static_cast<size_t>(std::find(phase_alarms.begin(), phase_alarms.end(), i) - phase_alarms.begin());
      const std::string v = std::isnan(r.ci_low) ? r.verdict
                                                 : compare_verdict(adj[k], r.ratio, r.ci_low, r.ci_high, t.alpha, r.threshold);
      yes = v == "slower";
      first = fmt::format("p = {:.3g}, adjusted p = {:.3g}", a.p_value, a.adjusted_p);
      fresh_text = fmt::format("{:+.1f}%, B/A 95% CI [{:.3f}, {:.3f}], p = {:.3g}, adjusted p = {:.3g} over {} alarm{}",
                               (r.ratio - 1) * 100, r.ci_low, r.ci_high, r.p_value, adj[k], adj.size(),
                               adj.size() == 1 ? "" : "s");
    } else if (a.kind == "new_phase") {
      yes = !new_phase_regression(fresh, r, new_phase_limit(t, r.phase)).empty();
      first = "new phase above its limit";
      fresh_text = fmt::format("costs {:.1f} ms, 95% CI [{:.1f}, {:.1f}] ms", r.median_b / 1e6, r.delta_low / 1e6,
                               r.delta_high / 1e6);
    } else {
      std::string why;
      const std::optional<double> ratio = counter_ratio(r, a.counter, why);
      const double max = t.counter_limits.at(a.phase).at(a.counter);
      if (!ratio) {
        g.errors.push_back(fmt::format("cannot confirm the alarm on {}: {}", where_of(a), why));
        continue;
      }
      yes = *ratio > max;
      first = fmt::format("counter ratio above {:g}", max);
      fresh_text = fmt::format("x{:.3g}", *ratio);
    }
    a.confirmed = yes;
    a.confirmation = fmt::format("alarm on {} ({}); re-measured {} and {} more {}: {} ({})", where_of(a), first, r.observations_a,
                                 r.observations_b, r.unit, yes ? "confirmed" : "not confirmed", fresh_text);
    (yes ? confirmed : not_confirmed).push_back(a.confirmation);
  }
  g.regressions = confirmed;
  for (auto& n : not_confirmed) g.warnings.push_back(n);
  set_result(g);
}

std::vector<std::string> alarmed_cases(const GateResult& g) {
  std::set<std::string> out;
  for (const auto& a : g.alarms)
    if (a.confirmed.value_or(true) && !a.case_name.empty()) out.insert(a.case_name);  // kernel alarms have no case
  return {out.begin(), out.end()};
}

GateResult run_gate(const std::string& baseline, const std::string& candidate, const std::string& thresholds_path,
                    const GateOptions& o) {
  using namespace gate_detail;
  GateResult g;
  auto fail = [&](std::string why) {
    g.errors.push_back(std::move(why));
    g.exit_code = 2;
    g.result = "error";
    return g;
  };
  auto fill_paths = [&] {
    g.baseline = baseline;
    g.candidate = candidate;
    g.thresholds_path = thresholds_path;
  };
  fill_paths();
  if (o.confirm_baseline.empty() != o.confirm_candidate.empty())
    return fail("the confirmation needs two files (--confirm-with BASELINE CANDIDATE)");
  GateThresholds t;
  try {
    t = load_thresholds(thresholds_path);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  g.thresholds = t;
  const CompareOptions co = gate_compare_options(t, o);
  Comparison c;
  try {
    c = compare_files(baseline, candidate, co);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  g = gate_comparison(c, t, o);
  fill_paths();
  for (auto& e : g.errors)
    if (auto at = e.find("named in the thresholds"); at != std::string::npos)
      e.replace(at, std::string("named in the thresholds").size(), "named in " + thresholds_path);
  if (g.exit_code != 1 || o.confirm_baseline.empty()) return g;
  Comparison fresh;
  try {
    fresh = compare_files(o.confirm_baseline, o.confirm_candidate, co);
  } catch (const std::exception& e) {
    g.errors.push_back(std::string("confirmation files: ") + e.what());
    set_result(g);
    return g;
  }
  confirm_alarms(g, fresh, t, o);
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
                       {"required_cases", g.thresholds->required_cases}, {"ignore_phases", g.thresholds->ignore_phases},
                       {"default_policy", g.thresholds->default_policy}, {"policies", g.thresholds->policies}};
    auto limit = [](const NewPhaseLimit& l) {
      return json{{"max_ms", l.max_ms ? json(*l.max_ms) : json(nullptr)},
                  {"max_share", l.max_share ? json(*l.max_share) : json(nullptr)}};
    };
    json overrides = json::object();
    for (const auto& [p, l] : g.thresholds->new_phase_overrides) overrides[p] = limit(l);
    j["thresholds"]["new_phases"] = limit(g.thresholds->new_phases);
    j["thresholds"]["new_phase_overrides"] = overrides;
    j["thresholds"]["counters"] = g.thresholds->counter_limits;
    j["thresholds"]["multiple"] = g.thresholds->multiple;
    j["thresholds"]["tails"] = g.thresholds->tails;
    j["thresholds"]["kernels"] = g.thresholds->kernel_limits;
    const auto& tp = g.thresholds->throughput;
    j["thresholds"]["throughput"] =
        tp ? json{{"max_drop", tp->max_drop}, {"min_rounds", tp->min_rounds}} : json(nullptr);
  }
  json gated = json::array();
  for (const auto& p : g.gated)
    gated.push_back({{"suite", p.suite}, {"case", p.case_name}, {"params", p.params}, {"phase", p.phase},
                     {"metric", p.metric}, {"kind", p.kind}, {"p_value", p.p_value}, {"adjusted_p", p.adjusted_p},
                     {"family", p.family}, {"family_size", p.family_size}, {"verdict", p.verdict}});
  j["multiple_testing"] = {{"method", g.multiple}, {"summary", g.family_summary}, {"phases", g.gated.size()},
                           {"gated", gated}};
  auto num = [](double x) { return std::isnan(x) ? json(nullptr) : json(x); };
  json alarms = json::array();
  for (const auto& a : g.alarms)
    alarms.push_back({{"kind", a.kind}, {"suite", a.suite}, {"case", a.case_name}, {"params", a.params},
                      {"phase", a.phase}, {"metric", a.metric}, {"counter", a.counter.empty() ? json(nullptr) : json(a.counter)},
                      {"p_value", num(a.p_value)}, {"adjusted_p", num(a.adjusted_p)}, {"text", a.text},
                      {"confirmed", a.confirmed ? json(*a.confirmed) : json(nullptr)},
                      {"confirmation", a.confirmation.empty() ? json(nullptr) : json(a.confirmation)}});
  j["alarms"] = alarms;
  json warn_alarms = json::array();
  for (const auto& a : g.warn_alarms)
    warn_alarms.push_back({{"kind", a.kind}, {"suite", a.suite}, {"case", a.case_name}, {"params", a.params},
                           {"phase", a.phase}, {"metric", a.metric}, {"counter", a.counter.empty() ? json(nullptr) : json(a.counter)},
                           {"p_value", num(a.p_value)}, {"adjusted_p", num(a.adjusted_p)}, {"text", a.text}});
  j["warned"] = g.warned;
  j["warn_alarms"] = warn_alarms;
  j["alarmed_cases"] = alarmed_cases(g);
  j["confirm_with"] = g.confirm_baseline.empty() ? json(nullptr) : json::array({g.confirm_baseline, g.confirm_candidate});
  j["comparison"] = g.comparison ? to_json(*g.comparison) : json(nullptr);
  return j;
}

output::Summary summary(const GateResult& g) {
  output::Summary s;
  s.headline = "cuzk gate: " + std::string(g.result == "pass" ? "PASS" : (g.result == "regression" ? "REGRESSION" : "ERROR"));
  s.lines.push_back(fmt::format("baseline `{}`, candidate `{}`, thresholds `{}` (exit {})", g.baseline, g.candidate,
                                g.thresholds_path, g.exit_code));
  if (!g.confirm_baseline.empty())
    s.lines.push_back(fmt::format("alarms re-measured in `{}` and `{}`: the gate fails only on those the fresh data confirm",
                                  g.confirm_baseline, g.confirm_candidate));
  if (!g.family_summary.empty()) s.lines.push_back("Multiple testing: " + g.family_summary + ".");
  s.sections = {{"Errors (the gate fails closed)", g.errors},
                {"Regressions", g.regressions},
                {"Regressions of phases whose policy is warn (they do not fail the gate)", g.warned},
                {"Warnings", g.warnings}};
  return s;
}

std::string format_markdown(const GateResult& g) {
  std::string out = output::markdown(summary(g));
  if (g.comparison) out += "### Comparison\n\n" + format_markdown(*g.comparison);
  return out;
}

}  // namespace cuzk
