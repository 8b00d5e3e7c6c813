// SIGINT / SIGTERM for the commands that start children or measure (run, ab, matrix, bisect, noise,
// calibrate, engine): docs/reliability.md.
//
// install() replaces the default "die at once" with a bounded, orderly stop:
//  - the handler records the first signal, forwards it to every child process group started
//    through run_child (harness/measure/process.hpp; each child runs in its own group, so a
//    terminal's Ctrl-C reaches only this process and nothing is left behind), and wakes a
//    watchdog thread;
//  - the command notices (requested(), check()) between samples or rounds, finishes or drops the
//    work in flight, writes its trailer (results: a summary line with "interrupted"; ab/matrix:
//    status "interrupted"), and exits 128 + signal (130 SIGINT, 143 SIGTERM);
//  - if it has not exited kStopSeconds after the signal (a sample that takes minutes, a hung
//    phase), or at once on a second signal, the watchdog SIGKILLs the child groups, reaps them,
//    runs the registered last words (Session: the summary line saying the in-flight sample was
//    discarded; bisect: its log and the removal of its worktrees), and _exits with the status of
//    the first signal. So the process is gone at most kStopSeconds (+ the last words) after the
//    signal, and at once (+ the last words) after a second one.
#pragma once
#include <sys/types.h>

#include <functional>
#include <stdexcept>
#include <string>

namespace cuzk::interrupt {

// The bound, in seconds, between a signal and the process's exit.
constexpr int kStopSeconds = 4;

// The stop a command raises once it noticed the signal; commands turn it into exit 128 + sig.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int sig);
  int sig;
};

// Installs the SIGINT/SIGTERM handlers and the watchdog (idempotent).
void install();
bool installed();
// The first signal received (0 when none).
int signal_received();
bool requested();
// Throws Interrupted when a signal was received.
void check();
// "SIGINT", "SIGTERM", ...
std::string signal_name(int sig);
// 128 + sig.
int exit_code(int sig);

// Child process groups the handler forwards signals to, and the watchdog kills.
void add_child_group(pid_t pgid);
void remove_child_group(pid_t pgid);

// What the watchdog does before it ends the process, once the child groups are killed and reaped
// (one slot; a later call replaces it; an empty function clears it). Called on the watchdog thread
// with the first signal; clearing waits for a running call to end, so an object may register a
// callback into itself and clear it in its destructor. Children it starts must pass
// ChildOptions::cleanup (process.hpp), or they get the signal too.
void set_last_words(std::function<void(int sig)> fn);

// How many SIGINT/SIGTERM arrived so far (the second one ends the process at once).
int signal_count();

}  // namespace cuzk::interrupt
