// The attribution of a matrix folder (matrix.hpp): loading, the per-phase analysis, the summary.
// The outputs (terminal, markdown, JSON) are in matrix_format.cpp.
#include "harness/analysis/matrix.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include "harness/analysis/math_policy.hpp"
#include <cctype>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/matrix_detail.hpp"
#include "harness/analysis/stats.hpp"
#include "harness/measure/clock.hpp"
#include "harness/measure/machine.hpp"
#include "harness/measure/results.hpp"
#include "prover/interop/input_file.hpp"
#include "prover/interop/input_limits.hpp"

namespace cuzk::matrix {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using compare_detail::CaseData;
using compare_detail::PhaseData;
using compare_detail::SideData;

// The values of a phase's metric in one side's case ("" metric: none).
const std::vector<double>* metric_values(const CaseData& c, const std::string& phase, const std::string& metric) {
  auto it = c.phases.find(phase);
  if (it == c.phases.end()) return nullptr;
  const auto& v = metric == "gpu_kernel_ns" ? it->second.gpu_kernel : metric == "gpu_ns" ? it->second.gpu : it->second.wall;
  return v.empty() ? nullptr : &v.values();
}

const CaseData* find_case(const SideData& s, const std::string& key) {
  auto it = s.cases.find(key);
  return it == s.cases.end() ? nullptr : &it->second;
}

const PhaseComparison* case_row(const Comparison& c, const CaseAttribution& k, const std::string& phase) {
  for (const auto& r : c.rows)
    if (r.primary && r.kind == "phase" && r.phase == phase && r.suite == k.suite && r.case_name == k.case_name &&
        r.params == k.params)
      return &r;
  return nullptr;
}

VariantCell cell_of(const std::string& name, const PhaseComparison& r) {
  VariantCell c;
  c.name = name;
  c.verdict = r.verdict;
  if (!r.only_in) {
    c.ratio = r.ratio;
    c.low = r.ci_low;
    c.high = r.ci_high;
  }
  c.delta = r.delta;
  c.delta_low = r.delta_low;
  c.delta_high = r.delta_high;
  for (const auto& d : r.counters)
    if (d.median_a && d.median_b && counter_is_notable(d, r.median_a, r.median_b)) c.counters.push_back(d);
  return c;
}

// The per-round files of every variant, loaded once.
class RoundCache {
 public:
  explicit RoundCache(const CompareOptions& o) : o_(o) {}
  const SideData& get(const std::string& path) {
    auto it = sides_.find(path);
    if (it == sides_.end()) it = sides_.emplace(path, compare_detail::load_side(path, o_)).first;
    return it->second;
  }

