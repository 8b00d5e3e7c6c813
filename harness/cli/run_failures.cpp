// Failed measured runs: the options that bound and handle them, and how they are recorded
// (run_failures.hpp).
#include "harness/cli/run_failures.hpp"

#include <fmt/core.h>

#include <cmath>

#include <CLI/CLI.hpp>

#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"

namespace cuzk::cli {
namespace {

using nlohmann::json;

}  // namespace

OnFailure parse_on_failure(const std::string& s) {
  if (s == "stop") return OnFailure::kStop;
  if (s == "continue") return OnFailure::kContinue;
  throw Error(fmt::format("--on-failure {}: expected stop or continue", s));
}

void check_run_timeout(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds) || seconds > kMaxRunTimeout)
    throw Error(fmt::format("--run-timeout must be 0 (no limit) or a number of seconds (got {})", seconds));
}

void add_run_failure_options(CLI::App* sub, double& run_timeout, std::string& on_failure, const std::string& what) {
  sub->add_option("--run-timeout", run_timeout,
                  "seconds a run's process may run before it is killed and counted as failed (0: no limit; "
                  "docs/reliability.md)")
      ->capture_default_str()
      ->check(finite_in(0, kMaxRunTimeout));
  sub->add_option("--on-failure", on_failure,
                  "a failed or timed-out run: stop " + what + ", or continue without it (stop|continue)")
      ->capture_default_str();
}

json failed_run_json(int round, bool warm, const std::string& variant, int exit_code, bool timed_out,
                     const std::string& reason, const std::string& results) {
  return {{"round", round}, {"warmup", warm},         {"variant", variant}, {"reason", reason},
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

}  // namespace cuzk::cli
