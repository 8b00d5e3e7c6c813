// SIGINT / SIGTERM and hung children (docs/reliability.md): `run` stops within the bound with
// exit 130 / 143 and a results file whose every line parses (its summary says what happened to
// the sample in flight); `ab` kills a round's process that exceeds --run-timeout (its whole
// process group), records it as a failed run and goes on or stops by --on-failure, and so does
// `matrix`; `run` kills a micro case's hung benchmark binary; an interrupted `ab` says so in
// ab.json; no child process survives any of it. Signals before the first measurement: `bisect`
// stopped while it builds removes its worktrees and logs the interruption (a second SIGINT ends it
// at once, cleaned up too), `ab` stopped in its build leaves no build running; `noise` and
// `calibrate` stop their workload process and mark their folders; the engine's summary says a run
// of jobs was in flight.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <regex>
#include <thread>

#include "catch.hpp"
#include "child_process.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/results.hpp"
#include "test_util.hpp"

namespace t = cuzk::test;
using t::capture;
using t::source_dir;
using t::wait_for;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// cuzk-bench with `args` in `dir`, stdout to /dev/null and stderr to `err`, `env` added.
pid_t spawn_bench(const t::TempDir& d, const std::vector<std::string>& args, const std::string& err,
                  const std::vector<std::string>& env = {}) {
  return t::spawn_bench(d.path(), args, "/dev/null", err, env);
}