 private:
  const CompareOptions& o_;
  std::map<std::string, SideData> sides_;
};

uint32_t levels_of(const VariantRun& v) {
  uint32_t l = 0;
  for (size_t i = 0; i < v.flags.size(); ++i)
    if (v.flags[i]) l |= 1u << i;
  return l;
}

// The factorial part of one phase: observations per variant and round, or the "only with" cost.
void analyse_factorial(const Input& in, const std::vector<const SideData*>& merged, RoundCache& rounds,
                       const std::string& key, PhaseAttribution& p) {
  std::vector<size_t> having;
  for (size_t v = 0; v < in.variants.size(); ++v) {
    const CaseData* c = find_case(*merged[v], key);
    if (c && metric_values(*c, p.phase, p.metric)) having.push_back(v);
  }
  auto observations_of = [&](size_t v, std::vector<factorial::Observation>& out) {
    for (size_t r = 0; r < in.variants[v].rounds.size(); ++r) {
      if (in.variants[v].rounds[r].empty()) continue;  // a failed run: counted in the manifest, no observation
      const CaseData* c = find_case(rounds.get(in.variants[v].rounds[r]), key);
      const std::vector<double>* vals = c ? metric_values(*c, p.phase, p.metric) : nullptr;
      if (!vals) continue;
      const double m = median(*vals);
      if (m > 0 && std::isfinite(m)) out.push_back({levels_of(in.variants[v]), static_cast<int>(r), m});
    }
  };
  if (having.size() != in.variants.size()) {
    // Which flags must be on for the phase to exist: those on in every variant that has it; the
    // rule holds when exactly the variants with all of them on have the phase.
    std::vector<bool> need(in.flags.size(), !having.empty());
    for (size_t v : having)
      for (size_t f = 0; f < in.flags.size(); ++f) need[f] = need[f] && in.variants[v].flags[f];
    bool exact = std::any_of(need.begin(), need.end(), [](bool b) { return b; });
    for (size_t v = 0; v < in.variants.size() && exact; ++v) {
      bool all_on = true;
      for (size_t f = 0; f < in.flags.size(); ++f) all_on = all_on && (!need[f] || in.variants[v].flags[f]);
      const bool has = std::find(having.begin(), having.end(), v) != having.end();
      exact = all_on == has;
    }
    if (!exact) {
      p.fx_note = fmt::format("in {} of the {} variants, not along flag lines: see the variants' columns", having.size(),
                              in.variants.size());
      return;
    }
    for (size_t f = 0; f < in.flags.size(); ++f)
      if (need[f]) p.only_with.push_back(in.flags[f]);
    std::vector<factorial::Observation> obs;
    for (size_t v : having) observations_of(v, obs);
    std::vector<double> vals;
    for (auto& o : obs) vals.push_back(o.value);
    const MeanCI cost = t_interval(vals, in.compare.ci_level);
    p.only_cost = cost.mean;
    p.only_low = cost.low;
    p.only_high = cost.high;
    std::string with;
    for (auto& f : p.only_with) with += (with.empty() ? "" : " and ") + f;
    p.fx_note = "exists only with " + with + " on: its cost is that flag's";
    return;
  }
  std::vector<factorial::Observation> obs;
  for (size_t v = 0; v < in.variants.size(); ++v) observations_of(v, obs);
  try {
    p.fx = factorial::analyse(in.flags, obs, in.compare.ci_level, true);
  } catch (const factorial::FactorialError& e) {
    p.fx_note = e.what();
    return;
  }
  // Each main effect's counters: the mean of the variants' medians with the flag off and on.
  std::map<std::string, std::vector<std::pair<size_t, double>>> counter_medians;  // name -> (variant, median)
  std::vector<double> phase_medians(in.variants.size(), NAN);
  for (size_t v = 0; v < in.variants.size(); ++v) {
    const CaseData* c = find_case(*merged[v], key);
    const auto& pd = c->phases.at(p.phase);
    phase_medians[v] = median(*metric_values(*c, p.phase, p.metric));
    for (const auto& [name, vals] : pd.counters)
      if (!vals.empty()) counter_medians[name].push_back({v, median(vals.values())});
  }
  for (const auto& e : p.fx->effects) {
    EffectRow row;
    row.effect = e;
    row.delta_ns = std::isfinite(p.baseline_median) ? p.baseline_median * (e.ratio - 1) : NAN;
    if (e.order == 1) {
      const size_t f = static_cast<size_t>(e.flags[0]);
      std::vector<double> ph_off, ph_on;
      for (size_t v = 0; v < in.variants.size(); ++v) (in.variants[v].flags[f] ? ph_on : ph_off).push_back(phase_medians[v]);
      for (const auto& [name, meds] : counter_medians) {
        if (meds.size() != in.variants.size()) continue;  // not read in every variant: compare's columns say why
        std::vector<double> off, on;
        for (auto& [v, m] : meds) (in.variants[v].flags[f] ? on : off).push_back(m);
        CounterDelta d;
        d.name = name;
        d.median_a = mean(off);
        d.median_b = mean(on);
        describe_counter_delta(d);
        if (counter_is_notable(d, mean(ph_off), mean(ph_on))) row.counters.push_back(d);
      }
    }
    p.effects.push_back(std::move(row));
  }
}

}  // namespace

