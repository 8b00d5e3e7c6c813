// cuzk-bench: the one CLI of cuzk. Subcommands register themselves in cli/commands.hpp.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>

#include "harness/cli/commands.hpp"
#include "harness/measure/output_file.hpp"
#if CUZK_HAVE_CUDA
#include "cuda/stage/cuda_backend.hpp"
#endif

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{"cuzk-bench: Groth16 prover over BLS12-381 and its profiling/regression harness"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cuzk-bench 0.1.0");
  cuzk::cli::register_all(app);
#if CUZK_HAVE_CUDA
  cuzk::cuda::register_backend();  // makes --backend cuda available (it probes the GPU when chosen)
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; a real one is one line, like every other
    // error of the CLI (docs/cli.md), not CLI11's two.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "cuzk-bench: error: %s (see --help)\n", e.what());
    return cuzk::cli::kExitUsage;
  }
  try {
    return cuzk::cli::run_selected(app);
  } catch (const cuzk::cli::Error& e) {
    std::fprintf(stderr, "cuzk-bench: error: %s\n", e.what());
    return e.code();
  } catch (const cuzk::FileError& e) {  // a path the user can fix (harness/measure/output_file.hpp)
    std::fprintf(stderr, "cuzk-bench: error: %s\n", e.what());
    return cuzk::cli::kExitUsage;
  } catch (const std::bad_alloc&) {
    // Most likely a size field of an input file asked for more memory than there is; the
    // readers check sizes, so this is the last resort (no file name is known here).
    std::fprintf(stderr, "cuzk-bench: error: out of memory (an input file may declare an implausible size)\n");
    return cuzk::cli::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuzk-bench: error: %s\n", e.what());
    return cuzk::cli::kExitFailure;
  }
}

}  // namespace

// Registration and parsing may throw too (they build objects); no exception ends the process as
// an abort with a core dump instead of one error line.
int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuzk-bench: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "cuzk-bench: error: unexpected exception\n");
  }
  return cuzk::cli::kExitInternal;
}