// Waits for `pid` at most `seconds`; its exit status (128 + signal), or -1 (then it is killed).
int wait_exit(pid_t pid, int seconds) {
  int st = 0;
  const bool done = wait_for([&] { return waitpid(pid, &st, WNOHANG) == pid; }, seconds);
  if (!done) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The pids of the processes that reported an injected hang.
std::vector<pid_t> hung_pids(const std::string& err) {
  std::vector<pid_t> out;
  std::regex re("injected hang in [^ ]+ \\(pid ([0-9]+)\\)");
  for (std::sregex_iterator it(err.begin(), err.end(), re), end; it != end; ++it) out.push_back(std::stoi((*it)[1]));
  return out;
}

// No longer running: no such process, or (bounded wait) a zombie its reaper has not reaped yet.
bool gone(pid_t pid) {
  auto dead = [&] {
    if (kill(pid, 0) == -1 && errno == ESRCH) return true;
    const std::string stat = t::slurp("/proc/" + std::to_string(pid) + "/stat");
    const size_t paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
  };
  return wait_for(dead, 2);
}

// The --run-timeout of the ab and matrix cases: longer than a run of the tiny case takes, even
// at -O0 under ASan (scaled), and its reason as the manifests state it.
constexpr int kTimeout = 8 * t::kSlowdown;  // a tiny-case run takes about 1 s, 3 s under a loaded 2-core machine
const std::string timed_out = "timed out after " + std::to_string(kTimeout) + "s";

// A wrapper around cuzk-bench whose `run` hangs in proof/prove ("once": only the first time).
std::string hanging_wrapper(const t::TempDir& d, bool once) {
  const std::string w = d.file(once ? "hang-once.sh" : "hang.sh");
  const std::string cond = once ? "[ \"$1\" = run ] && [ ! -e '" + d.file("hung-once") + "' ]" : "[ \"$1\" = run ]";
  t::spit(w, "#!/bin/sh\nif " + cond + "; then\n  touch '" + d.file("hung-once") +
                 "'\n  export CUZK_INJECT_FAULT=hang_in:proof/prove\nfi\nexec '" + t::bench() + "' \"$@\"\n");
  chmod(w.c_str(), 0755);
  return w;
}


// The pid a child wrote into `file` (0 until it has), once the file holds a whole line.
pid_t pid_in(const std::string& file) {
  const std::string s = t::slurp(file);
  return s.empty() || s.back() != '\n' ? 0 : pid_t(std::stoi(s));
}

// A throwaway repository of two commits, c1 and c2: bisect's history when it is stopped in its
// first build, before anything is measured (tests/test_bisect.cpp has one that measures).
struct Repo {
  std::string path, c1, c2;
};
Repo two_commit_repo(const t::TempDir& d) {
  Repo r{d.file("repo"), "", ""};
  const std::string git = "cd '" + r.path + "' && git -c user.name=t -c user.email=t@t -c core.excludesFile=/dev/null ";
  REQUIRE(std::system(("mkdir -p '" + r.path + "' && " + git + "init -q . && echo 1 > f && " + git + "add f && " + git +
                       "commit -q -m c1")
                          .c_str()) == 0);
  r.c1 = capture("git -C '" + r.path + "' rev-parse HEAD");
  REQUIRE(std::system(("cd '" + r.path + "' && echo 2 > f && " + git + "commit -q -am c2").c_str()) == 0);
  r.c2 = capture("git -C '" + r.path + "' rev-parse HEAD");
  return r;
}

// The worktrees git knows of in `repo` (1: only the main one).
size_t worktree_count(const std::string& repo) {
  size_t n = 0;
  for (auto& l : t::lines_of(capture("git -C '" + repo + "' worktree list --porcelain"))) n += l.rfind("worktree ", 0) == 0;
  return n;
}

// `cuzk-bench bisect` of `r` whose build is `build_cmd` (it never leaves a binary), into d/out.
pid_t spawn_bisect(const t::TempDir& d, const Repo& r, const std::string& build_cmd, const std::string& err) {
  t::spit(d.file("tiny.toml"), t::tiny_porep_suite("tiny", 1));
  return spawn_bench(d,
                     {"bisect", "--repo", r.path, "--good", r.c1, "--bad", r.c2, "--suite", "tiny.toml", "--case", "tiny",
                      "--phase", "proof/synth", "--build-cmd", build_cmd, "--bin-path", "bin/cuzk-bench", "--out-dir",
                      "out"},
                     err);
}

// What an interrupted bisect leaves: the repository as it was, and a log that says why it stopped.
void check_bisect_cleaned_up(const t::TempDir& d, const Repo& r, const std::string& signal) {
  CHECK(worktree_count(r.path) == 1);
  CHECK_FALSE(t::exists(d.file("out/worktrees")));
  CHECK(capture("git -C '" + r.path + "' status --porcelain") == "");
  const std::string md = t::slurp(d.file("out/bisect.md"));
  CHECK(has(md, "Interrupted by " + signal));
  CHECK(has(md, "while building the good revision " + r.c1.substr(0, 12)));
  const auto log = t::lines_of(t::slurp(d.file("out/bisect.jsonl")));
  REQUIRE(!log.empty());
  const json last = json::parse(log.back());
  CHECK(last.at("status") == "interrupted");
  CHECK(last.at("signal") == signal);
  CHECK(last.at("exit_code") == (signal == "SIGINT" ? 130 : 143));
}

}  // namespace

TEST_CASE("run stopped by SIGINT: exit 130 within the bound, the sample in flight completed, every line parses",
          "[signals]") {
  t::TempDir d;
  t::spit(d.file("long.toml"), t::tiny_porep_suite("long", 100000));
  REQUIRE(t::share_params_cache(d));
  const std::string out = d.file("r.jsonl");
  const pid_t pid = spawn_bench(d, {"run", "--suite", "long.toml", "--counters", "", "--out", out}, d.file("err"));
  REQUIRE(pid > 0);
  const bool began = wait_for([&] { return count_of(t::slurp(out), "\"type\":\"sample\"") >= 2; }, 120);
  REQUIRE(began);
  const auto t0 = Clock::now();
  kill(pid, SIGINT);
  const int code = wait_exit(pid, cuzk::interrupt::kStopSeconds + 3);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(t::slurp(d.file("err")));
  CHECK(code == 130);
  CHECK(took <= cuzk::interrupt::kStopSeconds + 1);
  const auto rf = cuzk::read_results(out);
  CHECK(rf.samples.size() >= 2);
  REQUIRE(rf.summary.has_value());
  const json& in = rf.summary->value.at("interrupted");
  CHECK(in.at("signal") == "SIGINT");
  CHECK(in.at("exit_code") == 130);
  // A sample of the tiny case ends well within the 4 s bound in an optimized build, so it is
  // completed; at -O0 under ASan it may not, and then it is discarded (what the bound is for).
  if (t::kSanitized)
    CHECK((in.at("in_flight") == "completed" || in.at("in_flight") == "discarded"));
  else
    CHECK(in.at("in_flight") == "completed");
  CHECK(has(t::slurp(d.file("err")), "cuzk-bench: error: interrupted by SIGINT"));
}