Attribution attribute(const Input& in) {
  if (in.variants.size() < 2)
    throw MatrixError(fmt::format("a matrix needs at least two variants (got {})", in.variants.size()));
  size_t base = in.variants.size();
  for (size_t v = 0; v < in.variants.size(); ++v)
    if (in.variants[v].name == in.baseline) base = v;
  if (base == in.variants.size()) throw MatrixError(fmt::format("the baseline '{}' is not among the variants", in.baseline));
  const bool fx = in.mode == "factorial";
  if (fx)
    for (auto& v : in.variants)
      if (v.flags.size() != in.flags.size())
        throw MatrixError(fmt::format("variant '{}' has {} flag settings for {} flags", v.name, v.flags.size(), in.flags.size()));

  Attribution a;
  a.mode = in.mode;
  a.flags = in.flags;
  a.baseline = in.baseline;
  a.level = in.compare.ci_level;
  a.injected = in.injected;
  for (auto& v : in.variants) {
    a.variants.push_back(v.name);
    a.rounds = std::max(a.rounds, v.rounds.size());
  }

  std::vector<SideData> merged;
  merged.reserve(in.variants.size());
  for (auto& v : in.variants) merged.push_back(compare_detail::load_side(v.results, in.compare));
  std::vector<const SideData*> merged_ptr;
  for (auto& s : merged) merged_ptr.push_back(&s);
  std::vector<std::pair<size_t, Comparison>> cmps;  // (variant index, baseline vs it)
  std::set<std::string> warned;
  for (size_t v = 0; v < in.variants.size(); ++v) {
    if (v == base) continue;
    cmps.emplace_back(v, compare_files(in.variants[base].results, in.variants[v].results, in.compare));
    for (auto& w : cmps.back().second.warnings)
      if (warned.insert(w).second) a.warnings.push_back(in.variants[v].name + ": " + w);
  }

  RoundCache rounds(in.compare);
  for (const auto& [key, cd] : merged[base].cases) {
    CaseAttribution k;
    k.suite = cd.suite;
    k.case_name = cd.case_name;
    k.params = cd.params;
    std::vector<std::string> order;  // phases in the order compare lists them
    for (auto& [v, c] : cmps)
      for (auto& r : c.rows)
        if (r.primary && r.kind == "phase" && r.suite == k.suite && r.case_name == k.case_name && r.params == k.params &&
            std::find(order.begin(), order.end(), r.phase) == order.end())
          order.push_back(r.phase);
    for (const auto& phase : order) {
      PhaseAttribution p;
      p.phase = phase;
      for (auto& [v, c] : cmps) {
        const PhaseComparison* r = case_row(c, k, phase);
        if (!r) continue;
        if (p.metric.empty()) p.metric = r->metric;
        if (r->only_in != Side::kB) p.baseline_median = r->median_a;
        p.variants.push_back(cell_of(in.variants[v].name, *r));
        for (const auto& s : c.summaries)
          if (s.end_to_end == phase && s.suite == k.suite && s.case_name == k.case_name && s.params == k.params)
            p.variants.back().rounds_needed = s.rounds_needed;
      }
      if (fx) analyse_factorial(in, merged_ptr, rounds, key, p);
      k.phases.push_back(std::move(p));
    }
    k.summary = detail::summarize(a, in, k);
    a.cases.push_back(std::move(k));
  }
  if (a.cases.empty()) throw MatrixError("the baseline's results hold no case: nothing to attribute");
  return a;
}

namespace {

// Typed access to manifest.json with the field's path in every error, e.g.
// `manifest.json: "variants[1].name" must be a string (it is number)`.
class ManifestReader {
 public:
  explicit ManifestReader(const std::string& file) : file_(file) {}
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw MatrixError(fmt::format("{}: \"{}\" {}", file_, key, what));
  }
  static std::string join(const std::string& where, const char* key) { return where.empty() ? key : where + "." + key; }
  static std::string index(const std::string& where, size_t i) { return fmt::format("{}[{}]", where, i); }
  void type(const json& v, const std::string& key, bool ok, const char* want) const {
    if (!ok) fail(key, fmt::format("must be {} (it is {})", want, v.type_name()));
  }
  const json* find(const json& obj, const std::string& where, const char* key) const {
    type(obj, where.empty() ? "(top level)" : where, obj.is_object(), "an object");
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  const json& need(const json& obj, const std::string& where, const char* key) const {
    const json* v = find(obj, where, key);
    if (!v) fail(join(where, key), "is missing");
    return *v;
  }
  std::string str(const json& obj, const std::string& where, const char* key) const {
    const json& v = need(obj, where, key);
    type(v, join(where, key), v.is_string(), "a string");
    return v.get<std::string>();
  }
  const json& array(const json& obj, const std::string& where, const char* key) const {
    const json& v = need(obj, where, key);
    type(v, join(where, key), v.is_array(), "an array");
    return v;
  }
  // Optional fields: absent is fine, a wrong type is not.
  void opt(const json& obj, const std::string& where, const char* key, bool (json::*is)() const noexcept, const char* want) const {
    if (const json* v = find(obj, where, key)) type(*v, join(where, key), (v->*is)(), want);
  }

 private:
  std::string file_;
};

}  // namespace

