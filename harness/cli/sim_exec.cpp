#include "harness/cli/sim_exec.hpp"

#include <fmt/core.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "harness/cli/commands.hpp"
#include "harness/measure/counters.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/session.hpp"
#include "harness/measure/sim_counters.hpp"

namespace cuzk::cli {

std::string join_counters(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

SimRequest resolve_sim_counters(const std::optional<std::string>& flag, const std::vector<std::string>& fallback,
                                bool cache_sim) {
  SimRequest r;
  r.cache_sim = cache_sim;
  try {
    r.counters = sim::expand_keyword(counters_from(flag, fallback), cache_sim);
  } catch (const CounterError& e) {
    throw Error(e.what());
  }
  if (cache_sim && !sim::any_sim(r.counters))
    throw Error("--cache-sim simulates caches under Valgrind for sim counters: add --counters sim");
  return r;
}

void check_sim_compatible(bool stable, const std::string& backend, bool gpu_counters) {
  if (stable)
    throw Error("--stable places threads for native timing; under --counters sim Valgrind runs one thread at a time: "
                "drop --stable");
  if (backend != "cpu")
    throw Error(fmt::format("--counters sim runs under Valgrind, which cannot drive a GPU: use --backend cpu (not {})", backend));
  if (gpu_counters) throw Error("--gpu-counters needs a GPU; --counters sim runs under Valgrind on the CPU: drop one");
}

namespace {

// The valgrind binary: $CUZK_VALGRIND (a path, or a name looked up on PATH), else `valgrind`.
std::string find_valgrind() {
  const char* env = std::getenv(sim::kValgrindEnv);
  const std::string name = env && *env ? env : "valgrind";
  auto executable = [](const std::string& p) { return ::access(p.c_str(), X_OK) == 0 && !std::filesystem::is_directory(p); };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return name;
    throw Error(fmt::format("--counters sim needs Valgrind: ${} = '{}' is not an executable file (fix it, or unset it to "
                            "use valgrind from PATH)",
                            sim::kValgrindEnv, name));
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    size_t colon = dirs.find(':', pos);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string dir = dirs.substr(pos, colon - pos);
    const std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (executable(cand)) return cand;
    pos = colon + 1;
  }
  throw Error(fmt::format("--counters sim needs Valgrind, and '{}' is not on PATH (install the valgrind package, e.g. "
                          "scripts/setup.sh, or set ${} to its path)",
                          name, sim::kValgrindEnv));
}

volatile sig_atomic_t g_child_group = 0;
volatile sig_atomic_t g_signals = 0;

// The first signal goes to the child's group as it is (its own interrupt handling stops it in
// order); a second one kills the group.
void forward_signal(int sig) {
  const pid_t group = g_child_group;
  if (group <= 0) return;
  g_signals = g_signals + 1;
  ::kill(-group, g_signals > 1 ? SIGKILL : sig);
}

}  // namespace

std::optional<int> run_under_callgrind_if_needed(const SimRequest& req) {
  if (!sim::any_sim(req.counters) || sim::under_valgrind()) return std::nullopt;
  const std::string valgrind = find_valgrind();
  const std::optional<std::string> self = own_executable();
  if (!self) throw Error("--counters sim: cannot read this program's path (/proc/self/exe) to run it under Valgrind");
  std::vector<std::string> args = own_command_line();
  if (args.empty()) throw Error("--counters sim: cannot read this program's arguments (/proc/self/cmdline)");

  const char* tmp = std::getenv("TMPDIR");
  std::string dir = fmt::format("{}/cuzk-sim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!::mkdtemp(dir.data())) throw Error(fmt::format("--counters sim: cannot create a temporary folder {}", dir));
  struct RemoveDir {
    std::string d;
    ~RemoveDir() {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  } remove{dir};
  const std::string out = dir + "/callgrind.out";

  std::vector<std::string> argv = {valgrind, "--tool=callgrind", "-q", "--callgrind-out-file=" + out,
                                   "--collect-atstart=yes", "--separate-threads=no"};
  if (req.cache_sim) {
    argv.push_back("--cache-sim=yes");
    argv.push_back("--branch-sim=yes");
  }
  argv.push_back(*self);
  argv.insert(argv.end(), args.begin() + 1, args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  ::setenv(sim::kOutEnv, out.c_str(), 1);
  ::setenv(sim::kCacheSimEnv, req.cache_sim ? "1" : "0", 1);
  ::setenv(sim::kNativePathEnv, sim::arithmetic_path().c_str(), 1);
  // Valgrind runs one thread at a time, so a one-thread pool costs no speed there, and it makes
  // the counts reproducible: with several workers the interleaving (malloc arenas, which worker
  // takes which chunk) moved synthesis's count by up to 0.7% between identical runs.
  if (!std::getenv("CUZK_THREADS")) {
    ::setenv("CUZK_THREADS", "1", 1);
    ::setenv(sim::kThreadsSetEnv, "1", 1);
  }
  std::fflush(nullptr);

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("--counters sim: fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the parent that waits for it
    if (::getppid() != parent) ::_exit(127);
    ::execv(cargv[0], cargv.data());
    std::fprintf(stderr, "cuzk-bench: error: cannot run %s: %s\n", cargv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before a signal is forwarded
  g_child_group = pid;
  struct sigaction sa {}, old_int{}, old_term{}, old_hup{};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGHUP, &sa, &old_hup);
  int status = 0;
  pid_t w;
  do {
    w = ::waitpid(pid, &status, 0);
  } while (w < 0 && errno == EINTR);
  g_child_group = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int code = w < 0 ? kExitInternal : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  fmt::print(stderr,
             "cuzk-bench: the run under callgrind{} took {:.1f} s of wall time; its results' times are Valgrind's "
             "(threads serialized, every instruction simulated), not native: compare its sim:: counters "
             "(docs/counters.md gives the slowdown measured on this project's cases)\n",
             req.cache_sim ? " with cache simulation" : "", secs);
  return code;
}

}  // namespace cuzk::cli
