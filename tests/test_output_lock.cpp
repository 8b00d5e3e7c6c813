// One writer per output (docs/reliability.md, "One writer per output"): a results file or an
// output folder another process writes is refused with exit 2 and one line naming that
// process's pid, before any work and without touching the output; a holder that died (kill -9)
// blocks nobody; `ab --out-dir` refuses a folder that is not empty, as matrix and bisect do.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "catch.hpp"
#include "refusal.hpp"
#include "child_process.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/output_lock.hpp"
#include "harness/measure/results.hpp"
#include "test_util.hpp"

namespace t = cuzk::test;
using t::source_dir;
using t::wait_for;

using cuzk::test::check_refused;

namespace {

// Every cuzk-bench started here is bounded: a command that would run on (as before the
// outputs were claimed) fails its test instead of hanging it.
const std::string kBounded = "timeout 30";



// cuzk-bench with `args` in `dir` in the background, its output to files in `dir`.
pid_t spawn_bench(const std::string& dir, const std::vector<std::string>& args) {
  return t::spawn_bench(dir, args, "first.out", "first.err");
}

// A child process that runs `claim` (which takes a lock and keeps it in scope while it is
// alive) and waits to be killed; returns its pid once the claim is held.
template <class Claim>
pid_t hold_in_child(Claim claim) {
  int p[2];
  REQUIRE(pipe(p) == 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    try {
      claim([&] {
        (void)!write(p[1], "k", 1);
        for (;;) pause();
      });
    } catch (...) {
      _exit(1);
    }
  }
  close(p[1]);
  char c = 0;
  const bool held = read(p[0], &c, 1) == 1;
  close(p[0]);
  REQUIRE(held);
  return pid;
}

// A child process that claims `dir` and waits to be killed; returns its pid once it holds it.
pid_t hold_folder_in_child(const std::string& dir) {
  return hold_in_child([&](auto wait) {
    cuzk::FolderClaim claim(dir, "--out-dir", false);
    wait();
  });
}

std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  return out;
}

void kill_and_reap(pid_t pid) {
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
}

}  // namespace

TEST_CASE("a folder claim: exclusive, names its holder, released with the folder it made, never stale") {
  t::TempDir d;
  const std::string dir = d.file("new/out");
  {
    cuzk::FolderClaim claim(dir, "--out-dir", true);
    CHECK(t::slurp(dir + "/" + cuzk::kOutputLockName) == std::to_string(getpid()) + "\n");
  }
  CHECK_FALSE(t::exists(d.file("new")));  // nothing was written: the folders it created are gone

  const pid_t holder = hold_folder_in_child(dir);
  CHECK_THROWS_WITH(cuzk::FolderClaim(dir, "--out-dir", false),
                    Catch::Matchers::Contains("--out-dir " + dir + " is being written by another cuzk-bench (pid " +
                                              std::to_string(holder) + ")"));
  CHECK_THROWS_WITH(cuzk::check_not_claimed(dir + "/" + cuzk::kOutputLockName, "x"),
                    Catch::Matchers::Contains("(pid " + std::to_string(holder) + ")"));
  kill_and_reap(holder);
  // Its lock file stays, and so does its pid, but the lock died with it.
  REQUIRE(t::exists(dir + "/" + cuzk::kOutputLockName));
  cuzk::FolderClaim after(dir, "--out-dir", /*require_empty=*/true);  // the stale lock file is not content
  CHECK(after.held());
  t::spit(dir + "/manifest.json", "{}");
  after.release();
  CHECK(t::exists(dir + "/manifest.json"));
  CHECK_FALSE(t::exists(dir + "/" + cuzk::kOutputLockName));
  CHECK_THROWS_WITH(cuzk::FolderClaim(dir, "--out-dir", true), Catch::Matchers::Contains("already exists and is not empty"));
  CHECK_FALSE(t::exists(dir + "/" + cuzk::kOutputLockName));  // refused untouched
}

TEST_CASE("a results file: a second writer is refused with the first's pid, the file left as it is") {
  t::TempDir d;
  const std::string path = d.file("r.jsonl");
  const pid_t writer = hold_in_child([&](auto wait) {
    cuzk::ResultsWriter w(path);
    w.write({{"schema", "cuzk.results"}, {"version", 1}, {"type", "header"}});
    wait();
  });
  const std::string before = t::slurp(path);
  const std::string expect = path + " is being written by another cuzk-bench (pid " + std::to_string(writer) + ")";
  CHECK_THROWS_WITH(cuzk::ResultsWriter(path, cuzk::ResultsWriter::Mode::kOverwrite), Catch::Matchers::Contains(expect));
  CHECK_THROWS_WITH(cuzk::ResultsWriter(path, cuzk::ResultsWriter::Mode::kCreateNew), Catch::Matchers::Contains(expect));
  CHECK(t::slurp(path) == before);
  kill_and_reap(writer);
  cuzk::ResultsWriter again(path, cuzk::ResultsWriter::Mode::kOverwrite);  // a dead writer blocks nobody
  CHECK(t::slurp(path).empty());
}