json parse_manifest(const std::string& text, const std::string& name) {
  json m;
  try {
    if (size_t depth = limits::json_nesting_depth(text); depth > limits::kMaxJsonDepth)
      throw MatrixError(fmt::format("{}: JSON nested {} levels deep, over the limit of {}", name, depth, limits::kMaxJsonDepth));
    m = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number such as 1e400
    throw MatrixError(fmt::format("{}: not valid JSON ({})", name, e.what()));
  }
  const ManifestReader rd(name);
  if (const std::string kind = rd.str(m, "", "kind"); kind != "cuzk-matrix")
    rd.fail("kind", fmt::format("is \"{}\" (expected \"cuzk-matrix\": is this a matrix folder?)", kind));
  if (const json* v = rd.find(m, "", "version"); v && *v != 1)
    rd.fail("version", fmt::format("is {} (this cuzk-bench reads version 1)", v->dump()));
  if (const std::string mode = rd.str(m, "", "mode"); mode != "factorial" && mode != "variants")
    rd.fail("mode", fmt::format("is \"{}\" (expected \"factorial\" or \"variants\")", mode));
  const json& flags = rd.array(m, "", "flags");
  for (size_t i = 0; i < flags.size(); ++i) rd.type(flags[i], ManifestReader::index("flags", i), flags[i].is_string(), "a string");
  const std::string baseline = rd.str(m, "", "baseline");
  rd.opt(m, "", "injected", &json::is_boolean, "true or false");
  rd.opt(m, "", "rounds", &json::is_number_unsigned, "a non-negative integer");
  rd.opt(m, "", "status", &json::is_string, "a string");
  const json& variants = rd.array(m, "", "variants");
  std::set<std::string> names;
  for (size_t i = 0; i < variants.size(); ++i) {
    const std::string w = ManifestReader::index("variants", i);
    const json& v = variants[i];
    const std::string name = rd.str(v, w, "name");
    if (!names.insert(name).second) rd.fail(ManifestReader::join(w, "name"), fmt::format("\"{}\" names a variant twice", name));
    const json& vf = rd.need(v, w, "flags");
    rd.type(vf, ManifestReader::join(w, "flags"), vf.is_object(), "an object (flag -> true or false)");
    for (const auto& f : flags) {
      const std::string wf = ManifestReader::join(w, "flags") + "." + f.get<std::string>();
      const auto it = vf.find(f.get<std::string>());
      if (it == vf.end()) rd.fail(wf, "is missing");
      rd.type(*it, wf, it->is_boolean(), "true or false");
    }
    (void)rd.str(v, w, "results");
    const json& rounds = rd.array(v, w, "rounds");
    for (size_t r = 0; r < rounds.size(); ++r)  // null: a failed run (docs/reliability.md)
      rd.type(rounds[r], ManifestReader::index(ManifestReader::join(w, "rounds"), r), rounds[r].is_string() || rounds[r].is_null(),
              "a string or null");
  }
  if (!names.count(baseline)) rd.fail("baseline", fmt::format("is \"{}\", which is not among the variants", baseline));
  rd.opt(m, "", "warmup_rounds", &json::is_number_unsigned, "a non-negative integer");
  rd.opt(m, "", "failure", &json::is_string, "a string");
  // A stop's record: "interrupted" at the top level, and in each resumption's "after".
  auto check_stop = [&](const json& in, const std::string& w) {
    rd.type(in, w, in.is_object(), "an object");
    rd.opt(in, w, "signal", &json::is_string, "a string");
    rd.opt(in, w, "round", &json::is_number_unsigned, "a non-negative integer");
    rd.opt(in, w, "variant", &json::is_string, "a string");
  };
  if (const json* in = rd.find(m, "", "interrupted")) check_stop(*in, "interrupted");
  if (const json* resumed = rd.find(m, "", "resumed")) {  // matrix --resume (docs/matrix.md, "Resuming a matrix")
    rd.type(*resumed, "resumed", resumed->is_array(), "an array");
    for (size_t i = 0; i < resumed->size(); ++i) {
      const std::string w = ManifestReader::index("resumed", i);
      const json& r = (*resumed)[i];
      (void)rd.str(r, w, "started");
      const json& runs = rd.need(r, w, "runs");
      rd.type(runs, ManifestReader::join(w, "runs"), runs.is_number_unsigned(), "a non-negative integer");
      rd.opt(r, w, "machine", &json::is_object, "an object");
      rd.opt(r, w, "machine_mismatch", &json::is_boolean, "true or false");
      if (const json* after = rd.find(r, w, "after")) {
        const std::string wa = ManifestReader::join(w, "after");
        rd.type(*after, wa, after->is_object(), "an object");
        if (const json* in = rd.find(*after, wa, "interrupted")) check_stop(*in, ManifestReader::join(wa, "interrupted"));
      }
      if (const json* reran = rd.find(r, w, "reran")) {
        const std::string wr = ManifestReader::join(w, "reran");
        rd.type(*reran, wr, reran->is_array(), "an array");
        for (size_t j = 0; j < reran->size(); ++j) {
          const std::string we = ManifestReader::index(wr, j);
          const json& e = (*reran)[j];
          (void)rd.str(e, we, "variant");
          const json& round = rd.need(e, we, "round");
          rd.type(round, ManifestReader::join(we, "round"), round.is_number_unsigned(), "a non-negative integer");
        }
      }
    }
  }
  if (const json* failed = rd.find(m, "", "failed_runs")) {
    rd.type(*failed, "failed_runs", failed->is_array(), "an array");
    for (size_t i = 0; i < failed->size(); ++i) {
      const std::string w = ManifestReader::index("failed_runs", i);
      const json& f = (*failed)[i];
      rd.type(f, w, f.is_object(), "an object");
      rd.opt(f, w, "round", &json::is_number_unsigned, "a non-negative integer");
      rd.opt(f, w, "warmup", &json::is_boolean, "true or false");
      rd.opt(f, w, "variant", &json::is_string, "a string");
      rd.opt(f, w, "reason", &json::is_string, "a string");
      rd.opt(f, w, "exit_code", &json::is_number_integer, "an integer");
      rd.opt(f, w, "timed_out", &json::is_boolean, "true or false");
      rd.opt(f, w, "results", &json::is_string, "a string");
    }
  }
  return m;
}

