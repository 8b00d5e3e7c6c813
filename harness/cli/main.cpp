// cuzk-bench: the one CLI of cuzk. Subcommands register themselves in cli/commands.hpp.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "harness/cli/commands.hpp"
#if CUZK_HAVE_CUDA
#include "cuda/runtime.hpp"
#endif

int main(int argc, char** argv) {
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
    return app.exit(e) == 0 ? 0 : cuzk::cli::kExitUsage;
  }
  try {
    return cuzk::cli::run_selected(app);
  } catch (const cuzk::cli::Error& e) {
    std::fprintf(stderr, "cuzk-bench: error: %s\n", e.what());
    return e.code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuzk-bench: error: %s\n", e.what());
    return cuzk::cli::kExitFailure;
  }
}
