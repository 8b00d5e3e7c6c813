// Subcommand registry of cuzk-bench. Each cli/cmd_<name>.cpp defines one subcommand and
// registers it with a static Registrar; main() parses and runs the selected one.
//
// Exit codes (docs/cli.md): 0 success / pass, 1 failure of the checked property (regression,
// proof rejected), 2 bad input or error (unknown flag, unreadable or malformed file, missing
// phase, mismatched provenance), 3 internal error.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 3;

// An error the user can act on: printed as one line "cuzk-bench: error: <what>".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int code = kExitUsage) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

using Runner = std::function<int()>;
// setup(app) adds the subcommand to `app`, declares its options and returns the runner.
using Setup = std::function<Runner(CLI::App& app)>;

struct Registrar {
  Registrar(const char* name, Setup setup);
};

void register_all(CLI::App& app);

// A count flag as uint32: throws Error("<flag> <v> is out of range (at least <lo>)") outside
// [lo, 2^32).
uint32_t checked_u32(const char* flag, int64_t v, int64_t lo = 0);

// The numbers of a comma-separated flag value ("1,2,5"); spaces around an item and a trailing '%'
// are dropped. Throws Error("<flag>: \"<item>\" is not a number (expected e.g. <example>)"), or
// "<flag>: empty list".
std::vector<double> parse_number_list(const std::string& flag, const std::string& text, const std::string& example);

// Checks that --backend NAME can run here before any work starts, and returns the backend to
// use: NAME itself, or "cpu" when NAME cannot run (no GPU, no driver, not built) and the user
// passed --allow-cpu-fallback (a warning says so on stderr). Otherwise throws Error: an unknown
// name is bad input (exit 2), an unavailable backend a failure (exit 1) with the reason and
// `remedy` (what the user can do instead).
std::string resolve_backend(const std::string& name, bool allow_cpu_fallback,
                            const std::string& remedy = "pass --allow-cpu-fallback to use the cpu backend");
// Registers the backends this build has beyond the CPU's (cuda where nvcc was found). Every
// binary that takes --backend calls it once at start: a static library's self-registering
// objects would be dropped by the linker.
void register_builtin_backends();
// Runs the selected subcommand; one whose work runs on the prover's thread pool first passes
// check_thread_limits().
int run_selected(CLI::App& app);

// Refuses (Error, exit 2) a malformed $CUZK_THREADS, and a pool (CUZK_THREADS, else one thread per
// core) with more threads than the process limits leave (prover/util/process_limits.hpp).
void check_thread_limits();

}  // namespace cuzk::cli