json read_manifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / "manifest.json").string();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT)
    throw MatrixError(fmt::format("{}: no such file (is {} a matrix folder?)", path, dir));
  InputFile in(path, throw_as<MatrixError>);
  return parse_manifest(in.read_all(limits::kMaxJsonDocumentBytes, "a matrix manifest"), path);
}

const char* run_state_name(RunState s) {
  switch (s) {
    case RunState::kFinished: return "finished";
    case RunState::kFailed: return "failed";
    case RunState::kDiscarded: return "discarded";
    case RunState::kPartial: return "partial";
    case RunState::kNotRun: return "never run";
  }
  return "";
}

std::string state_counts(std::initializer_list<std::pair<RunState, size_t>> counts) {
  std::string s;
  for (const auto& [state, n] : counts)
    if (n) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n, run_state_name(state));
  return s;
}

std::string round_file(const std::string& variant, int round) { return fmt::format("rounds/{}-{}.jsonl", variant, round); }

bool unfinished_status(const json& manifest) {
  const std::string status = manifest.value("status", "complete");
  return status == "interrupted" || status == "running" || status == "failed";
}

int Unfinished::finished() const {
  int n = 0;
  for (const auto& v : variants) n += v.finished;
  return n;
}

int Unfinished::of() const {
  int n = 0;
  for (const auto& v : variants) n += v.of;
  return n;
}

namespace {

// What is left of one run of a matrix that did not complete, from its round file.
enum class RunFile { kFinished, kPartial, kMissing };

// Finished: the file reads as a results file to its end, and that end is the run's own summary
// (not one written because a signal stopped it). Partial: it exists but is cut short, cannot be
// read, or was stopped. Missing: the run never started.
RunFile run_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec)) || ec) return RunFile::kMissing;
  try {
    const ResultsFile f = read_results(path);
    return f.summary && !f.summary->value.contains("interrupted") ? RunFile::kFinished : RunFile::kPartial;
  } catch (const ResultsError&) {
    return RunFile::kPartial;
  }
}

