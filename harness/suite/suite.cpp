// Suite files: parsing, validation, the kind registry and the "porep" case runner.
#include "harness/suite/suite.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <toml++/toml.h>

#include "harness/measure/phases.hpp"
#include "harness/measure/provenance.hpp"
#include "harness/measure/session.hpp"
#include "harness/measure/sim_counters.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "harness/suite/porep_job.hpp"
#include "harness/suite/porep_params.hpp"
#include "prover/instr/phase.hpp"
#include "prover/interop/input_file.hpp"
#include "prover/interop/input_limits.hpp"
#include "prover/synth/synth.hpp"

namespace cuzk::suite {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------- the "porep" kind


bool run_porep(RunContext& ctx) {
  PorepJob job;
  take_porep_case(job, ctx);
  job.warmup_plan = ctx.warmup_plan;
  job.gpu_counters = ctx.gpu_counters;
  const PorepJobResult r = run_porep_job(*ctx.session, job);
  ctx.warmup_outcome = r.warmup_outcome;
  return r.all_verified;
}

std::map<std::string, KindSpec> make_kinds() {
  std::map<std::string, KindSpec> k;
  k["porep"] = KindSpec{
      "porep",
      "one PoRep-shaped sector proof (several partition circuits), the path of `cuzk-bench prove`",
      porep_case_params("seed of r and s (fixed: reproducible proofs, same inputs in A/B)", "witness generation seed"),
      [](const json& p) { return porep_params(p).validate(); },
      run_porep,
      {"porep"},
      /*warms_until_settled=*/true};
  k["micro"] = micro_kind();
  k["pipeline"] = pipeline_kind();
  k["stage"] = stage_kind();
  k["sector"] = sector_kind();
  return k;
}

// ---------------------------------------------------------------- parsing

std::string where(const std::string& source, const toml::source_region& r) {
  if (r.begin.line == 0) return source;
  return fmt::format("{}:{}:{}", source, r.begin.line, r.begin.column);
}

[[noreturn]] void fail(const std::string& at, const std::string& msg) { throw SuiteError(at + ": " + msg); }

int get_count(const toml::node& n, const std::string& at, const std::string& key, int lo) {
  // The type first: toml++'s value<int64_t>() on a float casts it before its range check
  // (undefined behavior for 1e300; the same bug fuzz_gate found in the gate's reader).
  if (!n.is_integer()) fail(at, fmt::format("'{}' must be an integer", key));
  const int64_t v = n.as_integer()->get();
  if (v < lo || v > 1000000) fail(at, fmt::format("'{}' = {} is out of range (at least {})", key, v, lo));
  return int(v);
}

std::string get_string(const toml::node& n, const std::string& at, const std::string& key) {
  if (!n.is_string()) fail(at, fmt::format("'{}' must be a string", key));
  return *n.value<std::string>();
}

std::string param_names(const KindSpec& k) {
  std::string s;
  for (auto& p : k.params) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

// Reads one parameter value into `out` after checking name, type and range.
void read_param(const KindSpec& k, const std::string& source, const std::string& ctx, const toml::key& tkey,
                const toml::node& v, json& out) {
  const std::string key(tkey.str());
  const std::string at = where(source, v.source());
  const ParamSpec* spec = nullptr;
  for (auto& p : k.params)
    if (p.name == key) spec = &p;
  if (!spec)
    fail(where(source, tkey.source()), fmt::format("{}: unknown parameter '{}' for kind '{}' (it takes: {})", ctx, key, k.name, param_names(k)));
  if (spec->type == ParamSpec::Type::kString) {
    if (!v.is_string()) fail(at, fmt::format("{}: parameter '{}' must be a string", ctx, key));
    std::string sv = *v.value<std::string>();
    if (!spec->choices.empty() && std::find(spec->choices.begin(), spec->choices.end(), sv) == spec->choices.end())
      fail(at, fmt::format("{}: parameter '{}' = \"{}\" is not one of: {}", ctx, key, sv, fmt::join(spec->choices, ", ")));
    out[key] = sv;
    return;
  }
  if (!v.is_integer()) fail(at, fmt::format("{}: parameter '{}' must be an integer", ctx, key));  // type first, as get_count
  const int64_t iv = v.as_integer()->get();
  if (iv < spec->min || iv > spec->max)
    fail(at, fmt::format("{}: parameter '{}' = {} is out of range [{}, {}]", ctx, key, iv, spec->min, spec->max));
  out[key] = iv;
}

void read_run_counts(const toml::table& t, const std::string& source, const std::string& ctx, std::optional<int>& reps,
                     std::optional<int>& warmup_runs) {
  if (auto* n = t.get("reps")) reps = get_count(*n, where(source, n->source()), ctx + ": reps", 1);
  if (auto* n = t.get("warmup")) warmup_runs = get_count(*n, where(source, n->source()), ctx + ": warmup", 0);
}

// A case's primary_metric: a counter whose names this build knows without probing the machine
// (sim:: and os:: counters); PAPI events depend on the machine, so a suite cannot name them here.
bool is_primary_metric(const std::string& name) { return sim::find(name) || os_counters::find(name); }

std::string primary_metric_list() {
  std::string s;
  for (const auto& i : sim::all()) s += (s.empty() ? "" : ", ") + std::string(i.name);
  for (const auto& i : os_counters::all()) s += ", " + std::string(i.name);
  return s;
}

}  // namespace

const std::map<std::string, KindSpec>& kind_specs() {
  static const std::map<std::string, KindSpec> k = make_kinds();
  return k;
}

json effective_params(const Case& c, bool quick) {
  const KindSpec& k = kind_specs().at(c.kind);
  json p = json::object();
  for (auto& s : k.params) p[s.name] = s.type == ParamSpec::Type::kString ? json(s.str_def) : json(s.def);
  for (auto& [key, v] : c.params.items()) p[key] = v;
  if (quick)
    for (auto& [key, v] : c.quick.items()) p[key] = v;
  return p;
}

int effective_reps(const Suite& s, const Case& c, bool quick) {
  if (quick) return c.quick_reps.value_or(s.quick_reps);
  return c.reps.value_or(s.reps);
}
int effective_warmup_runs(const Suite& s, const Case& c, bool quick) {
  if (quick) return c.quick_warmup_runs.value_or(s.quick_warmup_runs);
  return c.warmup_runs.value_or(s.warmup_runs);
}

Suite parse_suite_text(const std::string& text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    fail(where(source, e.source()), fmt::format("malformed TOML: {}", e.description()));
  }
  Suite s;
  s.path = source;
  static const std::set<std::string> top_keys = {"name", "description", "defaults", "case"};
  for (auto& [key, v] : root) {
    if (!top_keys.count(std::string(key.str())))
      fail(where(source, key.source()),
           fmt::format("unknown key '{}' at the top level (expected: name, description, [defaults], [[case]])",
                       key.str()));
  }
  const auto* name = root.get("name");
  if (!name) fail(source, "missing required key 'name' (the suite's name)");
  s.name = get_string(*name, where(source, name->source()), "name");
  if (s.name.empty() || s.name.find_first_of("/ \t") != std::string::npos)
    fail(where(source, name->source()), fmt::format("'name' = \"{}\" must be non-empty, without '/' or spaces", s.name));
  if (auto* d = root.get("description")) s.description = get_string(*d, where(source, d->source()), "description");