TEST_CASE("run hung in a phase and sent SIGTERM: exit 143 within the bound, the sample in flight discarded",
          "[signals]") {
  t::TempDir d;
  t::spit(d.file("long.toml"), t::tiny_porep_suite("long", 100000));
  REQUIRE(t::share_params_cache(d));
  const std::string out = d.file("r.jsonl"), err = d.file("err");
  const pid_t pid = spawn_bench(d, {"run", "--suite", "long.toml", "--counters", "", "--out", out}, err,
                                {"CUZK_INJECT_FAULT=hang_in:proof/prove"});
  REQUIRE(pid > 0);
  REQUIRE(wait_for([&] { return has(t::slurp(err), "injected hang in proof/prove"); }, 120));
  const auto t0 = Clock::now();
  kill(pid, SIGTERM);
  const int code = wait_exit(pid, cuzk::interrupt::kStopSeconds + 3);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(t::slurp(err));
  CHECK(code == 143);
  CHECK(took <= cuzk::interrupt::kStopSeconds + 1);
  const auto rf = cuzk::read_results(out);  // header and the watchdog's summary
  CHECK(rf.samples.empty());
  REQUIRE(rf.summary.has_value());
  CHECK(rf.summary->value.at("interrupted").at("in_flight") == "discarded");
  CHECK(rf.summary->value.at("interrupted").at("signal") == "SIGTERM");
}

TEST_CASE("ab: a round's process past --run-timeout is killed, recorded as failed, and the A/B goes on or stops",
          "[signals][ab]") {
  t::TempDir d;
  t::spit(d.file("tiny.toml"), t::tiny_porep_suite("tiny", 1));
  REQUIRE(t::share_params_cache(d));
  const std::string hang_b = hanging_wrapper(d, true);
  const std::string common = "ab --bin-a '" + t::bench() + "' --bin-b '" + hang_b + "' --source-dir '" + source_dir() +
                             "' --suite tiny.toml --warmup 0 --run-timeout " + std::to_string(kTimeout) + " ";

  SECTION("--on-failure continue: counted per variant, left out of the statistics") {
    auto r = t::run_bench(common + "--rounds 2 --on-failure continue --out-dir ab", d.path());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const json meta = json::parse(t::slurp(d.file("ab/ab.json")));
    CHECK(meta.at("status") == "complete");
    REQUIRE(meta.at("failed_runs").size() == 1);
    CHECK(meta["failed_runs"][0]["reason"] == timed_out);
    CHECK(meta["failed_runs"][0]["variant"] == "b");
    CHECK(meta.at("runs_failed").at("b").at("failed") == 1);
    CHECK(meta.at("runs_failed").at("a").at("failed") == 0);
    CHECK(has(t::slurp(d.file("ab/comparison.md")), "b 1 of 2 measured run(s) failed"));
    CHECK(has(r.out, "## Failed runs"));
    CHECK(cuzk::read_results(d.file("ab/b.jsonl")).samples.size() == 1);  // the one that ran
    for (pid_t p : hung_pids(r.err)) CHECK(gone(p));
    CHECK(hung_pids(r.err).size() == 1);
  }
  SECTION("--on-failure stop (the default): exit 1, ab.json says which run failed and why") {
    auto r = t::run_bench(common + "--rounds 1 --out-dir ab", d.path());
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(has(r.err, "round 0 of b failed (" + timed_out + ")"));
    const json meta = json::parse(t::slurp(d.file("ab/ab.json")));
    CHECK(meta.at("status") == "failed");
    CHECK(meta.at("failed_runs").size() == 1);
    for (pid_t p : hung_pids(r.err)) CHECK(gone(p));
  }
}