// How the matrix stopped, from its manifest: "Interrupted by SIGTERM in round 4 of presize".
std::string how_it_stopped(const Unfinished& u, int warmup) {
  if (u.status == "interrupted") {
    const int round = u.interrupted.value("round", -1);
    const std::string who = u.interrupted.value("variant", "");
    std::string s = "Interrupted by " + u.interrupted.value("signal", "a signal");
    if (round >= 0 && !who.empty()) s += fmt::format(" in round {}{} of {}", round, round < warmup ? " (warm-up)" : "", who);
    return s;
  }
  if (u.status == "failed") return u.failure.empty() ? "Stopped by a failed run" : "Stopped by a failed run (" + u.failure + ")";
  return "Stopped without a word (killed, or its machine lost: its manifest still says \"running\")";
}

// The measured runs of `v` that were left out, counted: "1 discarded, 3 never run".
std::string left_out_counts(const Unfinished::Variant& v) {
  return state_counts({{RunState::kFailed, v.failed.size()},
                       {RunState::kDiscarded, v.discarded.size()},
                       {RunState::kPartial, v.partial.size()},
                       {RunState::kNotRun, v.not_run.size()}});
}

// The runs stops discarded: the one named in "interrupted" (a matrix stopped by a signal), and
// each one an earlier sitting's stop named (a resumption's "after") that no resumption since has
// started again (its "reran"): until then its round file, even a whole one, is the discarded run's.
std::set<std::pair<std::string, int>> discarded_runs(const json& m) {
  std::set<std::pair<std::string, int>> out;
  auto named = [](const json& stop) -> std::optional<std::pair<std::string, int>> {
    if (!stop.is_object() || !stop.contains("variant") || !stop.contains("round")) return std::nullopt;
    return std::pair{stop["variant"].get<std::string>(), stop["round"].get<int>()};
  };
  if (m.value("status", "") == "interrupted")
    if (auto run = named(m.value("interrupted", json::object()))) out.insert(*run);
  const json resumed = m.value("resumed", json::array());
  for (size_t k = 0; k < resumed.size(); ++k) {
    const auto run = named(resumed[k].value("after", json::object()).value("interrupted", json::object()));
    if (!run) continue;
    bool again = false;
    for (size_t j = k; j < resumed.size() && !again; ++j)
      for (const auto& e : resumed[j].value("reran", json::array()))
        again = again || (e["variant"] == run->first && e["round"] == run->second);
    if (!again) out.insert(*run);
  }
  return out;
}

// The runs of an unfinished matrix that finished (Input::unfinished), from their states: the
// measured ones in `r.rounds` ("" for each one left out, with why in `uv`), the warm-ups in `r.warmups`.
void finished_runs(const std::string& dir, const Unfinished& u, const std::vector<RunState>& states, int warmup,
                   VariantRun& r, Unfinished::Variant& uv) {
  auto file_of = [&](int round) { return (fs::path(dir) / round_file(r.name, round)).string(); };
  for (int w = 0; w < warmup; ++w)
    if (states[static_cast<size_t>(w)] == RunState::kFinished) r.warmups.push_back(file_of(w));
  uv.name = r.name;
  uv.of = static_cast<int>(r.rounds.size());
  for (size_t i = 0; i < r.rounds.size(); ++i) {
    const int round = warmup + static_cast<int>(i);
    std::vector<int>* left_out = nullptr;
    switch (states[static_cast<size_t>(round)]) {
      case RunState::kFinished: break;
      case RunState::kFailed: left_out = &uv.failed; break;
      case RunState::kDiscarded: left_out = &uv.discarded; break;
      case RunState::kPartial: left_out = &uv.partial; break;
      case RunState::kNotRun: left_out = &uv.not_run; break;
    }
    if (left_out) {
      left_out->push_back(round);
      r.rounds[i].clear();
    } else {
      ++uv.finished;
    }
  }
  if (uv.finished == 0) {
    std::string how = how_it_stopped(u, warmup);
    how.front() = static_cast<char>(std::tolower(static_cast<unsigned char>(how.front())));
    throw MatrixError(fmt::format("{}: nothing of variant {} finished ({}: of its {} measured runs, {}): there is nothing "
                                  "to analyse",
                                  dir, r.name, how, uv.of, uv.of ? left_out_counts(uv) : "none"));
  }
}

}  // namespace

