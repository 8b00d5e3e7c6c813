#include "harness/measure/interrupt.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

namespace cuzk::interrupt {

namespace {

// Everything the handler touches is lock-free and async-signal-safe: atomics and syscalls.
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};
std::atomic<bool> g_installed{false};
constexpr size_t kMaxGroups = 64;
std::array<std::atomic<pid_t>, kMaxGroups> g_groups{};
int g_wake[2] = {-1, -1};

std::mutex g_words_mu;
std::function<void(int)> g_words;

void handler(int sig) {
  const int saved = errno;
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  g_count.fetch_add(1);
  for (auto& g : g_groups)
    if (pid_t p = g.load(); p > 0) ::kill(-p, sig);
  const char b = 1;
  if (g_wake[1] >= 0) {
    const ssize_t n = ::write(g_wake[1], &b, 1);
    (void)n;
  }
  errno = saved;
}

void kill_children(int sig) {
  for (auto& g : g_groups)
    if (pid_t p = g.load(); p > 0) ::kill(-p, sig);
}

void reap_children() {
  for (auto& g : g_groups)
    if (pid_t p = g.load(); p > 0)
      while (::waitpid(-p, nullptr, 0) > 0) {
      }
}

void watchdog() {
  char b[16];
  while (g_count.load() == 0) {
    if (::read(g_wake[0], b, sizeof b) < 0 && errno != EINTR) return;
  }
  const int sig = g_signal.load();
  // The command's own bound, cut short by a second signal (a byte may also come from a child's
  // inherited handler before its exec: only the counter says a signal arrived here).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kStopSeconds);
  while (g_count.load() < 2) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{g_wake[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) > 0) {
      const ssize_t n = ::read(g_wake[0], b, sizeof b);
      (void)n;
    }
  }
  const bool again = g_count.load() >= 2;
  // The children first, so that the last words find nothing running (a build in a worktree
  // they remove); then whatever the last words started.
  kill_children(SIGKILL);
  reap_children();
  {
    std::lock_guard lk(g_words_mu);
    if (g_words) {
      try {
        g_words(sig);
      } catch (...) {
      }
    }
  }
  kill_children(SIGKILL);
  reap_children();
  if (again)
    std::fprintf(stderr, "cuzk-bench: error: interrupted by %s, then signalled again: stopped at once; any work in flight was discarded\n",
                 signal_name(sig).c_str());
  else
    std::fprintf(stderr, "cuzk-bench: error: interrupted by %s: did not stop within %d s; any work in flight was discarded\n",
                 signal_name(sig).c_str(), kStopSeconds);
  std::fflush(stderr);
  ::_exit(exit_code(sig));
}

}  // namespace

Interrupted::Interrupted(int s) : std::runtime_error("interrupted by " + signal_name(s)), sig(s) {}

void install() {
  if (g_installed.exchange(true)) return;
  if (::pipe2(g_wake, O_CLOEXEC) != 0) {
    g_wake[0] = g_wake[1] = -1;
  } else {
    std::thread(watchdog).detach();
  }
  // Orphans of a child group (a benchmark the shell started, the shell gone) become this
  // process's children, so that run_child and the watchdog reap them, not some init.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

bool installed() { return g_installed.load(); }
int signal_received() { return g_signal.load(); }
int signal_count() { return g_count.load(); }
bool requested() { return g_signal.load() != 0; }

void check() {
  if (int s = g_signal.load()) throw Interrupted(s);
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGKILL: return "SIGKILL";
    default: return "signal " + std::to_string(sig);
  }
}

int exit_code(int sig) { return 128 + sig; }

void add_child_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t zero = 0;
    if (g.compare_exchange_strong(zero, pgid)) {
      // A signal that came before the group was known still reaches it.
      if (int s = g_signal.load()) ::kill(-pgid, s);
      return;
    }
  }
}

void remove_child_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t p = pgid;
    if (g.compare_exchange_strong(p, 0)) return;
  }
}

void set_last_words(std::function<void(int)> fn) {
  std::lock_guard lk(g_words_mu);
  g_words = std::move(fn);
}

}  // namespace cuzk::interrupt