TEST_CASE("two cuzk-bench writing one results file: the second exits 2 naming the first", "[cli]") {
  t::TempDir d;
  t::spit(d.file("tiny.toml"), t::tiny_porep_suite("tiny", 100000));  // runs until it is stopped
  REQUIRE(t::share_params_cache(d));
  const pid_t first = spawn_bench(d.path(), {"run", "--suite", "tiny.toml", "--out", "r.jsonl"});
  const bool started = wait_for([&] { return t::slurp(d.file("r.jsonl")).find('\n') != std::string::npos; }, 20);
  if (!started) kill_and_reap(first);
  INFO(t::slurp(d.file("first.err")));
  REQUIRE(started);
  const std::string header = t::lines_of(t::slurp(d.file("r.jsonl"))).front();
  const std::string who = "is being written by another cuzk-bench (pid " + std::to_string(first) + ")";
  for (const std::string& args :
       {std::string("run --suite tiny.toml --reps 1 --out r.jsonl"), std::string("run --suite tiny.toml --reps 1 --out ./r.jsonl --force"),
        std::string("prove --reps 1 --out r.jsonl --force"), std::string("engine --jobs 1 --out r.jsonl --force"),
        std::string("selfmeasure --reps 1 --out r.jsonl --force")}) {
    INFO(args);
    check_refused(t::run_bench(args, d.path(), kBounded), who);
    CHECK(t::lines_of(t::slurp(d.file("r.jsonl"))).front() == header);  // never truncated
  }
  kill_and_reap(first);  // kill -9: the lock goes with it
  auto r = t::run_bench("selfmeasure --reps 1 --out r.jsonl --force", d.path(), kBounded);
  INFO(r.err);
  CHECK(r.code == 0);
  const auto f = cuzk::read_results(d.file("r.jsonl"));
  CHECK(f.header.value.dump() != header);
  CHECK(f.summary.has_value());
}

TEST_CASE("an output folder another process writes is refused by every command that writes one", "[cli]") {
  t::TempDir d;
  const pid_t holder = hold_folder_in_child(d.file("out"));
  const std::string bench = t::bench(), src = source_dir();
  const std::string who = "--out-dir out is being written by another cuzk-bench (pid " + std::to_string(holder) + ")";
  for (const std::string& args : {
           "ab --bin-a '" + bench + "' --bin-b '" + bench + "' --source-dir '" + src +
               "' --suite quick --quick --case porep-tiny --rounds 1 --warmup 0 --out-dir out",
           "matrix --variants baseline,pinned --source-dir '" + src + "' --suite quick --no-build --allow-dirty --out-dir out",
           "bisect --repo '" + src + "' --good HEAD~1 --bad HEAD --suite quick --case porep-tiny --phase proof --out-dir out",
           std::string("noise --bench /bin/false --processes 2 --reps 3 --out-dir out"),
           std::string("calibrate --bench /bin/false --out-dir out"),
       }) {
    INFO(args);
    check_refused(t::run_bench(args, d.path(), kBounded), who);
    CHECK(entries_of(d.file("out")) == std::vector<std::string>{cuzk::kOutputLockName});  // untouched
  }
  kill_and_reap(holder);
}

TEST_CASE("ab --out-dir refuses a folder that holds a previous A/B, as matrix and bisect do", "[cli]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  REQUIRE(std::system(("mkdir -p '" + d.file("ab") + "'").c_str()) == 0);
  t::spit(d.file("ab/ab.json"), "previous");
  auto r = t::run_bench("ab --bin-a '" + t::bench() + "' --bin-b '" + t::bench() + "' --source-dir '" + source_dir() +
                            "' --suite quick --quick --case porep-tiny --rounds 1 --warmup 0 --out-dir ab",
                        d.path(), kBounded);
  check_refused(r, "--out-dir ab already exists and is not empty");
  CHECK(t::slurp(d.file("ab/ab.json")) == "previous");
  CHECK(entries_of(d.file("ab")) == std::vector<std::string>{"ab.json"});
}
