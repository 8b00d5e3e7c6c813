// Building variants of cuzk and proving which binary is which: shared by the subcommands that
// drive other builds (ab, matrix, bisect). A variant is a configure preset of CMakePresets.json,
// or one generated from the baseline preset with some flags switched (matrix --factorial); its
// binary is refused unless the provenance embedded in it (`info --json`) matches what was asked
// for (preset, flags) and the sources it is measured against (the source hash).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/suite/suite.hpp"

namespace CLI {
class App;
}

namespace cuzk::cli {

// A configure preset's cache variables (following "inherits") and its build folder.
struct PresetInfo {
  std::string name;
  std::map<std::string, std::string> vars;
  std::string binary_dir;
};

// Reads preset `name` of <source_dir>/CMakePresets.json; throws Error when it is missing.
PresetInfo read_preset(const std::string& source_dir, const std::string& name);
// The names of every configure preset that is not hidden, in file order.
std::vector<std::string> preset_names(const std::string& source_dir);

// The source hash of a tree, computed by the same script that embeds it in binaries.
std::string tree_hash(const std::string& source_dir);
// The provenance object of a binary (`<bin> info --json`); throws Error when unreadable.
nlohmann::json binary_provenance(const std::string& bin);
// Refuses (throws Error) a binary whose provenance does not match the preset asked for (when
// given: its preset name and flags) or the tree's source hash. `given`: the user named the
// binary (the advice differs).
void check_binary(const std::string& label, const std::string& bin, const std::optional<PresetInfo>& preset,
                  const std::string& hash, bool given);

// Refuses (Error, exit 2) extra configure arguments (--cmake-arg) that are not `-DNAME=VALUE`
// (or `-DNAME:TYPE=VALUE`), or that set a variable one of `presets` sets itself and provenance
// checks (a variant's flags, its preset name, the build type): those would build something else
// than the variant asked for. CUZK_CUDA and CUZK_PAPI may be set (AUTO resolves per machine).
void check_cmake_args(const std::vector<std::string>& args, const std::vector<const PresetInfo*>& presets);

// Configures (`cmake --preset <base>` with -B <binary_dir> and -D overrides, then `cmake_args`)
// and builds the cuzk-bench target; throws Error (exit 1) naming the variant when either step
// fails. Output goes to stderr. Returns the binary's path.
std::string build_variant(const std::string& source_dir, const PresetInfo& p, const std::string& base_preset = "",
                          const std::vector<std::string>& cmake_args = {});
// Registers --cmake-arg (repeatable) on a subcommand that builds variants.
void add_cmake_arg_option(CLI::App* sub, std::vector<std::string>& args);
// The path of a variant's cuzk-bench.
std::string bench_binary(const PresetInfo& p);

// Merges the round files of one variant into a valid results file: warm-up rounds are kept
// with warmup=true, measured samples renumbered in order; every other field of a sample (its
// "round_id" included) is kept.
void merge_rounds(const std::vector<std::string>& files, int warmup_rounds, const std::string& out);

// A suite named or given as a file, loaded before anything is built or run: its absolute path in
// `path`; a bad suite throws Error (exit 2) with the suite's own message.
struct LoadedSuite {
  std::string path;
  suite::Suite suite;
};
LoadedSuite load_suite_for_runs(const std::string& name_or_file);

// The shell command that runs a suite in one measured process, as ab, matrix and bisect drive
// it: `<bin> run --suite <suite> --reps N --force --out <out> <extra>`, its stdout discarded.
// `round` >= 0 prefixes `env CUZK_ROUND_ID=<round> `, so that every sample of the process carries
// "round_id" and compare can pair the sides round by round (docs/compare.md, "Designs"); an
// interleaved run passes its round index (warm-up rounds included), -1 adds nothing.
// Run it with run_child (harness/measure/process.hpp): own process group, --run-timeout.
std::string suite_run_command(const std::string& bin, const std::string& suite_path, int reps, const std::string& out,
                              const std::string& extra, int round = -1);

// What ab and matrix do when a measured process fails (exits non-zero, or is killed for
// exceeding --run-timeout): record it and stop (the default), or record it and go on. A failed
// run is never silently dropped: its round, variant and reason go to the folder's manifest, and
// the analysis states how many runs of each variant failed (docs/reliability.md).
enum class OnFailure { kStop, kContinue };
// "stop" or "continue"; throws Error naming --on-failure otherwise.
OnFailure parse_on_failure(const std::string& s);
// Checks --run-timeout (seconds; 0: none); throws Error when negative or not finite.
void check_run_timeout(double seconds);
// The options --run-timeout and --on-failure of a subcommand that drives measured processes;
// `what` names what a failure stops ("the A/B", "the matrix").
void add_run_failure_options(CLI::App* sub, double& run_timeout, std::string& on_failure, const std::string& what);
// One failed run, as manifests record it: {"round", "warmup", "variant", "reason", "exit_code",
// "timed_out", "results"} (results: the round's file, which is not merged).
nlohmann::json failed_run_json(int round, bool warmup, const std::string& variant, int exit_code, bool timed_out,
                               const std::string& reason, const std::string& results);
// Per variant: how many of its measured runs failed, as `{"<variant>": {"failed": n, "of": m}}`.
nlohmann::json failed_run_counts(const nlohmann::json& failed, const std::vector<std::string>& variants, int measured_rounds);
// The analysis's statement of the failed runs: "" when none failed, else a markdown section
// naming the count per variant and each failure's round and reason.
std::string failed_runs_markdown(const nlohmann::json& failed, const std::vector<std::string>& variants,
                                 int measured_rounds);

// Uncommitted changes to tracked files of the git tree at `dir` ("" when clean or not a git tree).
std::string git_dirty(const std::string& dir);
// `git rev-parse HEAD` at `dir`, "" when not a git tree.
std::string git_head(const std::string& dir);

}  // namespace cuzk::cli
