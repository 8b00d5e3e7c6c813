#include "harness/measure/interrupt.hpp"

#include <fcntl.h>
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

void watchdog() {
  char b;
  while (::read(g_wake[0], &b, 1) < 0 && errno == EINTR) {
  }
  const int sig = g_signal.load();
  std::this_thread::sleep_for(std::chrono::seconds(kStopSeconds));
  // The command did not stop in time: last words, then nothing left behind.
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
  for (auto& g : g_groups)
    if (pid_t p = g.load(); p > 0)
      while (::waitpid(-p, nullptr, 0) > 0) {
      }
  std::fprintf(stderr, "cuzk-bench: error: interrupted by %s: did not stop within %d s; the work in flight was discarded\n",
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