Input load_input(const std::string& dir, const CompareOptions& compare) {
  const json m = read_manifest(dir);  // every field below has been checked
  Input in;
  in.compare = compare;
  in.mode = m["mode"].get<std::string>();
  in.flags = m["flags"].get<std::vector<std::string>>();
  in.baseline = m["baseline"].get<std::string>();
  in.injected = m.value("injected", false);
  if (unfinished_status(m)) {
    Unfinished u;
    u.status = m["status"].get<std::string>();
    u.interrupted = u.status == "interrupted" ? m.value("interrupted", json::object()) : json(nullptr);
    u.failure = m.value("failure", "");
    in.unfinished = std::move(u);
  }
  const int warmup = m.value("warmup_rounds", 0);
  const auto states = in.unfinished ? run_states(dir, m) : std::vector<std::vector<RunState>>();
  for (const auto& v : m["variants"]) {
    VariantRun r;
    r.name = v["name"].get<std::string>();
    for (const auto& fl : in.flags) r.flags.push_back(v["flags"][fl].get<bool>());
    r.results = (fs::path(dir) / v["results"].get<std::string>()).string();
    for (const auto& rf : v["rounds"])  // null: a failed run (docs/reliability.md)
      r.rounds.push_back(rf.is_null() ? std::string() : (fs::path(dir) / rf.get<std::string>()).string());
    if (in.unfinished) {
      in.unfinished->variants.emplace_back();
      finished_runs(dir, *in.unfinished, states[in.variants.size()], warmup, r, in.unfinished->variants.back());
    }
    in.variants.push_back(std::move(r));
  }
  if (in.unfinished) in.unfinished->how = how_it_stopped(*in.unfinished, warmup);
  return in;
}

std::vector<std::vector<RunState>> run_states(const std::string& dir, const json& m) {
  const int warmup = m.value("warmup_rounds", 0);
  const auto discarded = discarded_runs(m);
  const json failed_runs = m.value("failed_runs", json::array());
  std::vector<std::vector<RunState>> out;
  for (const auto& v : m["variants"]) {
    const std::string name = v["name"].get<std::string>();
    const json& rounds = v["rounds"];
    std::vector<RunState>& states = out.emplace_back();
    for (int round = 0; round < warmup + static_cast<int>(rounds.size()); ++round) {
      // A failed measured run is null in its variant's rounds; a failed warm-up is only listed.
      bool failed = round >= warmup && rounds[static_cast<size_t>(round - warmup)].is_null();
      if (round < warmup)
        for (const auto& f : failed_runs) failed = failed || (f.value("variant", "") == name && f.value("round", -1) == round);
      if (failed) {
        states.push_back(RunState::kFailed);
      } else if (discarded.count({name, round})) {
        states.push_back(RunState::kDiscarded);  // stopped by the signal: its file may even end with a summary
      } else {
        const RunFile f = run_file((fs::path(dir) / round_file(name, round)).string());
        states.push_back(f == RunFile::kFinished ? RunState::kFinished
                         : f == RunFile::kPartial ? RunState::kPartial
                                                  : RunState::kNotRun);
      }
    }
  }
  return out;
}