  if (auto* d = root.get("defaults")) {
    const std::string at = where(source, d->source());
    const toml::table* t = d->as_table();
    if (!t) fail(at, "'defaults' must be a table");
    for (auto& [key, v] : *t) {
      const std::string k(key.str());
      if (k != "reps" && k != "warmup" && k != "quick")
        fail(where(source, key.source()), fmt::format("unknown key 'defaults.{}' (expected: reps, warmup, quick)", k));
    }
    std::optional<int> r, w;
    read_run_counts(*t, source, "defaults", r, w);
    s.reps = r.value_or(s.reps);
    s.warmup_runs = w.value_or(s.warmup_runs);
    if (auto* q = t->get("quick")) {
      const toml::table* qt = q->as_table();
      if (!qt) fail(where(source, q->source()), "'defaults.quick' must be a table");
      for (auto& [key, v] : *qt)
        if (key.str() != "reps" && key.str() != "warmup")
          fail(where(source, key.source()),
               fmt::format("unknown key 'defaults.quick.{}' (expected: reps, warmup)", key.str()));
      std::optional<int> qr, qw;
      read_run_counts(*qt, source, "defaults.quick", qr, qw);
      s.quick_reps = qr.value_or(s.quick_reps);
      s.quick_warmup_runs = qw.value_or(s.quick_warmup_runs);
    }
  }

