#include "harness/cli/commands.hpp"

#include <map>
#include <memory>

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

int run_selected(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) {
    auto it = runners().find(sub);
    if (it != runners().end()) return it->second();
  }
  throw Error("no subcommand selected (see --help)");
}

}  // namespace cuzk::cli
