// Small process and time helpers shared by the subcommands that drive other processes
// (ab, calibrate, report) and by the machine probe.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace cuzk {

// 'text' quoted for /bin/sh.
std::string shell_quote(const std::string& s);

struct CommandOutput {
  int code = -1;  // exit status, or 128 + signal; -1 when the command could not start
  std::string out;  // standard output
};
// Runs a shell command and captures its stdout (stderr passes through unless `quiet`).
CommandOutput run_capture(const std::string& cmd, bool quiet = false);
// Runs a shell command with inherited stdio; returns its exit status (128 + signal).
int run_status(const std::string& cmd);

// One child process (`/bin/sh -c cmd`) under a deadline (docs/reliability.md). Once the
// process handles SIGINT/SIGTERM itself (interrupt::install), every child runs in its own
// process group, which gets the signals forwarded and is killed as a whole; otherwise the
// child stays in this process's group, so that a Ctrl-C still reaches both.
struct ChildOptions {
  double timeout_s = 0;   // > 0: SIGTERM to the group after this long, SIGKILL kChildGraceSeconds later
  bool capture = false;   // collect stdout in ChildResult::out
  bool quiet = false;     // stderr to /dev/null
  std::vector<int> cpus;  // non-empty: the child's CPU set (sched_setaffinity between fork and exec; duet.hpp)
  // Cleaning up on the way out (git worktree remove after a signal): the child still gets its
  // own group, so a terminal's second Ctrl-C does not reach it, but it is neither sent the signal
  // this process got nor stopped early, so that it runs to its end.
  bool cleanup = false;
};
struct ChildResult {
  int code = -1;           // exit status, or 128 + signal; -1 when it could not start
  std::string out;         // stdout, with capture
  bool timed_out = false;  // killed for exceeding timeout_s
  int interrupted = 0;     // this process got this signal while the child ran (it was forwarded)
  double seconds = 0;      // how long it ran
  // "" on success, else why it failed: "timed out after 5s", "exit 3", "interrupted by SIGINT", ...
  std::string failure() const;
};
// After a timeout's SIGTERM, how long a child group gets before SIGKILL: longer than a cuzk-bench
// child's own stop bound (interrupt::kStopSeconds), so that it writes its results trailer. After
// a signal this process got (and forwarded), kStopSeconds - 1: the child is gone before this
// process's own bound, leaving it the time to record the interruption.
constexpr int kChildGraceSeconds = 5;
ChildResult run_child(const std::string& cmd, const ChildOptions& o = {});

// A long-running child (a daemon a command drives) started as run_child starts its children
// (signals blocked across the fork, its own process group registered for forwarding once
// interrupt::install ran), without a shell and without waiting: `argv[0]` is the binary's path,
// stdout and stderr go to `log_path` (truncated) when given. The pid, or -1 when fork failed;
// the caller waits for it and calls interrupt::remove_child_group(pid) once it is reaped.
pid_t start_child(const std::vector<std::string>& argv, const std::string& log_path);

// The running executable's path (/proc/self/exe); nullopt where it cannot be read. Commands that
// run other cuzk-bench processes default to this very binary, never one found on a PATH.
std::optional<std::string> own_executable();

// The current UTC time as 20261129T203018Z (file and folder names of runs).
std::string utc_stamp();

}  // namespace cuzk
