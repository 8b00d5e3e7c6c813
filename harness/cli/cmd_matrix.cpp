// `cuzk-bench matrix (--variants P1,P2,... | --factorial F1,F2,...) --suite S [--case C]...
//                    [--rounds N] [--warmup N] [--reps N] [--seed N] [--backend cpu|cuda] ...`
//
// Which flag did it? Builds every variant (named presets, or every combination of the named
// flags: none is the baseline preset, one flag its own preset, several a preset generated from the
// baseline with their settings, built in build/fx-<flag>+<flag>...), refuses any binary whose provenance does not
// match the request and the current sources (as `ab` does), runs the suite's case(s) as separate
// processes interleaved in a fresh random order every round (seeded and recorded), merges each
// variant's rounds, and attributes every phase's change to variants or, for --factorial, to
// each flag and each two-flag interaction (harness/analysis/matrix.hpp). docs/matrix.md.
//
// Folder: results/local/<UTC time>-matrix/ with manifest.json (variants, flags, binaries, the
// order of every round, seed, machine; written before the first run and completed at the end),
// rounds/<variant>-<round>.jsonl, variants/<variant>.jsonl, attribution.{json,md}. Failed and
// timed-out runs (--run-timeout, --on-failure), SIGINT/SIGTERM: docs/reliability.md. --from on a
// matrix that did not complete (interrupted, killed, stopped by a failed run) merges and analyses
// its runs that finished, and says so (docs/matrix.md, "A matrix that did not complete"); --resume
// runs the rest of them as its manifest recorded them, then analyses it (docs/matrix.md,
// "Resuming a matrix").
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "harness/analysis/factorial.hpp"
#include "harness/analysis/matrix.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/power.hpp"
#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/run_failures.hpp"
#include "harness/cli/suite_runs.hpp"
#include "harness/cli/variant_builds.hpp"
#include "harness/cli/variant_provenance.hpp"
#include "harness/measure/inject.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/machine.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/output_lock.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/provenance.hpp"
#include "harness/suite/suite.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct MatrixOptions {
  std::string variants, factorial, baseline, suite;
  std::vector<std::string> cases;
  int rounds = 5, warmup = 1, reps = 1;
  int64_t seed = -1;  // -1: drawn from std::random_device, recorded
  std::string backend = "cpu";
  bool quick = false, stable = false;
  std::string out_dir, source_dir, bin;
  bool no_build = false, build_only = false, allow_dirty = false;
  std::vector<std::string> cmake_args;  // --cmake-arg: extra configure -D of every build
  std::vector<std::string> inject;
  std::string from;    // re-analyse a matrix folder
  std::string resume;  // run the runs of a matrix folder that did not complete
  std::vector<std::string> run_shaping_given;  // with --resume: the options it refuses that were given
  bool markdown = false, json_out = false, wide = false;
  bool allow_machine_mismatch = false;
  double level = 0.95;
  AnalysisChoices analysis;
  double run_timeout = 0;  // --run-timeout: seconds per process (0: none)
  std::string on_failure = "stop";
  std::string counters;    // --counters: passed to each run (e.g. sim: runs under callgrind)
  bool cache_sim = false;  // --cache-sim: passed to each run
};