  const auto* cases = root.get("case");
  if (!cases) fail(source, "no cases: add at least one [[case]] table");
  const toml::array* arr = cases->as_array();
  if (!arr || !arr->is_array_of_tables()) fail(where(source, cases->source()), "'case' must be an array of tables ([[case]])");
  std::set<std::string> names;
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table& t = *arr->get(i)->as_table();
    Case c;
    c.where = where(source, t.source());
    const std::string idx = fmt::format("case #{}", i + 1);
    const auto* cn = t.get("name");
    if (!cn) fail(c.where, fmt::format("{}: missing required key 'name'", idx));
    c.name = get_string(*cn, where(source, cn->source()), "name");
    if (c.name.empty() || c.name.find_first_of("/ \t,") != std::string::npos)
      fail(where(source, cn->source()), fmt::format("{}: 'name' = \"{}\" must be non-empty, without '/', ',' or spaces", idx, c.name));
    if (!names.insert(c.name).second)
      fail(where(source, cn->source()), fmt::format("duplicate case name '{}'", c.name));
    const std::string ctx = fmt::format("case '{}'", c.name);
    const auto* kn = t.get("kind");
    if (!kn) fail(c.where, fmt::format("{}: missing required key 'kind'", ctx));
    c.kind = get_string(*kn, where(source, kn->source()), "kind");
    auto kit = kind_specs().find(c.kind);
    if (kit == kind_specs().end()) {
      std::string known;
      for (auto& [n, _] : kind_specs()) known += (known.empty() ? "" : ", ") + n;
      fail(where(source, kn->source()), fmt::format("{}: unknown kind '{}' (known kinds: {})", ctx, c.kind, known));
    }
    const KindSpec& kind = kit->second;
    for (auto& [key, v] : t) {
      const std::string k(key.str());
      if (k == "name" || k == "kind") continue;
      if (k == "description") {
        c.description = get_string(v, where(source, v.source()), "description");
      } else if (k == "backends") {
        const toml::array* ba = v.as_array();
        if (!ba) fail(where(source, v.source()), fmt::format("{}: 'backends' must be an array of strings", ctx));
        for (auto& b : *ba) {
          auto bs = b.value<std::string>();
          if (!b.is_string() || (*bs != "cpu" && *bs != "cuda"))
            fail(where(source, b.source()), fmt::format("{}: 'backends' entries must be \"cpu\" or \"cuda\"", ctx));
          c.backends.push_back(*bs);
        }
      } else if (k == "circuit") {
        c.circuit = get_string(v, where(source, v.source()), ctx + ": circuit");
        if (std::find(kind.circuits.begin(), kind.circuits.end(), c.circuit) == kind.circuits.end())
          fail(where(source, v.source()),
               fmt::format("{}: unknown circuit '{}' for kind '{}' (known circuits: {})", ctx, c.circuit, kind.name,
                           kind.circuits.empty() ? std::string("none, this kind takes no circuit")
                                                 : fmt::format("{}", fmt::join(kind.circuits, ", "))));
      } else if (k == "phases") {
        const toml::array* pa = v.as_array();
        if (!pa) fail(where(source, v.source()), fmt::format("{}: 'phases' must be an array of phase names", ctx));
        for (auto& ph : *pa) {
          auto ps = ph.value<std::string>();
          if (!ph.is_string() || !is_required_phase(*ps))
            fail(where(source, ph.source()),
                 fmt::format("{}: unknown phase {} in 'phases' (known phases: {})", ctx,
                             ph.is_string() ? "'" + *ps + "'" : std::string("(not a string)"), required_phases_list()));
          if (!kind.records.empty() && std::find(kind.records.begin(), kind.records.end(), *ps) == kind.records.end())
            fail(where(source, ph.source()),
                 fmt::format("{}: phase '{}' in 'phases' is not recorded by kind '{}' (it records: {})", ctx, *ps,
                             kind.name, fmt::join(kind.records, ", ")));
          c.phases.push_back(*ps);
        }
      } else if (k == "primary_metric") {
        c.primary_metric = get_string(v, where(source, v.source()), ctx + ": primary_metric");
        if (!is_primary_metric(c.primary_metric))
          fail(where(source, v.source()),
               fmt::format("{}: unknown counter '{}' in 'primary_metric' (known: {})", ctx, c.primary_metric,
                           primary_metric_list()));
      } else if (k == "reps" || k == "warmup") {
        // read below
      } else if (k == "quick") {
        if (v.is_boolean()) {
          c.in_quick = *v.value<bool>();
          continue;
        }
        const toml::table* qt = v.as_table();
        if (!qt) fail(where(source, v.source()), fmt::format("{}: 'quick' must be a table of overrides or false", ctx));
        for (auto& [qk, qv] : *qt) {
          const std::string q(qk.str());
          if (q == "reps" || q == "warmup") continue;
          read_param(kind, source, ctx + " (quick)", qk, qv, c.quick);
        }
        read_run_counts(*qt, source, ctx + ": quick", c.quick_reps, c.quick_warmup_runs);
      } else {
        read_param(kind, source, ctx, key, v, c.params);
      }
    }
    read_run_counts(t, source, ctx, c.reps, c.warmup_runs);
    // Cross-parameter validity, as run and as run under --quick.
    for (bool quick : {false, true}) {
      if (quick && !c.in_quick) continue;
      if (std::string err = kind.validate ? kind.validate(effective_params(c, quick)) : ""; !err.empty())
        fail(c.where, fmt::format("{}{}: {}", ctx, quick ? " (with its quick overrides)" : "", err));
    }
    s.cases.push_back(std::move(c));
  }
  return s;
}

