// Building variants and checking their provenance (variant_builds.hpp).
#include "harness/cli/variant_builds.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>

#include "harness/cli/commands.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/results.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_presets_file(const std::string& source_dir) {
  const std::string path = source_dir + "/CMakePresets.json";
  std::ifstream f(path);
  if (!f) throw Error(fmt::format("{}: cannot read", path));
  try {
    return json::parse(f);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

// The cacheVariables of a configure preset, following "inherits" (later parents first,
// the preset's own values last so they win).
void collect_vars(const json& presets, const std::string& name, std::map<std::string, std::string>& vars,
                  std::string& binary_dir, int depth = 0) {
  if (depth > 16) throw Error(fmt::format("CMakePresets.json: preset '{}': inheritance too deep", name));
  for (auto& p : presets) {
    if (p.value("name", "") != name) continue;
    if (p.contains("inherits")) {
      std::vector<std::string> parents;
      if (p["inherits"].is_string()) parents.push_back(p["inherits"]);
      else for (auto& x : p["inherits"]) parents.push_back(x);
      for (auto it = parents.rbegin(); it != parents.rend(); ++it) collect_vars(presets, *it, vars, binary_dir, depth + 1);
    }
    if (p.contains("binaryDir")) binary_dir = p["binaryDir"];
    if (p.contains("cacheVariables"))
      for (auto& [k, v] : p["cacheVariables"].items())
        vars[k] = v.is_string() ? v.get<std::string>() : v.is_object() ? v.value("value", "") : v.dump();
    return;
  }
  throw Error(fmt::format("CMakePresets.json has no configure preset named '{}'", name));
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

PresetInfo read_preset(const std::string& source_dir, const std::string& name) {
  json j = read_presets_file(source_dir);
  PresetInfo pi;
  pi.name = name;
  collect_vars(j.value("configurePresets", json::array()), name, pi.vars, pi.binary_dir);
  if (pi.binary_dir.empty()) pi.binary_dir = "${sourceDir}/build/" + name;
  auto pos = pi.binary_dir.find("${sourceDir}");
  if (pos != std::string::npos) pi.binary_dir.replace(pos, 12, source_dir);
  pos = pi.binary_dir.find("${presetName}");
  if (pos != std::string::npos) pi.binary_dir.replace(pos, 13, name);
  return pi;
}

std::vector<std::string> preset_names(const std::string& source_dir) {
  json j = read_presets_file(source_dir);
  std::vector<std::string> out;
  for (auto& p : j.value("configurePresets", json::array()))
    if (!p.value("hidden", false) && p.contains("name")) out.push_back(p["name"]);
  return out;
}

std::string tree_hash(const std::string& source_dir) {
  const std::string script = source_dir + "/cmake/provenance_gen.cmake";
  if (!fs::exists(script)) throw Error(fmt::format("{}: missing (is --source-dir a cuzk tree?)", script));
  auto r = run_capture("cmake -DSRC_DIR=" + shell_quote(source_dir) + " -DPRINT_HASH=1 -P " + shell_quote(script));
  r.out = trimmed(r.out);
  if (r.code != 0 || r.out.size() != 64)
    throw Error(fmt::format("cannot compute the source hash of {} (cmake exited {})", source_dir, r.code));
  return r.out;
}

json binary_provenance(const std::string& bin) {
  if (!fs::exists(bin)) throw Error(fmt::format("{}: no such binary (build it, or drop --no-build)", bin));
  auto r = run_capture(shell_quote(bin) + " info --json", true);
  if (r.code != 0) throw Error(fmt::format("{} info --json failed (exit {})", bin, r.code));
  try {
    return json::parse(r.out).at("provenance");
  } catch (const std::exception& e) {
    throw Error(fmt::format("{} info --json: unreadable provenance ({})", bin, e.what()));
  }
}

void check_binary(const std::string& label, const std::string& bin, const std::optional<PresetInfo>& pi,
                  const std::string& hash, bool given) {
  json p = binary_provenance(bin);
  const std::string built = p.value("source_hash", "");
  if (built != hash)
    throw Error(fmt::format("{} is stale: built from sources {}, the tree is now {}; {}", bin, built, hash,
                            given ? "rebuild it" : "rebuild or drop --no-build"));
  if (!pi) return;
  const std::string bp = p.value("preset", "");
  auto want = pi->vars.find("CUZK_PRESET_NAME");
  if (want != pi->vars.end() && bp != want->second)
    throw Error(fmt::format("{} ({}) was built by preset '{}', not '{}' as asked", bin, label, bp, want->second));
  json flags = p.value("flags", json::object());
  for (auto& [k, v] : flags.items()) {
    auto it = pi->vars.find(k);
    if (it == pi->vars.end() || !v.is_string()) continue;
    if (k == "CUZK_CUDA" || k == "CUZK_PAPI") continue;  // AUTO resolves per machine
    if (v.get<std::string>() != it->second)
      throw Error(fmt::format("{} ({}) has {}={}, but preset '{}' sets {}={}", bin, label, k, v.get<std::string>(),
                              pi->name, k, it->second));
  }
}

std::string bench_binary(const PresetInfo& p) { return p.binary_dir + "/harness/cuzk-bench"; }

void check_cmake_args(const std::vector<std::string>& args, const std::vector<const PresetInfo*>& presets) {
  for (auto& a : args) {
    const auto eq = a.find('=');
    if (a.rfind("-D", 0) != 0 || eq == std::string::npos || eq == 2)
      throw Error(fmt::format("--cmake-arg '{}': expected -DNAME=VALUE (e.g. -DCUZK_CUDA=OFF)", a));
    const std::string name = a.substr(2, std::min(eq, a.find(':')) - 2);
    if (name == "CUZK_CUDA" || name == "CUZK_PAPI") continue;  // AUTO resolves per machine: not a variant's flag
    for (const PresetInfo* p : presets)
      if (p->vars.count(name))
        throw Error(fmt::format("--cmake-arg '{}': preset '{}' sets {} itself; overriding it would build another "
                                "variant than the one named (choose or add a preset instead)",
                                a, p->name, name));
  }
}

void add_cmake_arg_option(CLI::App* sub, std::vector<std::string>& args) {
  sub->add_option("--cmake-arg", args,
                  "extra -DNAME=VALUE for every variant's configure (repeatable; e.g. -DCUZK_CUDA=OFF to skip the CUDA "
                  "backend on a machine that measures the CPU one); a variable a preset sets is refused")
      ->allow_extra_args(false);
}

std::string build_variant(const std::string& source_dir, const PresetInfo& p, const std::string& base_preset,
                          const std::vector<std::string>& cmake_args) {
  // A generated variant is configured from its base preset with its own folder and overrides;
  // a preset of the file is configured as itself.
  std::string cfg = "cd " + shell_quote(source_dir) + " && cmake --preset " +
                    shell_quote(base_preset.empty() ? p.name : base_preset);
  if (!base_preset.empty()) {
    cfg += " -B " + shell_quote(p.binary_dir);
    for (auto& [k, v] : p.vars) cfg += " " + shell_quote("-D" + k + "=" + v);
  }
  for (auto& a : cmake_args) cfg += " " + shell_quote(a);
  cfg += " >&2";
  if (int rc = run_status(cfg); rc != 0)
    throw Error(fmt::format("configuring {} failed (exit {}): {}", p.name, rc, cfg), kExitFailure);
  std::string bld = "cmake --build " + shell_quote(p.binary_dir) + " --target cuzk-bench >&2";
  if (int rc = run_status(bld); rc != 0) throw Error(fmt::format("building {} failed (exit {})", p.name, rc), kExitFailure);
  return bench_binary(p);
}

void merge_rounds(const std::vector<std::string>& files, int warmup_rounds, const std::string& out) {
  int rep = 0;  // numbers the measured samples of all rounds in order
  std::vector<json> samples;
  json header;
  uint64_t elapsed = 0;
  for (size_t r = 0; r < files.size(); ++r) {
    ResultsFile rf = read_results(files[r]);
    if (r == 0) header = rf.header.value;
    const bool warm = int(r) < warmup_rounds;
    for (auto& s : rf.samples) {
      json v = s.value;  // whole, so "round_id" (the round the process measured) stays with the sample
      if (v.value("warmup", false)) continue;  // the round's own warm-ups (--stable: until settled) are not kept
      v["warmup"] = warm;
      v["repetition"] = warm ? int(r) : rep++;
      samples.push_back(v);
    }
    if (rf.summary) elapsed += rf.summary->value.value("elapsed_ns", uint64_t(0));
  }
  ResultsWriter w(out, ResultsWriter::Mode::kOverwrite);
  w.write(header);
  for (auto& s : samples) w.write(s);
  w.write(make_summary(samples, elapsed));
}

LoadedSuite load_suite_for_runs(const std::string& name_or_file) {
  try {
    LoadedSuite l;
    l.path = fs::absolute(suite::resolve_suite(name_or_file)).string();
    l.suite = suite::load_suite_file(l.path);
    return l;
  } catch (const suite::SuiteError& e) {
    throw Error(e.what());
  }
}

std::string suite_run_command(const std::string& bin, const std::string& suite_path, int reps, const std::string& out,
                              const std::string& extra, int round) {
  const std::string env = round >= 0 ? fmt::format("env {}={} ", kRoundIdEnvVar, round) : std::string();
  return env + shell_quote(bin) + " run --suite " + shell_quote(suite_path) + fmt::format(" --reps {} --force --out ", reps) +
         shell_quote(out) + extra + " >/dev/null";
}

OnFailure parse_on_failure(const std::string& s) {
  if (s == "stop") return OnFailure::kStop;
  if (s == "continue") return OnFailure::kContinue;
  throw Error(fmt::format("--on-failure {}: expected stop or continue", s));
}

void check_run_timeout(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    throw Error(fmt::format("--run-timeout must be 0 (no limit) or a number of seconds (got {})", seconds));
}

void add_run_failure_options(CLI::App* sub, double& run_timeout, std::string& on_failure, const std::string& what) {
  sub->add_option("--run-timeout", run_timeout,
                  "seconds a run's process may run before it is killed and counted as failed (0: no limit; "
                  "docs/reliability.md)")
      ->capture_default_str();
  sub->add_option("--on-failure", on_failure,
                  "a failed or timed-out run: stop " + what + ", or continue without it (stop|continue)")
      ->capture_default_str();
}

json failed_run_json(int round, bool warmup, const std::string& variant, int exit_code, bool timed_out,
                     const std::string& reason, const std::string& results) {
  return {{"round", round}, {"warmup", warmup},       {"variant", variant}, {"reason", reason},
          {"exit_code", exit_code}, {"timed_out", timed_out}, {"results", results}};
}

json failed_run_counts(const json& failed, const std::vector<std::string>& variants, int measured_rounds) {
  json out = json::object();
  for (const auto& v : variants) {
    int n = 0;
    for (const auto& f : failed) n += f.value("variant", "") == v && !f.value("warmup", false);
    out[v] = {{"failed", n}, {"of", measured_rounds}};
  }
  return out;
}

std::string failed_runs_markdown(const json& failed, const std::vector<std::string>& variants, int measured_rounds) {
  if (failed.empty()) return "";
  std::string s = "## Failed runs\n\nLeft out of every statistic below (their samples are not merged):";
  const json counts = failed_run_counts(failed, variants, measured_rounds);
  for (const auto& v : variants)
    s += fmt::format(" {} {} of {} measured run(s) failed;", v, counts[v]["failed"].get<int>(), measured_rounds);
  s.back() = '.';
  s += "\n\n";
  for (const auto& f : failed)
    s += fmt::format("- round {}{} of {}: {}\n", f.value("round", 0), f.value("warmup", false) ? " (warm-up)" : "",
                     f.value("variant", ""), f.value("reason", ""));
  return s + "\n";
}

std::string git_dirty(const std::string& dir) {
  auto r = run_capture("git -C " + shell_quote(dir) + " status --porcelain --untracked-files=no", true);
  if (r.code != 0) return "";
  return trimmed(r.out);
}

std::string git_head(const std::string& dir) {
  auto r = run_capture("git -C " + shell_quote(dir) + " rev-parse HEAD", true);
  return r.code == 0 ? trimmed(r.out) : "";
}

}  // namespace cuzk::cli
