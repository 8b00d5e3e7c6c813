#include "harness/cli/commands.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include "prover/groth16/backend.hpp"
#include "prover/util/process_limits.hpp"
#include "prover/util/thread_pool.hpp"
#if CUZK_HAVE_CUDA
#include "cuda/stage/cuda_backend.hpp"
#endif

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

std::vector<double> parse_number_list(const std::string& flag, const std::string& text, const std::string& example) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && (item.back() == '%' || item.back() == ' ')) item.pop_back();
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || !std::isfinite(v))
      throw Error(fmt::format("{}: \"{}\" is not a number (expected e.g. {})", flag, item, example));
    out.push_back(v);
  }
  if (out.empty()) throw Error(flag + ": empty list");
  return out;
}

void register_builtin_backends() {
#if CUZK_HAVE_CUDA
  cuzk::cuda::register_backend();  // --backend cuda (it probes the GPU when chosen)
#endif
}

std::string resolve_backend(const std::string& name, bool allow_cpu_fallback, const std::string& remedy) {
  try {
    (void)groth16::make_backend(name);  // probes the device; the backend itself is made again by the job
    return name;
  } catch (const groth16::BackendUnavailable& e) {
    if (!allow_cpu_fallback) throw Error(std::string(e.what()) + " (" + remedy + ")", kExitFailure);
    std::fprintf(stderr, "cuzk-bench: warning: %s; using the cpu backend (--allow-cpu-fallback)\n", e.what());
    return "cpu";
  } catch (const std::invalid_argument& e) {
    throw Error(std::string("--backend: ") + e.what());
  }
}

void check_thread_limits() {
  const char* env = std::getenv("CUZK_THREADS");
  const std::string text = env ? env : "";
  // Digits only (at most 7): the pool would read "8x" as 8 and "x" as the core count.
  if (!text.empty() && (text.size() > 7 || !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })))
    throw Error(fmt::format("CUZK_THREADS=\"{}\" is not a thread count: give a whole number (0 or unset: one per core)", text));
  const unsigned size = ThreadPool::planned_global_size();
  const std::string source = !text.empty() && std::stoul(text) > 0
                                 ? fmt::format("CUZK_THREADS={}", text)
                                 : fmt::format("the default pool (one thread per core: {})", size);
  if (std::string err = limits::check_thread_request(size, source, limits::read_thread_limits()); !err.empty())
    throw Error(err);
}

int run_selected(CLI::App& app) {
  // The subcommands whose work runs on the prover's thread pool: its threads are checked
  // against the process limits before any work (docs/reliability.md, "Limits of the machine").
  static const char* const kPoolCommands[] = {"prove", "engine", "run", "selfmeasure", "srs", "zkey-setup"};
  for (CLI::App* sub : app.get_subcommands()) {
    auto it = runners().find(sub);
    if (it == runners().end()) continue;
    if (std::find_if(std::begin(kPoolCommands), std::end(kPoolCommands),
                     [&](const char* n) { return sub->get_name() == n; }) != std::end(kPoolCommands))
      check_thread_limits();
    return it->second();
  }
  throw Error("no subcommand selected (see --help)");
}

}  // namespace cuzk::cli
