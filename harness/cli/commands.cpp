#include "harness/cli/commands.hpp"

#include <cstdio>
#include <map>
#include <memory>

#include "prover/groth16/backend.hpp"

namespace cuzk::cli {
namespace {
std::map<std::string, Setup>& setups() {
  static std::map<std::string, Setup> s;
  return s;
}
std::map<CLI::App*, Runner>& runners() {
  static std::map<CLI::App*, Runner> r;
  return r;
}
}  // namespace

Registrar::Registrar(const char* name, Setup setup) { setups()[name] = std::move(setup); }

void register_all(CLI::App& app) {
  for (auto& [name, setup] : setups()) {
    size_t before = app.get_subcommands({}).size();
    Runner r = setup(app);
    auto subs = app.get_subcommands({});
    if (subs.size() != before + 1) throw std::logic_error("subcommand " + name + " did not register itself");
    runners()[app.get_subcommand(name)] = std::move(r);
  }
}

uint32_t checked_u32(const char* flag, int64_t v, int64_t lo) {
  if (v < lo || v > int64_t(UINT32_MAX))
    throw Error(std::string(flag) + " " + std::to_string(v) + " is out of range (at least " + std::to_string(lo) + ")");
  return uint32_t(v);
}

std::string resolve_backend(const std::string& name, bool allow_cpu_fallback) {
  try {
    (void)groth16::make_backend(name);  // probes the device; the backend itself is made again by the job
    return name;
  } catch (const groth16::BackendUnavailable& e) {
    if (!allow_cpu_fallback) throw Error(std::string(e.what()) + " (pass --allow-cpu-fallback to use the cpu backend)", kExitFailure);
    std::fprintf(stderr, "cuzk-bench: warning: %s; using the cpu backend (--allow-cpu-fallback)\n", e.what());
    return "cpu";
  } catch (const std::invalid_argument& e) {
    throw Error(std::string("--backend: ") + e.what());
  }
}

int run_selected(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) {
    auto it = runners().find(sub);
    if (it != runners().end()) return it->second();
  }
  throw Error("no subcommand selected (see --help)");
}

}  // namespace cuzk::cli