TEST_CASE("matrix: a run past --run-timeout is killed, counted against its variant, and the matrix goes on or stops",
          "[signals][matrix]") {
  t::TempDir d;
  t::spit(d.file("tiny.toml"), t::tiny_porep_suite("tiny", 1));
  REQUIRE(t::share_params_cache(d));
  // One binary for both variants (--bin): the first run of the matrix hangs, whichever variant
  // the seeded order puts first.
  const std::string hang = hanging_wrapper(d, true);
  const std::string common = "matrix --variants baseline,pinned --bin '" + hang + "' --allow-dirty --source-dir '" +
                             source_dir() + "' --suite tiny.toml --warmup 0 --seed 3 --run-timeout " +
                             std::to_string(kTimeout) + " ";

  SECTION("--on-failure continue: the run is listed, counted per variant and left out") {
    auto r = t::run_bench(common + "--rounds 2 --on-failure continue --out-dir m", d.path());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const json m = json::parse(t::slurp(d.file("m/manifest.json")));
    CHECK(m.at("status") == "complete");
    REQUIRE(m.at("failed_runs").size() == 1);
    const json& f = m["failed_runs"][0];
    CHECK(f.at("reason") == timed_out);
    CHECK(f.at("timed_out") == true);
    CHECK(f.at("round") == 0);
    const std::string who = f.at("variant").get<std::string>();
    CHECK(m.at("runs_failed").at(who).at("failed") == 1);
    CHECK(m.at("runs_failed").at(who == "baseline" ? "pinned" : "baseline").at("failed") == 0);
    CHECK(m.at("runs_ok") == 3);
    // 2 rounds a side: said before the runs that no verdict of change can come of them.
    CHECK(has(r.err, "[matrix] warning: with 2 rounds no variant's change can be called"));
    CHECK(has(r.out, "## Failed runs"));
    CHECK(has(r.out, who + " 1 of 2 measured run(s) failed"));
    CHECK(has(t::slurp(d.file("m/attribution.md")), "round 0 of " + who + ": " + timed_out));
    CHECK(cuzk::read_results(d.file("m/variants/" + who + ".jsonl")).samples.size() == 1);  // the round that ran
    const auto hung = hung_pids(r.err);
    REQUIRE(hung.size() == 1);
    CHECK(gone(hung[0]));
  }
  SECTION("--on-failure stop (the default): exit 1, the manifest says which run failed and why") {
    auto r = t::run_bench(common + "--rounds 2 --out-dir m", d.path());
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(has(r.err, "failed (" + timed_out + ")"));
    CHECK(has(r.err, "stopped (--on-failure stop)"));
    const json m = json::parse(t::slurp(d.file("m/manifest.json")));
    CHECK(m.at("status") == "failed");
    CHECK(m.at("failed_runs").size() == 1);
    CHECK_FALSE(t::exists(d.file("m/attribution.json")));  // nothing attributed from a stopped matrix
    for (pid_t p : hung_pids(r.err)) CHECK(gone(p));
  }
}

TEST_CASE("run --run-timeout: a hung micro benchmark binary is killed with its children, one error, no file",
          "[signals][suite]") {
  t::TempDir d;
  // A stand-in for bench_msm that never answers, with a grandchild that must not survive it.
  const std::string micro = d.file("micro");
  REQUIRE(std::system(("mkdir -p '" + micro + "'").c_str()) == 0);
  t::spit(micro + "/bench_msm", "#!/bin/sh\nif [ \"$1\" = --help ]; then exit 0; fi\nsleep 1000 &\necho $! > '" +
                                    d.file("sleep.pid") + "'\nwait\n");
  chmod((micro + "/bench_msm").c_str(), 0755);
  t::spit(d.file("m.toml"), "name = \"m\"\n[[case]]\nname = \"msm\"\nkind = \"micro\"\ngroup = \"msm\"\n");
  const auto t0 = Clock::now();
  auto r = t::run_bench("run --suite m.toml --run-timeout 2 --out out.jsonl", d.path(), "CUZK_MICRO_DIR=" + micro);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(count_of(r.err, "cuzk-bench: error: ") == 1);
  CHECK(has(r.err, "case 'msm': " + micro + "/bench_msm failed: timed out after 2s"));
  CHECK(took < 2 + 5 + 5);  // the timeout, SIGTERM's grace, and slack for a loaded machine
  CHECK_FALSE(t::exists(d.file("out.jsonl")));  // no sample: no header-only file left behind
  const std::string sleeper = t::slurp(d.file("sleep.pid"));
  REQUIRE_FALSE(sleeper.empty());
  CHECK(gone(std::stoi(sleeper)));
}