RunSpec read_run_spec(const json& m, const std::string& name) {
  const ManifestReader rd(name);  // `m` passed parse_manifest: the fields it checks are not checked again
  auto uint_of = [&](const char* key) {  // a manifest in memory holds signed integers, one read back unsigned
    const json& v = rd.need(m, "", key);
    rd.type(v, key, v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= std::numeric_limits<int>::max(),
            "a non-negative integer");
    return v.get<int>();
  };
  auto bool_of = [&](const char* key) {
    const json& v = rd.need(m, "", key);
    rd.type(v, key, v.is_boolean(), "true or false");
    return v.get<bool>();
  };
  RunSpec s;
  s.warmup = uint_of("warmup_rounds");
  s.rounds = uint_of("rounds");
  s.reps = uint_of("reps_per_round");
  if (s.reps < 1) rd.fail("reps_per_round", "must be at least 1");
  s.suite = rd.str(m, "", "suite");
  s.suite_file = rd.str(m, "", "suite_file");
  s.backend = rd.str(m, "", "backend");
  s.source_hash = rd.str(m, "", "source_hash");
  s.on_failure = rd.str(m, "", "on_failure");
  const json& cases = rd.array(m, "", "cases");
  for (size_t i = 0; i < cases.size(); ++i) {
    rd.type(cases[i], ManifestReader::index("cases", i), cases[i].is_string(), "a string");
    s.cases.push_back(cases[i].get<std::string>());
  }
  s.quick = bool_of("quick");
  s.stable = bool_of("stable");
  const json& timeout = rd.need(m, "", "run_timeout_s");
  rd.type(timeout, "run_timeout_s", timeout.is_number() && timeout.get<double>() >= 0, "a non-negative number");
  s.run_timeout = timeout.get<double>();
  if (const json* c = rd.find(m, "", "counters")) {
    rd.type(*c, "counters", c->is_string(), "a string");
    s.counters = c->get<std::string>();
  }
  if (const json* c = rd.find(m, "", "cache_sim")) {
    rd.type(*c, "cache_sim", c->is_boolean(), "true or false");
    s.cache_sim = c->get<bool>();
  }
  s.machine = rd.need(m, "", "machine");
  rd.type(s.machine, "machine", s.machine.is_object(), "an object");
  const auto flags = m["flags"].get<std::vector<std::string>>();
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < m["variants"].size(); ++i) {
    const json& v = m["variants"][i];
    const std::string w = ManifestReader::index("variants", i);
    RunSpec::Variant sv;
    sv.name = v["name"].get<std::string>();
    sv.binary = rd.str(v, w, "binary");
    if (const json* inj = rd.find(v, w, "inject"); inj && !inj->is_null()) {
      rd.type(*inj, ManifestReader::join(w, "inject"), inj->is_string(), "a string or null");
      sv.inject = inj->get<std::string>();
    }
    const json& vars = rd.need(v, w, "cache_variables");
    rd.type(vars, ManifestReader::join(w, "cache_variables"), vars.is_object(), "an object");
    for (const auto& [k, val] : vars.items()) {
      rd.type(val, ManifestReader::join(w, "cache_variables") + "." + k, val.is_string(), "a string");
      sv.cache_variables[k] = val.get<std::string>();
    }
    for (const auto& f : flags) sv.flags.push_back(v["flags"][f].get<bool>());
    if (v["rounds"].size() != static_cast<size_t>(s.rounds))
      rd.fail(ManifestReader::join(w, "rounds"), fmt::format("has {} entries for {} measured rounds", v["rounds"].size(), s.rounds));
    index[sv.name] = i;
    s.variants.push_back(std::move(sv));
  }
  if (const json* bin = rd.find(m, "", "bin")) {
    rd.type(*bin, "bin", bin->is_string() || bin->is_null(), "a string or null");
    s.one_binary = bin->is_string();
  } else {  // written before "bin" was: --bin is the only way variants share one binary
    s.one_binary = std::all_of(s.variants.begin(), s.variants.end(),
                               [&](const RunSpec::Variant& v) { return v.binary == s.variants.front().binary; });
  }
  const json& order = rd.array(m, "", "order");
  if (order.size() != static_cast<size_t>(s.warmup + s.rounds))
    rd.fail("order", fmt::format("has {} rounds, not the {} warm-up and {} measured ones", order.size(), s.warmup, s.rounds));
  for (size_t r = 0; r < order.size(); ++r) {
    const std::string w = ManifestReader::index("order", r);
    rd.type(order[r], w, order[r].is_array(), "an array of variant names");
    std::vector<size_t>& round = s.order.emplace_back();
    for (size_t p = 0; p < order[r].size(); ++p) {
      const json& v = order[r][p];
      rd.type(v, ManifestReader::index(w, p), v.is_string(), "a string");
      auto it = index.find(v.get<std::string>());
      if (it == index.end()) rd.fail(ManifestReader::index(w, p), fmt::format("\"{}\" is not a variant", v.get<std::string>()));
      if (std::find(round.begin(), round.end(), it->second) != round.end())
        rd.fail(w, fmt::format("names \"{}\" twice", it->first));
      round.push_back(it->second);
    }
    if (round.size() != s.variants.size()) rd.fail(w, fmt::format("names {} of the {} variants", round.size(), s.variants.size()));
  }
  return s;
}

std::vector<Resumption> resumptions(const json& m) {
  std::vector<Resumption> out;
  for (const auto& r : m.value("resumed", json::array())) {  // checked by parse_manifest
    Resumption x;
    x.started = r["started"].get<std::string>();
    x.runs = r["runs"].get<int>();
    if (r.value("machine_mismatch", false)) x.other_machine = machine_identity(r.value("machine", json::object()));
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace cuzk::matrix