struct Variant {
  std::string name;
  std::vector<bool> flags;  // factorial: per flag
  PresetInfo preset;
  std::string base_preset;  // generated variants: the preset they are configured from
  std::string binary;
  std::string inject;       // CUZK_INJECT_SLOWDOWN of its processes ("" none)
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// A flag of --factorial is a preset that differs from the baseline preset: its differences.
std::map<std::string, std::string> flag_settings(const std::string& src, const std::string& flag, const PresetInfo& base,
                                                 const std::vector<std::string>& presets) {
  if (std::find(presets.begin(), presets.end(), flag) == presets.end() || flag == base.name) {
    std::vector<std::string> flags;
    for (auto& p : presets) {
      if (p == base.name || p == "default") continue;
      flags.push_back(p);
    }
    throw Error(fmt::format("--factorial: unknown flag '{}' (flags are presets that differ from '{}': {})", flag, base.name,
                            join(flags, ", ")));
  }
  PresetInfo p = read_preset(src, flag);
  std::map<std::string, std::string> diff;
  for (auto& [k, v] : p.vars) {
    if (k == "CUZK_PRESET_NAME") continue;
    auto it = base.vars.find(k);
    if (it == base.vars.end() || it->second != v) diff[k] = v;
  }
  if (diff.empty()) throw Error(fmt::format("--factorial: preset '{}' sets nothing that '{}' does not", flag, base.name));
  return diff;
}

// The injection of one variant: every --inject entry whose flags (or variant name) it has on; the
// entries for one phase multiply (10% and 8% on proof/synth make 18.8%).
std::string variant_injection(const Variant& v, const std::vector<std::string>& flags,
                              const std::vector<std::pair<std::vector<std::string>, std::vector<inject::Slowdown>>>& entries) {
  std::map<std::pair<std::string, bool>, double> factor;
  for (const auto& [who, slow] : entries) {
    bool on = true;
    for (const auto& w : who) {
      auto it = std::find(flags.begin(), flags.end(), w);
      on = on && (it == flags.end() ? w == v.name : bool(v.flags[static_cast<size_t>(it - flags.begin())]));
    }
    if (!on) continue;
    for (const auto& s : slow) {
      auto& f = factor.try_emplace({s.phase, s.gpu}, 1.0).first->second;
      f *= 1 + s.pct / 100;
    }
  }
  std::vector<inject::Slowdown> out;
  for (auto& [k, f] : factor) out.push_back({k.first, (f - 1) * 100, k.second});
  return inject::format_spec(out);
}

// The failed runs a manifest records, as the analysis states them (docs/reliability.md).
struct FailedRuns {
  json runs = json::array();
  std::vector<std::string> variants;
  int rounds = 0;
  std::string markdown() const { return failed_runs_markdown(runs, variants, rounds); }
};

FailedRuns failed_runs_of(const json& m) {  // `m` from read_manifest: the fields read below are checked there
  FailedRuns f;
  f.runs = m.value("failed_runs", json::array());
  f.rounds = m.value("rounds", 0);
  for (const auto& v : m.value("variants", json::array())) f.variants.push_back(v.value("name", ""));
  return f;
}

// `unfinished`: the analysis of a matrix that did not complete, which every output says first;
// then that the matrix was resumed (its manifest's "resumed"), then its failed runs.
int report_analysis(const matrix::Attribution& a, const std::string& dir, const MatrixOptions& o,
                    const std::optional<matrix::Unfinished>& unfinished = std::nullopt) {
  const json m = matrix::read_manifest(dir);
  const FailedRuns failed = failed_runs_of(m);
  const std::vector<matrix::Resumption> resumed = matrix::resumptions(m);
  json aj = matrix::to_json(a);
  if (unfinished) aj["partial"] = matrix::unfinished_json(*unfinished);
  if (!resumed.empty()) aj["resumed"] = matrix::resumed_json(resumed);
  if (!failed.runs.empty()) {
    aj["failed_runs"] = failed.runs;
    aj["runs_failed"] = failed_run_counts(failed.runs, failed.variants, failed.rounds);
  }
  write_output_file(dir + "/attribution.json", aj.dump(2) + "\n");
  matrix::FormatOptions f;
  f.wide = o.wide;
  const std::string top = (unfinished ? matrix::format_unfinished(*unfinished) : std::string()) +
                          (resumed.empty() ? std::string() : matrix::resumed_statement(resumed) + "\n\n") + failed.markdown();
  write_output_file(dir + "/attribution.md", top + matrix::format_markdown(a, f));
  if (o.json_out)
    fmt::print("{}\n", aj.dump(2));
  else if (o.markdown)
    fmt::print("{}{}", top, matrix::format_markdown(a, f));
  else
    fmt::print("{}{}", top, matrix::format_table(a, f));
  fmt::print(stderr, "[matrix] results: {}\n", dir);
  return kExitOk;
}

// Merges a variant's rounds into its results file: the warm-ups first (marked), then the measured
// runs that count (a "" round is left out).
void merge_variant(const matrix::VariantRun& v) {
  std::vector<std::string> files = v.warmups;
  for (const auto& r : v.rounds)
    if (!r.empty()) files.push_back(r);
  try {
    fs::create_directories(fs::path(v.results).parent_path());
    merge_rounds(files, static_cast<int>(v.warmups.size()), v.results);
  } catch (const std::exception& e) {
    throw Error(fmt::format("merging the rounds of {}: {}", v.name, e.what()), kExitInternal);
  }
}

CompareOptions compare_options(const MatrixOptions& o, bool injected) {
  CompareOptions co;
  co.analysis = o.analysis;
  co.allow_machine_mismatch = o.allow_machine_mismatch;
  co.ci_level = o.level;
  co.allow_injected = injected;  // the planted slowdowns were asked for (--inject), and every output says so
  return co;
}

// The options every run process of a matrix gets, after its suite, reps and output.
std::string run_extra(bool quick, const std::vector<std::string>& cases, const std::string& backend,
                      const std::string& counters, bool cache_sim, bool stable) {
  std::string extra;
  if (quick) extra += " --quick";
  for (auto& c : cases) extra += " --case " + shell_quote(c);
  extra += " --backend " + shell_quote(backend) + (counters.empty() ? std::string() : " --counters " + shell_quote(counters)) +
           (cache_sim ? " --cache-sim" : "");
  extra += stable ? std::string(" --stable") : std::string(" --warmup 0");
  return extra;
}

// The runs of a matrix, fresh or resumed, and its manifest, which says at every step where they
// are. Both are made as the manifest records them (matrix::read_run_spec), so that what a fresh
// matrix runs is what a resumed one would.
struct MatrixRuns {
  MatrixRuns(std::string dir_, json manifest_, const matrix::RunSpec& spec)
      : dir(std::move(dir_)),
        manifest(std::move(manifest_)),
        order(spec.order),
        warmup(spec.warmup),
        rounds(spec.rounds),
        reps(spec.reps),
        suite_path(spec.suite_file),
        extra(run_extra(spec.quick, spec.cases, spec.backend, spec.counters.value_or(""), spec.cache_sim.value_or(false),
                        spec.stable)),
        run_timeout(spec.run_timeout),
        on_failure(parse_on_failure(spec.on_failure)) {
    for (const auto& sv : spec.variants) {
      Variant v;
      v.name = sv.name;
      v.flags = sv.flags;
      v.binary = sv.binary;
      v.inject = sv.inject;
      vs.push_back(std::move(v));
    }
  }

  std::string dir;
  json manifest;
  std::vector<Variant> vs;
  std::vector<std::vector<size_t>> order;  // per round, warm-ups first: variant indices in run order
  int warmup = 0, rounds = 0, reps = 1;
  std::string suite_path, extra;
  double run_timeout = 0;
  OnFailure on_failure = OnFailure::kStop;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  int total() const { return warmup + rounds; }
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  std::string round_file(size_t i, int r) const { return matrix::round_file(vs[i].name, r); }
  void write_manifest() {
    std::vector<std::string> names;
    for (auto& v : vs) names.push_back(v.name);
    manifest["runs_failed"] = failed_run_counts(manifest["failed_runs"], names, rounds);
    write_output_file(dir + "/manifest.json", manifest.dump(2) + "\n");
  }

