// `--counters sim`: runs this cuzk-bench command again under Valgrind's callgrind, so that the
// sim:: counters (harness/measure/sim_counters.hpp) can be read from callgrind's dumps.
//
// The parent (outside Valgrind) checks that valgrind can be found, makes a private temporary
// folder for callgrind's dumps, and runs
//   valgrind --tool=callgrind --callgrind-out-file=<tmp>/callgrind.out -q
//            [--cache-sim=yes --branch-sim=yes] <this binary> <the same arguments>
// in a process group of its own, forwarding SIGINT, SIGTERM and SIGHUP to that group (so the
// child's interrupt handling, docs/reliability.md, runs once) and passing its exit status
// through (128 + signal when it was killed). The folder is removed afterwards. Inside Valgrind
// the same command finds RUNNING_ON_VALGRIND true and runs normally.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace cuzk::cli {

struct SimRequest {
  std::vector<std::string> counters;  // the resolved counter list (the `sim` keyword expanded)
  bool cache_sim = false;             // --cache-sim
};

// The counter list of a recording command with `sim` expanded: the flag when given, else
// $CUZK_COUNTERS, else `fallback`. Throws Error for an empty item or for --cache-sim without a
// sim counter.
SimRequest resolve_sim_counters(const std::optional<std::string>& flag, const std::vector<std::string>& fallback,
                                bool cache_sim);

// Refuses what a run under Valgrind cannot do: --stable (thread placement for native timing),
// a GPU backend, GPU counters. Throws Error.
void check_sim_compatible(bool stable, const std::string& backend, bool gpu_counters);

// When `req` holds a sim counter and this process is not under Valgrind: runs this command
// under callgrind and returns its exit status; otherwise nullopt (go on in this process).
// Throws Error (exit 2, nothing written) when valgrind cannot be found.
std::optional<int> run_under_callgrind_if_needed(const SimRequest& req);

// The counter list as a --counters value ("a,b,c").
std::string join_counters(const std::vector<std::string>& names);

}  // namespace cuzk::cli