TEST_CASE("ab interrupted by SIGINT while a round hangs: exit 130, ab.json interrupted, no child left", "[signals][ab]") {
  t::TempDir d;
  t::spit(d.file("tiny.toml"), t::tiny_porep_suite("tiny", 1));
  REQUIRE(t::share_params_cache(d));
  const std::string hang_b = hanging_wrapper(d, false);
  const std::string err = d.file("err");
  const pid_t pid = spawn_bench(d,
                                {"ab", "--bin-a", t::bench(), "--bin-b", hang_b, "--source-dir", source_dir(), "--suite",
                                 "tiny.toml", "--warmup", "0", "--rounds", "1", "--out-dir", "ab"},
                                err);
  REQUIRE(pid > 0);
  int early = 0;  // ab ending before its round hung (a stale binary, a bad option) fails at once
  const bool hung_now = wait_for([&] { return has(t::slurp(err), "injected hang in proof/prove") || waitpid(pid, &early, WNOHANG) == pid; }, 120);
  INFO(t::slurp(err));
  REQUIRE(hung_now);
  REQUIRE(has(t::slurp(err), "injected hang in proof/prove"));
  kill(pid, SIGINT);
  const int code = wait_exit(pid, cuzk::interrupt::kStopSeconds + 3);
  const std::string e = t::slurp(err);
  INFO(e);
  CHECK(code == 130);
  const json meta = json::parse(t::slurp(d.file("ab/ab.json")));
  CHECK(meta.at("status") == "interrupted");
  CHECK(meta.at("interrupted").at("signal") == "SIGINT");
  const auto hung = hung_pids(e);
  REQUIRE(hung.size() == 1);
  CHECK(gone(hung[0]));
}

TEST_CASE("bisect stopped by SIGINT or SIGTERM while it builds: exit 130 / 143, no worktree, no build, the log says so",
          "[signals][bisect]") {
  const int sig = GENERATE(SIGINT, SIGTERM);
  const std::string name = cuzk::interrupt::signal_name(sig);
  INFO(name);
  t::TempDir d;
  const Repo r = two_commit_repo(d);
  const std::string err = d.file("err"), build = d.file("build.pid");
  // The build: a process that runs until it is stopped, its pid written first.
  const pid_t pid = spawn_bisect(d, r, "echo $$ > '" + build + "'; exec sleep 60", err);
  REQUIRE(pid > 0);
  int early = 0;  // bisect refusing the request ends it before any build
  REQUIRE(wait_for([&] { return pid_in(build) > 0 || waitpid(pid, &early, WNOHANG) == pid; }, 60));
  INFO(t::slurp(err));
  REQUIRE(pid_in(build) > 0);
  CHECK(worktree_count(r.path) == 2);  // the good revision's, being built
  kill(pid, sig);
  const int code = wait_exit(pid, 30);
  INFO(t::slurp(err));
  CHECK(code == cuzk::interrupt::exit_code(sig));
  CHECK(has(t::slurp(err), "cuzk-bench: error: interrupted by " + name + " while building the good revision"));
  CHECK(gone(pid_in(build)));
  check_bisect_cleaned_up(d, r, name);
}