  // Runs every run that `todo` marks ([variant][round]), in the recorded order, and marks in `ok`
  // each that succeeds; `starting(i, r)` is called before each. A failed run is recorded and stops
  // the matrix (exit 1) or not by --on-failure; SIGINT/SIGTERM reach the running process (its own
  // group) and stop the matrix: exit 130/143, status "interrupted" (docs/reliability.md).
  void run(const std::vector<std::vector<bool>>& todo, std::vector<std::vector<bool>>& ok,
           const std::function<void(size_t, int)>& starting = {}) {
    auto stop_interrupted = [&](int sig, int r, const std::string& who) {
      manifest["status"] = "interrupted";
      manifest["interrupted"] = {{"signal", interrupt::signal_name(sig)}, {"round", r}, {"variant", who}};
      write_manifest();
      return Error(fmt::format("interrupted by {} in round {} of {}: the run was discarded; the manifest says so: {}",
                               interrupt::signal_name(sig), r, who, dir),
                   interrupt::exit_code(sig));
    };
    size_t runs = 0;
    for (const auto& v : todo) runs += static_cast<size_t>(std::count(v.begin(), v.end(), true));
    size_t started = 0;  // runs begun, for the estimate of what is left
    for (int r = 0; r < total(); ++r) {
      for (size_t i : order[static_cast<size_t>(r)]) {
        if (!todo[i][static_cast<size_t>(r)]) continue;
        const Variant& v = vs[i];
        const std::string out = dir + "/" + round_file(i, r);
        // What is left, at the mean time of the runs so far: a sector-size matrix takes tens of minutes.
        const std::string left =
            started ? fmt::format(", about {} left", output::duration(elapsed() / double(started) * double(runs - started))) : "";
        fmt::print(stderr, "[matrix] round {}/{}{} {} elapsed {:.1f}s{}\n", r + 1, total(), r < warmup ? " (warm-up)" : "", v.name,
                   elapsed(), left);
        ++started;
        if (starting) starting(i, r);
        const std::string env = v.inject.empty() ? "env -u " + std::string(inject::kEnvVar) + " "
                                                 : "env " + std::string(inject::kEnvVar) + "=" + shell_quote(v.inject) + " ";
        const std::string cmd = env + suite_run_command(v.binary, suite_path, reps, out, extra, r);
        ChildOptions co;
        co.timeout_s = run_timeout;
        const ChildResult c = run_child(cmd, co);
        if (c.interrupted) throw stop_interrupted(c.interrupted, r, v.name);
        if (c.code != 0) {
          const std::string why = c.failure();
          manifest["failed_runs"].push_back(failed_run_json(r, r < warmup, v.name, c.code, c.timed_out, why, round_file(i, r)));
          if (r >= warmup)  // the manifest lists the measured rounds that count: a failed one is null
            manifest["variants"][i]["rounds"][static_cast<size_t>(r - warmup)] = nullptr;
          if (on_failure == OnFailure::kStop) {
            manifest["status"] = "failed";
            manifest["failure"] = fmt::format("round {} of {}: {}", r, v.name, why);
            write_manifest();
            throw Error(fmt::format("round {} of {} failed ({}): {}; stopped (--on-failure stop)", r, v.name, why, cmd),
                        kExitFailure);
          }
          write_manifest();
          fmt::print(stderr, "[matrix] round {} of {} failed ({}); going on (--on-failure continue): it is left out and counted\n",
                     r, v.name, why);
          continue;
        }
        ok[i][static_cast<size_t>(r)] = true;
        if (const int sig = interrupt::signal_received()) throw stop_interrupted(sig, r, v.name);
      }
    }
  }

