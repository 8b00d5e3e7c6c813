// cuzk-bench: the one CLI of cuzk. Subcommands register themselves in cli/commands.hpp.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>
#include <system_error>

#include "harness/cli/commands.hpp"
#include "harness/measure/output_file.hpp"

namespace {

// SIGPIPE is caught by a handler that does nothing, not ignored: a write to a closed pipe then
// fails with EPIPE and is reported, and child processes get the default action back at exec
// (an ignored SIGPIPE would be inherited by every command the harness starts).
void on_sigpipe(int) {}

void install_sigpipe_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigpipe;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPIPE, &sa, nullptr);
}

int error_line(const std::string& what, int code) {
  std::fprintf(stderr, "cuzk-bench: error: %s\n", what.c_str());
  return code;
}

// Output that did not reach stdout (a full disk, a closed pipe) is a failed command, not exit 0:
// stdout is flushed and checked at exit. A command that already failed keeps its own code.
int check_stdout(int rc) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout)) return rc;
  const int e = errno;
  if (rc != cuzk::cli::kExitOk) return rc;
  return error_line(std::string("cannot write standard output: ") + (e ? std::strerror(e) : "a write failed"),
                    cuzk::cli::kExitUsage);
}

int run_main(int argc, char** argv) {
  CLI::App app{"cuzk-bench: Groth16 prover over BLS12-381 and its profiling/regression harness"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cuzk-bench 0.1.0");
  cuzk::cli::register_all(app);
  cuzk::cli::register_builtin_backends();
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
    return error_line("out of memory (an input file may declare an implausible size)", cuzk::cli::kExitUsage);
  } catch (const std::filesystem::filesystem_error& e) {  // a path: missing, not writable, disk full
    return error_line(e.what(), cuzk::cli::kExitUsage);
  } catch (const nlohmann::json::exception& e) {  // a JSON input whose field has the wrong type or value
    return error_line(std::string("malformed JSON input: ") + e.what(), cuzk::cli::kExitUsage);
  } catch (const std::system_error& e) {
    // A write that failed (fmt::print on a closed pipe or a full disk) or a resource the system
    // refused (a thread past a process limit): something the user can act on.
    if (std::ferror(stdout))
      return error_line(std::string("cannot write standard output: ") + e.code().message(), cuzk::cli::kExitUsage);
    return error_line(e.what(), cuzk::cli::kExitUsage);
  } catch (const std::exception& e) {  // a failure while measuring or proving
    return error_line(e.what(), cuzk::cli::kExitFailure);
  }
}

}  // namespace

// Registration and parsing may throw too (they build objects); no exception ends the process as
// an abort with a core dump instead of one error line.
int main(int argc, char** argv) {
  install_sigpipe_handler();
  try {
    return check_stdout(run_main(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuzk-bench: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "cuzk-bench: error: unexpected exception\n");
  }
  return cuzk::cli::kExitInternal;
}
