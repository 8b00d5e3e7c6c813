#include "harness/measure/process.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>

#include "harness/measure/interrupt.hpp"

namespace cuzk {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::optional<std::string> own_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return p.string();
}

static int decode_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0); }

CommandOutput run_capture(const std::string& cmd, bool quiet) {
  ChildOptions o;
  o.capture = true;
  o.quiet = quiet;
  ChildResult c = run_child(cmd, o);
  return {c.code, std::move(c.out)};
}

int run_status(const std::string& cmd) { return run_child(cmd).code; }

std::string ChildResult::failure() const {
  if (code == -1) return "could not start";
  if (timed_out) return fmt::format("timed out after {:g}s", seconds);
  if (interrupted) return "interrupted by " + interrupt::signal_name(interrupted);
  if (code == 0) return "";
  if (code > 128) return fmt::format("killed by {} (exit {})", interrupt::signal_name(code - 128), code);
  return fmt::format("exit {}", code);
}

namespace {

// Forks a child the way every child of the harness starts: SIGINT/SIGTERM blocked across the fork
// (the parent's handler must not run in the child before its exec: it would forward the signal
// and wake the watchdog from there), then in the child its own process group (once
// interrupt::install ran), the CPU set, the default handlers, and `in_child`, which execs (a
// return is exit 127). In the parent the group is registered for signal forwarding when
// `stoppable`. The pid, or -1 when fork failed.
pid_t fork_child(bool own_group, bool stoppable, const std::vector<int>& cpu_list, const std::function<void()>& in_child) {
  std::fflush(nullptr);  // no buffered output is written twice (by the child too)
  // The CPU set is built here: between fork and exec only async-signal-safe calls may run.
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int c : cpu_list)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &cpus);
  sigset_t stop_sigs, old_mask;
  sigemptyset(&stop_sigs);
  sigaddset(&stop_sigs, SIGINT);
  sigaddset(&stop_sigs, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_sigs, &old_mask);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (own_group) ::setpgid(0, 0);
    if (!cpu_list.empty() && ::sched_setaffinity(0, sizeof cpus, &cpus) != 0) ::_exit(127);
    // The parent's handlers do not survive exec, but restore the defaults before unblocking.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    in_child();
    ::_exit(127);
  }
  if (pid > 0 && own_group) {
    ::setpgid(pid, pid);  // also here: no race with a signal sent before the child ran setpgid
    if (stoppable) interrupt::add_child_group(pid);
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return pid;
}

}  // namespace

pid_t start_child(const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty()) return -1;
  std::vector<char*> args;  // built before the fork, like everything the child uses
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return fork_child(interrupt::installed(), true, {}, [&] {
    if (!log_path.empty()) {
      const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) ::_exit(126);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execv(args[0], args.data());
  });
}

ChildResult run_child(const std::string& cmd, const ChildOptions& o) {
  ChildResult r;
  int pipefd[2] = {-1, -1};
  if (o.capture && ::pipe2(pipefd, O_CLOEXEC) != 0) return r;
  const bool own_group = interrupt::installed();
  const bool stoppable = !o.cleanup;  // gets the signal this process got, and a bound after it
  const pid_t pid = fork_child(own_group, stoppable, o.cpus, [&] {
    if (o.capture) ::dup2(pipefd[1], 1);
    if (o.quiet)
      if (int n = ::open("/dev/null", O_WRONLY); n >= 0) ::dup2(n, 2);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
  });
  if (pid < 0) {
    if (o.capture) ::close(pipefd[0]), ::close(pipefd[1]);
    return r;
  }
  if (o.capture) ::close(pipefd[1]);
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto secs = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  const pid_t target = own_group ? -pid : pid;
  std::optional<clock::time_point> kill_at;  // after a SIGTERM: when SIGKILL follows
  int st = 0;
  bool reaped = false, eof = !o.capture;
  while (!reaped) {
    if (!eof) {
      pollfd p{pipefd[0], POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) {
        char buf[4096];
        const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
        if (n > 0) r.out.append(buf, static_cast<size_t>(n));
        else if (n == 0 || errno != EINTR) eof = true;
      }
    } else {
      ::usleep(20000);
    }
    const pid_t w = ::waitpid(pid, &st, WNOHANG);
    if (w == pid) reaped = true;
    else if (w < 0 && errno != EINTR) break;
    if (reaped) break;
    if (!kill_at && o.timeout_s > 0 && secs() > o.timeout_s) {
      r.timed_out = true;
      ::kill(target, SIGTERM);
      kill_at = clock::now() + std::chrono::seconds(kChildGraceSeconds);
    }
    if (!kill_at && stoppable && interrupt::requested()) {  // the handler forwarded the signal already
      r.interrupted = interrupt::signal_received();
      kill_at = clock::now() + std::chrono::seconds(interrupt::kStopSeconds - 1);
    }
    if (kill_at && clock::now() > *kill_at) ::kill(target, SIGKILL);
  }
  if (!eof) {  // the rest of the output (the writer is gone)
    char buf[4096];
    for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<size_t>(n));
  }
  if (o.capture) ::close(pipefd[0]);
  if (!r.interrupted && stoppable && interrupt::requested()) {  // the signal came as the child ended
    r.interrupted = interrupt::signal_received();
    if (!kill_at) kill_at = clock::now() + std::chrono::seconds(interrupt::kStopSeconds - 1);
  }
  if (own_group) {
    // The shell may end before what it started: the rest of the group gets the same grace (to
    // write its results trailer), then whatever is left goes with it, so nothing survives.
    // (interrupt::install made this process their subreaper: they are reaped here.)
    if (r.timed_out || r.interrupted) {
      while (kill_at && clock::now() < *kill_at && ::kill(-pid, 0) == 0)
        if (::waitpid(-pid, nullptr, WNOHANG) <= 0) ::usleep(20000);
      ::kill(-pid, SIGKILL);
      while (::waitpid(-pid, nullptr, 0) > 0) {
      }
    }
    while (::waitpid(-pid, nullptr, WNOHANG) > 0) {  // any that ended after the shell
    }
    if (stoppable) interrupt::remove_child_group(pid);
  }
  r.seconds = r.timed_out ? o.timeout_s : secs();
  r.code = reaped ? decode_status(st) : -1;
  return r;
}

std::string utc_stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y%m%dT%H%M%SZ", &tm);
  return b;
}

}  // namespace cuzk