  // Merges each variant's runs that succeeded (`ok`) and marks the matrix complete; the input of
  // its attribution. A variant none of whose measured runs succeeded fails the matrix (exit 1).
  matrix::Input complete(const std::vector<std::vector<bool>>& ok, const CompareOptions& compare) {
    matrix::Input in;
    in.mode = manifest["mode"].get<std::string>();
    in.flags = manifest["flags"].get<std::vector<std::string>>();
    in.baseline = manifest["baseline"].get<std::string>();
    in.injected = manifest.value("injected", false);
    in.compare = compare;
    for (size_t i = 0; i < vs.size(); ++i) {
      const Variant& v = vs[i];
      matrix::VariantRun run;  // the runs that succeeded
      run.name = v.name;
      run.flags = v.flags;
      run.results = dir + "/variants/" + v.name + ".jsonl";
      for (int r = 0; r < total(); ++r) {
        const std::string f = dir + "/" + round_file(i, r);
        const bool good = ok[i][static_cast<size_t>(r)];
        if (r < warmup) {
          if (good) run.warmups.push_back(f);
        } else {
          run.rounds.push_back(good ? f : std::string());  // "": a failed run, round kept in place
        }
      }
      if (std::all_of(run.rounds.begin(), run.rounds.end(), [](const std::string& f) { return f.empty(); })) {
        manifest["status"] = "failed";
        manifest["failure"] = fmt::format("every measured round of {} failed", v.name);
        write_manifest();
        throw Error(fmt::format("every measured round of {} failed: nothing to attribute (see {}/manifest.json)", v.name, dir),
                    kExitFailure);
      }
      merge_variant(run);
      in.variants.push_back(std::move(run));
    }
    manifest["status"] = "complete";
    manifest["finished"] = utc_stamp();
    const int all = total() * static_cast<int>(vs.size());
    manifest["runs"] = all;
    manifest["runs_ok"] = all - static_cast<int>(manifest["failed_runs"].size());
    return in;
  }
};

int analyse_complete(const matrix::Input& in, const std::string& dir, const MatrixOptions& o) {
  try {
    return report_analysis(matrix::attribute(in), dir, o);
  } catch (const matrix::MatrixError& e) {
    throw Error(e.what(), kExitInternal);
  } catch (const CompareError& e) {
    throw Error(e.what(), kExitInternal);
  }
}

int resume_matrix(const MatrixOptions& o);

int run_matrix(const MatrixOptions& o) {
  check_analysis_options(o.analysis);
  if (!(o.level >= 0.5 && o.level < 1)) throw Error(fmt::format("--level must be in [0.5, 1) (got {})", o.level));
  if (!o.resume.empty()) return resume_matrix(o);
  if (!o.from.empty()) {
    if (!o.variants.empty() || !o.factorial.empty()) throw Error("--from re-analyses a matrix folder: it takes no --variants or --factorial");
    matrix::Input in;
    try {
      // A matrix that did not complete has no merged results: they are written here, from the
      // runs that finished, with the folder claimed as a running matrix claims it (one still
      // running is refused: its runs are not over).
      FolderClaim claim;
      if (matrix::unfinished_status(matrix::read_manifest(o.from))) claim = FolderClaim(o.from, "--from", false);
      in = matrix::load_input(o.from, compare_options(o, false));
      in.compare.allow_injected = in.injected;
      if (in.unfinished) {
        for (const auto& v : in.variants) merge_variant(v);
        fmt::print(stderr, "[matrix] {}: merged the {} of {} measured runs that finished into {}/variants/\n",
                   in.unfinished->status, in.unfinished->finished(), in.unfinished->of(), o.from);
      }
      return report_analysis(matrix::attribute(in), o.from, o, in.unfinished);
    } catch (const matrix::MatrixError& e) {
      throw Error(e.what());
    } catch (const CompareError& e) {
      throw Error(e.what());
    }
  }
  // Before the first child (git, a build, a provenance check, a run): a signal at any point ends
  // every child and the matrix with exit 130/143 (docs/reliability.md).
  interrupt::install();
  if (o.variants.empty() == o.factorial.empty()) throw Error("name the variants: --variants P1,P2,... or --factorial F1,F2,...");
  if (o.suite.empty()) throw Error("--suite is required");
  if (o.rounds < 2) throw Error(fmt::format("--rounds must be at least 2 (got {}): one round has no noise to judge by", o.rounds));
  if (o.warmup < 0) throw Error(fmt::format("--warmup must be 0 or more (got {})", o.warmup));
  if (o.reps < 1) throw Error(fmt::format("--reps must be at least 1 (got {})", o.reps));
  if (o.backend != "cpu" && o.backend != "cuda") throw Error(fmt::format("--backend must be cpu or cuda (got '{}')", o.backend));
  if (o.seed < -1) throw Error(fmt::format("--seed must be 0 or more (got {})", o.seed));
  check_run_timeout(o.run_timeout);
  (void)parse_on_failure(o.on_failure);
  if (inject::active())
    throw Error(fmt::format("{} is set in matrix's own environment: unset it (plant effects per flag with --inject)", inject::kEnvVar));
  const std::string src =
      fs::weakly_canonical(o.source_dir.empty() ? std::string(build_provenance().source_dir) : o.source_dir).string();
  const bool fx = !o.factorial.empty();

  // Suite and cases, before anything is built or run.
  auto [suite_path, s] = load_suite_for_runs(o.suite);
  for (auto& c : o.cases) {
    if (std::none_of(s.cases.begin(), s.cases.end(), [&](const suite::Case& k) { return k.name == c; })) {
      std::vector<std::string> names;
      for (auto& k : s.cases) names.push_back(k.name);
      throw Error(fmt::format("suite '{}' has no case '{}' (its cases: {})", s.name, c, join(names, ", ")));
    }
  }

  // The variants.
  std::vector<Variant> vs;
  std::vector<std::string> flags;
  std::string baseline;
  const std::vector<std::string> presets = preset_names(src);
  if (fx) {
    flags = split_list(o.factorial);
    if (flags.empty()) throw Error("--factorial names no flag");
    if (flags.size() > static_cast<size_t>(factorial::kMaxFlags))
      throw Error(fmt::format("--factorial takes at most {} flags (got {}): {} flags make {} builds and {} processes per "
                              "round; attribute fewer flags at once, or compare presets with --variants",
                              factorial::kMaxFlags, flags.size(), flags.size(), 1u << flags.size(), 1u << flags.size()));
    if (std::set<std::string>(flags.begin(), flags.end()).size() != flags.size())
      throw Error(fmt::format("--factorial names a flag twice: {}", o.factorial));
    baseline = o.baseline.empty() ? "baseline" : o.baseline;
    if (std::find(presets.begin(), presets.end(), baseline) == presets.end())
      throw Error(fmt::format("--baseline '{}' is not a preset of {}/CMakePresets.json", baseline, src));
    const PresetInfo base = read_preset(src, baseline);
    std::vector<std::map<std::string, std::string>> settings;
    for (auto& f : flags) settings.push_back(flag_settings(src, f, base, presets));
    for (size_t i = 0; i < flags.size(); ++i)
      for (size_t j = i + 1; j < flags.size(); ++j)
        for (auto& [k, v] : settings[i])
          if (settings[j].count(k) && settings[j].at(k) != v)
            throw Error(fmt::format("--factorial: flags '{}' and '{}' set {} differently", flags[i], flags[j], k));
    for (uint32_t bits = 0; bits < (1u << flags.size()); ++bits) {
      Variant v;
      std::vector<std::string> on;
      for (size_t f = 0; f < flags.size(); ++f) {
        v.flags.push_back((bits >> f) & 1u);
        if (v.flags.back()) on.push_back(flags[f]);
      }
      if (bits == 0) {
        v.name = baseline;
        v.preset = base;
      } else if (on.size() == 1) {  // one flag: its own preset (and build folder) is that variant
        v.name = on.front();
        v.preset = read_preset(src, on.front());
      } else {
        v.name = "fx-" + join(on, "+");
        v.preset = base;
        v.preset.name = v.name;
        v.preset.binary_dir = src + "/build/" + v.name;
        v.preset.vars["CUZK_PRESET_NAME"] = v.name;
        for (size_t f = 0; f < flags.size(); ++f)
          if (v.flags[f])
            for (auto& [k, val] : settings[f]) v.preset.vars[k] = val;
        v.base_preset = baseline;
      }
      vs.push_back(std::move(v));
    }
  } else {
    const auto names = split_list(o.variants);
    if (names.size() < 2)
      throw Error(fmt::format("--variants needs at least two presets to compare (got {}: '{}')", names.size(), o.variants));
    if (std::set<std::string>(names.begin(), names.end()).size() != names.size())
      throw Error(fmt::format("--variants names a preset twice: {}", o.variants));
    for (auto& n : names) {
      if (std::find(presets.begin(), presets.end(), n) == presets.end())
        throw Error(fmt::format("--variants: '{}' is not a preset of {}/CMakePresets.json (presets: {})", n, src, join(presets, ", ")));
      Variant v;
      v.name = n;
      v.preset = read_preset(src, n);
      vs.push_back(std::move(v));
    }
    baseline = !o.baseline.empty() ? o.baseline
               : std::find(names.begin(), names.end(), "baseline") != names.end() ? "baseline"
                                                                                : names.front();
    if (std::find(names.begin(), names.end(), baseline) == names.end())
      throw Error(fmt::format("--baseline '{}' is not among --variants {}", baseline, o.variants));
  }

  // Planted effects (--inject WHO:SPEC, WHO = a flag, flags joined by '+', or a variant's name).
  std::vector<std::pair<std::vector<std::string>, std::vector<inject::Slowdown>>> entries;
  for (auto& e : o.inject) {
    const auto colon = e.find(':');
    if (colon == std::string::npos || colon == 0)
      throw Error(fmt::format("--inject '{}': expected WHO:SPEC, e.g. pinned:proof/synth=10% or pinned+smallvec:proof=5%", e));
    std::vector<std::string> who;
    std::stringstream ss(e.substr(0, colon));
    for (std::string w; std::getline(ss, w, '+');) {
      const bool known = std::find(flags.begin(), flags.end(), w) != flags.end() ||
                         std::any_of(vs.begin(), vs.end(), [&](const Variant& v) { return v.name == w; });
      if (!known) throw Error(fmt::format("--inject '{}': '{}' is neither a flag nor a variant of this matrix", e, w));
      who.push_back(w);
    }
    try {
      entries.push_back({who, inject::parse_spec(e.substr(colon + 1))});
    } catch (const inject::InjectError& err) {
      throw Error(fmt::format("--inject '{}': {}", e, err.what()));
    }
  }
  for (auto& v : vs) v.inject = variant_injection(v, flags, entries);
  if (!o.cmake_args.empty()) {
    if (!o.bin.empty() || o.no_build) throw Error("--cmake-arg applies to builds: it goes without --no-build and --bin");
    std::vector<const PresetInfo*> presets;
    for (auto& v : vs) presets.push_back(&v.preset);
    check_cmake_args(o.cmake_args, presets);
  }
  const bool injected = !entries.empty();

  // The tree must be committed: the manifest names the commit the builds came from.
  std::string dirty, head;
  stop_on_signal("checking the source tree", [&] {
    dirty = git_dirty(src);
    head = git_head(src);
  });
  if (!dirty.empty() && !o.allow_dirty)
    throw Error(fmt::format("{} has uncommitted changes ({}): the manifest would name a commit the builds did not come "
                            "from; commit them, or pass --allow-dirty",
                            src, dirty.substr(0, dirty.find('\n'))));

  const std::string dir = o.out_dir.empty() ? fmt::format("results/local/{}-matrix", utc_stamp()) : o.out_dir;
  // Claimed before any build or run, until the matrix ends (harness/measure/output_lock.hpp).
  FolderClaim claim(dir, "--out-dir", /*require_empty=*/true);

  // Builds and provenance.
  std::string hash;
  const bool given = !o.bin.empty();
  stop_on_signal("building or checking the variants", [&] {
    hash = tree_hash(src);
    for (auto& v : vs) {
      if (given) {
        v.binary = fs::absolute(o.bin).string();
        check_binary(v.name, v.binary, std::nullopt, hash, true);
        continue;
      }
      v.binary = bench_binary(v.preset);
      if (!o.no_build) {
        fmt::print(stderr, "[matrix] building {} in {}\n", v.name, v.preset.binary_dir);
        build_variant(src, v.preset, v.base_preset, o.cmake_args);
      }
      check_binary(v.name, v.binary, v.preset, hash, false);
    }
  });
  fmt::print(stderr, "[matrix] provenance checked: {} binaries built from sources {}\n", given ? 1 : vs.size(), hash.substr(0, 16));
  if (o.build_only) {
    // Builds are CPU-bound and would disturb the measured runs if anything else shared the
    // machine; --build-only lets them run first, and a later --no-build run measure alone.
    for (auto& v : vs) fmt::print("{}\t{}\n", v.name, v.binary);
    return kExitOk;
  }
  // The variants are judged by compare's rank test, which needs some rounds to call anything: said
  // before the runs, not after an hour of sectors (the factorial's t intervals have no such floor).
  if (const double alpha = compare_options(o, false).alpha; !fx && o.rounds < power::min_runs_rank_test(alpha))
    fmt::print(stderr,
               "[matrix] warning: with {} rounds no variant's change can be called: the exact rank test needs at least {} "
               "values a side at alpha {:g}; this run will give sizes and intervals, not verdicts\n",
               o.rounds, power::min_runs_rank_test(alpha), alpha);

  // The manifest first, so that an interrupted run leaves a folder that says what it was.
  const uint64_t seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  std::mt19937_64 rng(seed);
  const int total = o.warmup + o.rounds;
  std::vector<std::vector<size_t>> order(static_cast<size_t>(total));
  for (auto& r : order) {
    r.resize(vs.size());
    for (size_t i = 0; i < vs.size(); ++i) r[i] = i;
    std::shuffle(r.begin(), r.end(), rng);
  }
  fs::create_directories(dir + "/rounds");
  fs::create_directories(dir + "/variants");
  json manifest = {{"kind", "cuzk-matrix"},       {"version", 1},
                   {"status", "running"},         {"mode", fx ? "factorial" : "variants"},
                   {"flags", flags},              {"baseline", baseline},
                   {"suite", s.name},             {"suite_file", suite_path},
                   {"cases", o.cases},            {"rounds", o.rounds},
                   {"warmup_rounds", o.warmup},   {"reps_per_round", o.reps},
                   {"seed", seed},                {"backend", o.backend},
                   {"quick", o.quick},            {"stable", o.stable},
                   {"counters", o.counters},      {"cache_sim", o.cache_sim},
                   {"bin", given ? json(vs.front().binary) : json(nullptr)},
                   {"source_dir", src},           {"source_hash", hash},
                   {"git_commit", head}, {"dirty", !dirty.empty()},
                   {"cmake_args", o.cmake_args},
                   {"injected", injected},        {"machine", machine_json()},
                   {"started", utc_stamp()},      {"run_timeout_s", o.run_timeout},
                   {"on_failure", o.on_failure},  {"failed_runs", json::array()}};
  json jorder = json::array();
  for (auto& r : order) {
    json names = json::array();
    for (size_t i : r) names.push_back(vs[i].name);
    jorder.push_back(names);
  }
  manifest["order"] = jorder;  // warm-up rounds first
  json jv = json::array();
  for (auto& v : vs) {
    json fl = json::object();
    for (size_t f = 0; f < flags.size(); ++f) fl[flags[f]] = bool(v.flags[f]);
    json rounds = json::array();
    for (int r = o.warmup; r < total; ++r) rounds.push_back(matrix::round_file(v.name, r));
    jv.push_back({{"name", v.name},
                  {"flags", fl},
                  {"preset", v.base_preset.empty() ? v.preset.name : v.base_preset},
                  {"cache_variables", v.preset.vars},
                  {"binary", v.binary},
                  {"inject", v.inject.empty() ? json(nullptr) : json(v.inject)},
                  {"results", "variants/" + v.name + ".jsonl"},
                  {"rounds", rounds}});
  }
  manifest["variants"] = jv;
  const matrix::RunSpec spec = matrix::read_run_spec(manifest, dir + "/manifest.json");
  MatrixRuns m(dir, std::move(manifest), spec);
  m.write_manifest();

  const size_t nv = m.vs.size();
  std::vector<std::vector<bool>> ok(nv, std::vector<bool>(static_cast<size_t>(total), false));
  m.run(std::vector<std::vector<bool>>(nv, std::vector<bool>(static_cast<size_t>(total), true)), ok);
  matrix::Input in = m.complete(ok, compare_options(o, injected));
  m.manifest["elapsed_s"] = m.elapsed();
  m.write_manifest();
  fmt::print(stderr, "[matrix] {} runs ({} variants x {} rounds + {} warm-up) in {:.1f}s\n", total * static_cast<int>(nv), nv,
             o.rounds, o.warmup, m.elapsed());
  return analyse_complete(in, dir, o);
}

// The options that shape a matrix's runs: a resumed matrix takes them all from its manifest.
constexpr const char* kRunShapingOptions[] = {
    "--variants", "--factorial", "--baseline", "--suite",     "--case",       "--rounds",     "--warmup",
    "--reps",     "--seed",      "--backend",  "--counters",  "--cache-sim",  "--quick",      "--stable",
    "--out-dir",  "--source-dir", "--cmake-arg", "--no-build", "--build-only", "--bin",       "--allow-dirty",
    "--inject",   "--run-timeout", "--on-failure", "--from"};

// The command line of the runs of a matrix as their round files' headers record it: the first
// header found in the recorded order; nullopt when no round file has a readable one.
std::optional<std::vector<std::string>> recorded_run_command_line(const std::string& dir, const matrix::RunSpec& spec) {
  for (size_t r = 0; r < spec.order.size(); ++r)
    for (size_t i : spec.order[r]) {
      std::ifstream f(dir + "/" + matrix::round_file(spec.variants[i].name, static_cast<int>(r)));
      std::string line;
      if (!f || !std::getline(f, line)) continue;
      const json h = json::parse(line, nullptr, false);
      if (h.is_object() && h.value("type", "") == "header" && h.contains("command_line") && h["command_line"].is_array()) {
        std::vector<std::string> args;
        for (const auto& a : h["command_line"])
          if (a.is_string()) args.push_back(a.get<std::string>());
        return args;
      }
    }
  return std::nullopt;
}

// --counters and --cache-sim of a matrix's runs: as its manifest records them, or, in a manifest
// written before they were recorded, as its runs' own command line shows them.
std::pair<std::string, bool> counters_of_runs(const std::string& dir, const matrix::RunSpec& spec) {
  if (spec.counters && spec.cache_sim) return {*spec.counters, *spec.cache_sim};
  const auto args = recorded_run_command_line(dir, spec);
  if (!args)
    throw Error(fmt::format("{}/manifest.json does not record --counters and --cache-sim (written before matrix recorded "
                            "them) and no round file shows how its runs were made: cannot tell whether they were used; "
                            "start the matrix afresh",
                            dir));
  std::string counters;
  bool cache_sim = false;
  for (size_t k = 0; k < args->size(); ++k) {
    const std::string& a = (*args)[k];
    if (a == "--counters" && k + 1 < args->size()) counters = (*args)[k + 1];
    if (a.rfind("--counters=", 0) == 0) counters = a.substr(11);
    cache_sim = cache_sim || a == "--cache-sim";
  }
  return {counters, cache_sim};
}

// `matrix --resume DIR`: runs the runs of a matrix that did not complete that have not finished,
// in its recorded order, as its manifest says they were made, then merges and analyses it as a
// complete matrix (docs/matrix.md, "Resuming a matrix"). Everything is checked before any run, and
// a refusal changes nothing in the folder.
int resume_matrix(const MatrixOptions& o) {
  const std::string& dir = o.resume;
  if (!o.run_shaping_given.empty())
    throw Error(fmt::format("--resume runs the rest of a matrix as its manifest recorded it: it takes no {} (only the "
                            "analysis options: --level, --metric, --markdown, --json, ...)",
                            join(o.run_shaping_given, ", ")));
  // Before the first child (the binaries' provenance checks run them).
  interrupt::install();
  if (inject::active())
    throw Error(fmt::format("{} is set in matrix's own environment: unset it (a resumed matrix plants what its manifest "
                            "records)",
                            inject::kEnvVar));
  auto read = [&] {
    try {
      json m = matrix::read_manifest(dir);
      if (!matrix::unfinished_status(m))
        throw Error(fmt::format("{}: the matrix is complete: nothing to resume (matrix --from {} analyses it again)", dir, dir));
      return m;
    } catch (const matrix::MatrixError& e) {
      throw Error(e.what());
    }
  };
  read();  // a folder that is not a matrix's, or a complete one, is refused before it is claimed
  // Claimed as a running matrix claims it, until the end: one still running into it is refused.
  FolderClaim claim(dir, "--resume", false);
  json manifest = read();
  matrix::RunSpec spec;
  try {
    spec = matrix::read_run_spec(manifest, dir + "/manifest.json");
  } catch (const matrix::MatrixError& e) {
    throw Error(e.what());
  }
  check_run_timeout(spec.run_timeout);
  (void)parse_on_failure(spec.on_failure);  // checked before anything changes (MatrixRuns uses it)
  const auto [counters, cache_sim] = counters_of_runs(dir, spec);

  // The machine: its runs are compared with those that ran before, as compare judges machines.
  const json here = machine_json();
  const std::string was = machine_identity(spec.machine), now = machine_identity(here);
  const bool other_machine = was != now;
  if (other_machine && !o.allow_machine_mismatch)
    throw Error(fmt::format("{} ran on [{}], this machine is [{}]: its runs would be compared across machines (use "
                            "--allow-machine-mismatch to resume anyway)",
                            dir, was, now));

  const suite::Suite s = load_suite_for_runs(spec.suite_file).suite;
  if (s.name != spec.suite)
    throw Error(fmt::format("{}: the suite is now '{}', not '{}' as the matrix ran it", spec.suite_file, s.name, spec.suite));
  for (auto& c : spec.cases)
    if (std::none_of(s.cases.begin(), s.cases.end(), [&](const suite::Case& k) { return k.name == c; }))
      throw Error(fmt::format("{}: suite '{}' no longer has case '{}', which the matrix ran", spec.suite_file, s.name, c));

  // The binaries: those the matrix ran, still built from its sources, with its flags.
  stop_on_signal("checking the variants", [&] {
    for (const auto& v : spec.variants) {
      if (!fs::exists(v.binary))
        throw Error(fmt::format("{}: no such binary (variant {} of {} ran it; rebuild it from the matrix's commit {})", v.binary,
                                v.name, dir, manifest.value("git_commit", "")));
      std::optional<PresetInfo> preset;
      if (!spec.one_binary) preset = PresetInfo{v.name, v.cache_variables, ""};
      check_binary(v.name, v.binary, preset, spec.source_hash, spec.one_binary, /*resumed=*/true);
    }
  });

  const size_t nv = spec.variants.size();
  const auto states = matrix::run_states(dir, manifest);
  std::vector<std::vector<bool>> ok(nv), todo(nv);
  std::map<matrix::RunState, size_t> left;  // the runs to run, by why
  int runs = 0;
  for (size_t i = 0; i < nv; ++i)
    for (const matrix::RunState st : states[i]) {
      ok[i].push_back(st == matrix::RunState::kFinished);
      todo[i].push_back(!ok[i].back());
      if (todo[i].back()) {
        ++left[st];
        ++runs;
      }
    }
  using matrix::RunState;
  const std::string why = matrix::state_counts({{RunState::kDiscarded, left[RunState::kDiscarded]},
                                                {RunState::kPartial, left[RunState::kPartial]},
                                                {RunState::kFailed, left[RunState::kFailed]},
                                                {RunState::kNotRun, left[RunState::kNotRun]}});
  fmt::print(stderr, "[matrix] resuming {} (status {}): {} of its {} runs to run{}\n", dir, manifest["status"].get<std::string>(),
             runs, (spec.warmup + spec.rounds) * static_cast<int>(nv), why.empty() ? "" : " (" + why + ")");
  if (other_machine)
    fmt::print(stderr, "[matrix] warning: {} ran on [{}], this machine is [{}]: resuming anyway (--allow-machine-mismatch); "
               "every output says so\n", dir, was, now);

  // The manifest records the resumption and how the sitting before it ended; "running" again.
  json after = {{"status", manifest["status"]}};
  for (const char* k : {"interrupted", "failure"})
    if (manifest.contains(k)) {
      after[k] = manifest[k];
      manifest.erase(k);
    }
  manifest["status"] = "running";
  manifest["counters"] = counters;
  manifest["cache_sim"] = cache_sim;
  json entry = {{"started", utc_stamp()}, {"machine", here}, {"runs", runs}, {"after", after}, {"reran", json::array()}};
  if (other_machine) entry["machine_mismatch"] = true;
  manifest["resumed"] = manifest.value("resumed", json::array());
  manifest["resumed"].push_back(entry);
  spec.counters = counters;
  spec.cache_sim = cache_sim;
  MatrixRuns m(dir, std::move(manifest), spec);
  m.write_manifest();

  // Each run starts by replacing what its earlier attempt left: its round file goes, a failure
  // recorded of it goes to the resumption's record, and the manifest says it started again.
  m.run(todo, ok, [&](size_t i, int r) {
    const std::string name = m.vs[i].name, file = m.round_file(i, r);
    json again = {{"variant", name}, {"round", r}, {"was", matrix::run_state_name(states[i][static_cast<size_t>(r)])}};
    json& failed = m.manifest["failed_runs"];
    for (size_t k = 0; k < failed.size(); ++k)
      if (failed[k].value("variant", "") == name && failed[k].value("round", -1) == r) {
        again["failure"] = failed[k];
        failed.erase(k);
        break;
      }
    if (r >= m.warmup) m.manifest["variants"][i]["rounds"][static_cast<size_t>(r - m.warmup)] = file;
    std::error_code ec;
    fs::remove(dir + "/" + file, ec);
    if (ec) throw Error(fmt::format("cannot remove {}/{} to run it again: {}", dir, file, ec.message()), kExitFailure);
    m.manifest["resumed"].back()["reran"].push_back(again);
    m.write_manifest();
  });
  matrix::Input in = m.complete(ok, compare_options(o, m.manifest.value("injected", false)));
  m.manifest["resumed"].back()["elapsed_s"] = m.elapsed();
  m.write_manifest();
  const size_t sittings = m.manifest["resumed"].size() + 1;
  fmt::print(stderr, "[matrix] {} runs in {:.1f}s: the matrix's {} runs ({} variants x {} rounds + {} warm-up) ran in {} sittings\n",
             runs, m.elapsed(), m.total() * static_cast<int>(nv), nv, m.rounds, m.warmup, sittings);
  return analyse_complete(in, dir, o);
}

Registrar reg_matrix("matrix", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("matrix", "run several variants (or every combination of flags) interleaved and attribute each phase's change");
  auto o = std::make_shared<MatrixOptions>();
  sub->add_option("--variants", o->variants, "presets to compare against the baseline, comma-separated (e.g. baseline,pinned,all)");
  sub->add_option("--factorial", o->factorial,
                  "flags (presets that differ from the baseline) whose every combination is built and attributed, comma-separated");
  sub->add_option("--baseline", o->baseline, "the reference variant (default: baseline, else the first of --variants)");
  sub->add_option("--suite", o->suite, "suite name or file");
  sub->add_option("--case", o->cases, "run only this case (repeatable)");
  sub->add_option("--rounds", o->rounds, "measured rounds (each: every variant once, in a fresh random order)")->capture_default_str();
  sub->add_option("--warmup", o->warmup, "warm-up rounds (recorded, not analysed)")->capture_default_str();
  sub->add_option("--reps", o->reps, "measured repetitions in each process (> 1: each process's median is one observation)")
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the round orders (default: drawn, and recorded in the manifest)");
  sub->add_option("--backend", o->backend, "backend of every run: cpu or cuda")->capture_default_str();
  sub->add_option("--counters", o->counters, "counters of every run (run --counters; 'sim': each run under Valgrind's callgrind, docs/counters.md)");
  sub->add_flag("--cache-sim", o->cache_sim, "with --counters sim: each run simulates caches and branches too");
  sub->add_flag("--quick", o->quick, "pass --quick to each run");
  sub->add_flag("--stable", o->stable, "run every process in the stable mode");
  sub->add_option("--out-dir", o->out_dir, "folder (default results/local/<UTC time>-matrix); must be new or empty");
  sub->add_option("--source-dir", o->source_dir, "source tree to build and check against (default: this binary's)");
  add_cmake_arg_option(sub, o->cmake_args);
  sub->add_flag("--no-build", o->no_build, "use each variant's binary as built (still provenance-checked)");
  sub->add_flag("--build-only", o->build_only, "build and provenance-check every variant, print their binaries, and stop")
      ->excludes("--no-build");
  sub->add_option("--bin", o->bin, "run every variant with this one binary (planted effects only; provenance-checked)");
  sub->add_flag("--allow-dirty", o->allow_dirty, "build from a tree with uncommitted changes (recorded in the manifest)");
  sub->add_option("--inject", o->inject,
                  "plant a slowdown: WHO:SPEC, WHO a flag, flags joined by '+' (their interaction) or a variant; SPEC as "
                  "CUZK_INJECT_SLOWDOWN (repeatable; testing and power studies)");
  sub->add_option("--from", o->from, "re-analyse an existing matrix folder instead of running");
  sub->add_option("--resume", o->resume,
                  "run the runs of a matrix folder that did not complete that have not finished, as its manifest "
                  "recorded them, then analyse it (docs/matrix.md)");
  sub->add_flag("--markdown", o->markdown, "print markdown");
  sub->add_flag("--json", o->json_out, "print the attribution as JSON");
  sub->add_flag("--wide", o->wide, "every effect's CI in the grid");
  sub->add_flag("--allow-machine-mismatch", o->allow_machine_mismatch, "compare even if machines differ");
  sub->add_option("--level", o->level, "confidence level of every interval (factorial: simultaneous over a phase's effects)")
      ->capture_default_str()
      ->check(finite_in(0.5, 1, /*open_lo=*/false, /*open_hi=*/true));
  add_analysis_options(sub, o->analysis);
  add_run_failure_options(sub, o->run_timeout, o->on_failure, "the matrix");
  return [=] {
    if (!o->resume.empty())
      for (const char* name : kRunShapingOptions)
        if (sub->count(name)) o->run_shaping_given.push_back(name);
    return run_matrix(*o);
  };
});

}  // namespace
}  // namespace cuzk::cli
