// Failed measured runs of ab and matrix: --run-timeout and --on-failure, and the record of each
// failure in manifests and analyses (docs/reliability.md).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cuzk::cli {

// What ab and matrix do when a measured process fails (exits non-zero, or is killed for
// exceeding --run-timeout): record it and stop (the default), or record it and go on. A failed
// run is never silently dropped: its round, variant and reason go to the folder's manifest, and
// the analysis states how many runs of each variant failed (docs/reliability.md).
enum class OnFailure { kStop, kContinue };
// "stop" or "continue"; throws Error naming --on-failure otherwise.
OnFailure parse_on_failure(const std::string& s);
// The longest --run-timeout, in seconds (about 115 days): beyond it a timeout means none.
constexpr double kMaxRunTimeout = 1e7;
// Checks --run-timeout (seconds; 0: none); throws Error when negative, not finite or above
// kMaxRunTimeout (the option's validator refuses those at parsing already).
void check_run_timeout(double seconds);
// The options --run-timeout and --on-failure of a subcommand that drives measured processes;
// `what` names what a failure stops ("the A/B", "the matrix").
void add_run_failure_options(CLI::App* sub, double& run_timeout, std::string& on_failure, const std::string& what);
// One failed run, as manifests record it: {"round", "warmup", "variant", "reason", "exit_code",
// "timed_out", "results"} (results: the round's file, which is not merged).
nlohmann::json failed_run_json(int round, bool warm, const std::string& variant, int exit_code, bool timed_out,
                               const std::string& reason, const std::string& results);
// Per variant: how many of its measured runs failed, as `{"<variant>": {"failed": n, "of": m}}`.
nlohmann::json failed_run_counts(const nlohmann::json& failed, const std::vector<std::string>& variants, int measured_rounds);
// The analysis's statement of the failed runs: "" when none failed, else a markdown section
// naming the count per variant and each failure's round and reason.
std::string failed_runs_markdown(const nlohmann::json& failed, const std::vector<std::string>& variants,
                                 int measured_rounds);

}  // namespace cuzk::cli
