// Building variants from configure presets (variant_builds.hpp).
#include "harness/cli/variant_builds.hpp"

#include <algorithm>

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include "harness/cli/cmake_args.hpp"
#include "harness/cli/commands.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/process.hpp"

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

std::string bench_binary(const PresetInfo& p) { return p.binary_dir + "/harness/cuzk-bench"; }

void check_cmake_args(const std::vector<std::string>& args, const std::vector<const PresetInfo*>& presets) {
  for (const CmakeDefine& d : parse_cmake_defines(args)) {
    const std::string& name = d.name;
    if (name == "CUZK_CUDA" || name == "CUZK_PAPI") continue;  // AUTO resolves per machine: not a variant's flag
    for (const PresetInfo* p : presets)
      if (p->vars.count(name))
        throw Error(fmt::format("--cmake-arg '{}': preset '{}' sets {} itself; overriding it would build another "
                                "variant than the one named (choose or add a preset instead)",
                                d.spelled, p->name, name));
  }
}

void add_cmake_arg_option(CLI::App* sub, std::vector<std::string>& args) {
  sub->add_option("--cmake-arg", args,
                  "extra -DNAME=VALUE for every variant's configure (repeatable; e.g. -DCUZK_CUDA=OFF to skip the CUDA "
                  "backend on a machine that measures the CPU one); a variable a preset sets is refused")
      ->allow_extra_args(false);
}

std::string build_variant(const std::string& source_dir, const PresetInfo& p, const std::string& base_preset,
                          const std::vector<std::string>& cmake_args, const std::string& target) {
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
  // Each step runs in its own process group (run_child), so a signal ends the whole build; a step
  // that the signal stopped is no failure of the variant.
  const ChildResult c = run_child(cfg);
  if (c.interrupted) throw interrupt::Interrupted(c.interrupted);
  if (c.code != 0) throw Error(fmt::format("configuring {} failed (exit {}): {}", p.name, c.code, cfg), kExitFailure);
  std::string bld = "cmake --build " + shell_quote(p.binary_dir) + " --target " + shell_quote(target) + " >&2";
  const ChildResult b = run_child(bld);
  if (b.interrupted) throw interrupt::Interrupted(b.interrupted);
  if (b.code != 0) throw Error(fmt::format("building {} failed (exit {})", p.name, b.code), kExitFailure);
  return bench_binary(p);
}

void stop_on_signal(const std::string& what, const std::function<void()>& steps) {
  try {
    steps();
    interrupt::check();
  } catch (const interrupt::Interrupted& e) {
    throw Error(fmt::format("{} while {}: nothing was measured", e.what(), what), interrupt::exit_code(e.sig));
  } catch (const Error& e) {
    const int sig = interrupt::signal_received();
    if (!sig || e.code() == interrupt::exit_code(sig)) throw;
    throw Error(fmt::format("interrupted by {} while {} ({}): nothing was measured", interrupt::signal_name(sig), what,
                            e.what()),
                interrupt::exit_code(sig));
  }
}

}  // namespace cuzk::cli