Suite load_suite_file(const std::string& path) {
  InputFile in(path, throw_as<SuiteError>);
  return parse_suite_text(in.read_all(limits::kMaxTomlBytes, "a suite file"), path);
}

std::string resolve_suite(const std::string& name_or_file) {
  namespace fs = std::filesystem;
  const std::string& n = name_or_file;
  if (n.find('/') != std::string::npos || (n.size() > 5 && n.ends_with(".toml"))) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(n, ec))) throw SuiteError(fmt::format("{}: no such suite file", n));
    return n;
  }
  std::vector<std::string> dirs = {"suites"};
  if (const char* e = std::getenv("CUZK_SUITES_DIR"); e && *e) dirs.push_back(e);
  dirs.push_back(std::string(build_provenance().source_dir) + "/suites");
  std::string tried;
  for (auto& d : dirs) {
    std::string p = d + "/" + n + ".toml";
    if (fs::exists(p)) return fs::absolute(p).lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + p;
  }
  throw SuiteError(fmt::format("no suite named '{}' (looked for {})", n, tried));
}

circuits::PorepParams porep_params(const json& p) {
  circuits::PorepParams c;
  for (const PorepCircuitParam& q : porep_circuit_params()) c.*q.field = uint32_t(p.at(q.spec.name).get<int64_t>());
  return c;
}

}  // namespace cuzk::suite