TEST_CASE("bisect gets a second SIGINT while its build ignores the first: it ends at once, the repository cleaned up",
          "[signals][bisect]") {
  t::TempDir d;
  const Repo r = two_commit_repo(d);
  const std::string err = d.file("err"), build = d.file("build.pid");
  // A build that ignores SIGINT and SIGTERM: only the second signal (or the bound) ends it.
  const pid_t pid = spawn_bisect(d, r, "trap '' INT TERM; echo $$ > '" + build + "'; exec sleep 60", err);
  REQUIRE(pid > 0);
  int early = 0;
  REQUIRE(wait_for([&] { return pid_in(build) > 0 || waitpid(pid, &early, WNOHANG) == pid; }, 60));
  INFO(t::slurp(err));
  REQUIRE(pid_in(build) > 0);
  kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  const int code = wait_exit(pid, 30);
  const std::string e = t::slurp(err);
  INFO(e);
  CHECK(code == 130);
  // The watchdog's own line for a second signal: it did not wait for the bound.
  CHECK(has(e, "interrupted by SIGINT, then signalled again: stopped at once"));
  CHECK(gone(pid_in(build)));
  check_bisect_cleaned_up(d, r, "SIGINT");
}

TEST_CASE("ab stopped by SIGINT while it builds a variant: exit 130, the build ended, no folder", "[signals][ab]") {
  t::TempDir d;
  t::spit(d.file("tiny.toml"), t::tiny_porep_suite("tiny", 1));
  // A source tree whose configure step runs until it is stopped (its pid written first).
  const std::string src = d.file("src"), conf = d.file("configure.pid");
  REQUIRE(std::system(("mkdir -p '" + src + "'").c_str()) == 0);
  t::spit(src + "/CMakePresets.json",
          R"({"version": 3, "configurePresets": [{"name": "a", "binaryDir": "${sourceDir}/build/a"},)"
          R"( {"name": "b", "binaryDir": "${sourceDir}/build/b"}]})");
  t::spit(src + "/CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(slow NONE)\n"
                                   "execute_process(COMMAND sh -c \"echo $$ > '" + conf + "'; exec sleep 60\")\n");
  const std::string err = d.file("err");
  const pid_t pid =
      spawn_bench(d, {"ab", "--a", "a", "--b", "b", "--source-dir", src, "--suite", "tiny.toml", "--out-dir", "ab"}, err);
  REQUIRE(pid > 0);
  int early = 0;
  REQUIRE(wait_for([&] { return pid_in(conf) > 0 || waitpid(pid, &early, WNOHANG) == pid; }, 60));
  INFO(t::slurp(err));
  REQUIRE(pid_in(conf) > 0);
  kill(pid, SIGINT);
  const int code = wait_exit(pid, 30);
  const std::string e = t::slurp(err);
  INFO(e);
  CHECK(code == 130);
  CHECK(has(e, "interrupted by SIGINT while building or checking the variants"));
  CHECK(gone(pid_in(conf)));
  CHECK_FALSE(t::exists(d.file("ab")));  // nothing was measured
}

TEST_CASE("engine hung in a job and sent SIGINT: exit 130, the summary says the run in flight was discarded",
          "[signals][engine]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  const std::string out = d.file("e.jsonl"), err = d.file("err");
  const pid_t pid = spawn_bench(
      d, {"engine", "--jobs", "1", "--partitions", "1", "--challenges", "1", "--depth", "4", "--counters", "", "--out", out},
      err, {"CUZK_INJECT_FAULT=hang_in:proof/prove"});
  REQUIRE(pid > 0);
  int early = 0;
  REQUIRE(wait_for([&] { return has(t::slurp(err), "injected hang in") || waitpid(pid, &early, WNOHANG) == pid; }, 120));
  INFO(t::slurp(err));
  REQUIRE(has(t::slurp(err), "injected hang in"));
  kill(pid, SIGINT);
  const int code = wait_exit(pid, 30);
  INFO(t::slurp(err));
  CHECK(code == 130);
  const auto rf = cuzk::read_results(out);
  REQUIRE(rf.summary.has_value());
  const json& in = rf.summary->value.at("interrupted");
  CHECK(in.at("signal") == "SIGINT");
  CHECK(in.at("in_flight") == "discarded");
}

