// Building variants of cuzk: shared by the subcommands that drive other builds (ab, matrix,
// bisect). A variant is a configure preset of CMakePresets.json, or one generated from the
// baseline preset with some flags switched (matrix --factorial); variant_provenance.hpp checks
// that its binary is the one asked for.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

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

// Refuses (Error, exit 2) extra configure arguments (--cmake-arg) that are not -D definitions as
// cmake reads them (cmake_args.hpp), or that set a variable one of `presets` sets itself and provenance
// checks (a variant's flags, its preset name, the build type): those would build something else
// than the variant asked for. CUZK_CUDA and CUZK_PAPI may be set (AUTO resolves per machine).
void check_cmake_args(const std::vector<std::string>& args, const std::vector<const PresetInfo*>& presets);

// Configures (`cmake --preset <base>` with -B <binary_dir> and -D overrides, then `cmake_args`)
// and builds `target` (cuzk-bench unless named); throws Error (exit 1) naming the variant when either step
// fails, interrupt::Interrupted when SIGINT/SIGTERM stopped it (install() first: docs/reliability.md).
// Output goes to stderr. Returns the binary's path.
std::string build_variant(const std::string& source_dir, const PresetInfo& p, const std::string& base_preset = "",
                          const std::vector<std::string>& cmake_args = {}, const std::string& target = "cuzk-bench");
// Runs `steps` (builds and provenance checks, before anything is measured or written). When
// SIGINT/SIGTERM arrives meanwhile, throws Error with exit 128 + signal naming `what`: a step
// whose child the signal stopped fails, and the signal, not the step, is the reason.
void stop_on_signal(const std::string& what, const std::function<void()>& steps);
// Registers --cmake-arg (repeatable) on a subcommand that builds variants.
void add_cmake_arg_option(CLI::App* sub, std::vector<std::string>& args);
// The path of a variant's cuzk-bench.
std::string bench_binary(const PresetInfo& p);

}  // namespace cuzk::cli