TEST_CASE("noise stopped by SIGINT in its third process: exit 130, the workload gone, the two finished ones analysed",
          "[signals][noise]") {
  t::TempDir d;
  t::spit(d.file("tiny.toml"), t::tiny_porep_suite("tiny", 1));
  REQUIRE(t::share_params_cache(d));
  // The workload: this cuzk-bench, except the third process, which runs until it is stopped.
  const std::string w = d.file("bench.sh"), third = d.file("third.pid");
  t::spit(w, "#!/bin/sh\necho x >> '" + d.file("count") + "'\nif [ $(wc -l < '" + d.file("count") +
                 "') -ge 3 ]; then echo $$ > '" + third + "'; exec sleep 60; fi\nexec '" + t::bench() + "' \"$@\"\n");
  chmod(w.c_str(), 0755);
  const std::string err = d.file("err");
  const pid_t pid = spawn_bench(d,
                                {"noise", "--processes", "4", "--reps", "3", "--workload", "run", "--workload-arg=--suite",
                                 "--workload-arg=tiny.toml", "--bench", w, "--out-dir", "n"},
                                err);
  REQUIRE(pid > 0);
  int early = 0;
  REQUIRE(wait_for([&] { return pid_in(third) > 0 || waitpid(pid, &early, WNOHANG) == pid; }, 180));
  INFO(t::slurp(err));
  REQUIRE(pid_in(third) > 0);
  kill(pid, SIGINT);
  const int code = wait_exit(pid, 30);
  const std::string e = t::slurp(err);
  INFO(e);
  CHECK(code == 130);
  CHECK(has(e, "interrupted by SIGINT after 2 of 4 process(es)"));
  CHECK(gone(pid_in(third)));
  const json doc = json::parse(t::slurp(d.file("n/noise.json")));
  CHECK(doc.at("run").at("status") == "interrupted");
  CHECK(doc.at("run").at("interrupted").at("processes_done") == 2);
  CHECK(has(t::slurp(d.file("n/noise.md")), "Interrupted by SIGINT: this analysis covers the 2 of 4 process(es)"));
}

TEST_CASE("calibrate stopped by SIGINT in its pool: exit 130, the workload gone, pool/index.json interrupted",
          "[signals][calibrate]") {
  t::TempDir d;
  // The workload: this cuzk-bench, except the second process, which runs until it is stopped.
  const std::string w = d.file("bench.sh"), second = d.file("second.pid");
  t::spit(w, "#!/bin/sh\necho x >> '" + d.file("count") + "'\nif [ $(wc -l < '" + d.file("count") +
                 "') -ge 2 ]; then echo $$ > '" + second + "'; exec sleep 60; fi\nexec '" + t::bench() + "' \"$@\"\n");
  chmod(w.c_str(), 0755);
  const std::string err = d.file("err");
  const pid_t pid = spawn_bench(d,
                                {"calibrate", "--workload", "selfmeasure", "--trials", "2", "--runs", "2", "--pool-a", "4",
                                 "--pool-b", "2", "--slowdowns", "50", "--bench", w, "--out-dir", "c"},
                                err);
  REQUIRE(pid > 0);
  int early = 0;
  REQUIRE(wait_for([&] { return pid_in(second) > 0 || waitpid(pid, &early, WNOHANG) == pid; }, 120));
  INFO(t::slurp(err));
  REQUIRE(pid_in(second) > 0);
  kill(pid, SIGINT);
  const int code = wait_exit(pid, 30);
  const std::string e = t::slurp(err);
  INFO(e);
  CHECK(code == 130);
  CHECK(has(e, "interrupted by SIGINT: no calibration was written"));
  CHECK(gone(pid_in(second)));
  const json index = json::parse(t::slurp(d.file("c/pool/index.json")));
  CHECK(index.at("status") == "interrupted");
  CHECK(index.at("interrupted").at("runs_done") == 1);
  CHECK(index.at("runs").size() == 1);
  CHECK_FALSE(t::exists(d.file("c/calibration.json")));
}
