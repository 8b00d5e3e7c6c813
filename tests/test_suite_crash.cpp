// End-to-end crash safety of `cuzk-bench run`: a suite run killed with SIGKILL while it is
// measuring leaves a results file whose every finished sample line is intact and readable,
// and the reader never accepts a partial line (docs/results-format.md, "Writing guarantees").
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "catch.hpp"
#include "harness/measure/results.hpp"
#include "killed_results.hpp"
#include "test_util.hpp"

namespace t = cuzk::test;

namespace {

size_t sample_lines(const std::string& text) {
  size_t n = 0;
  for (auto& l : t::lines_of(text)) n += l.find("\"type\":\"sample\"") != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("cuzk-bench run killed with SIGKILL keeps every finished sample, whole", "[suite][crash]") {
  t::TempDir d;
  t::spit(d.file("crash.toml"), t::tiny_porep_suite("crash", 100000));
  REQUIRE(t::share_params_cache(d));
  const std::string out = d.file("killed.jsonl");
  const std::string bench = t::bench();

  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (chdir(d.path().c_str()) != 0) _exit(126);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(bench.c_str(), "cuzk-bench", "run", "--suite", "crash.toml", "--counters", "", "--out", out.c_str(),
          (char*)nullptr);
    _exit(127);
  }
  // Bounded wait (parameter generation included) for two finished samples, or the child's end.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  size_t seen = 0;
  bool exited = false;
  int st = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    seen = sample_lines(t::slurp(out));
    if (seen >= 2) break;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
  }
  INFO("the child " << (exited ? "exited by itself" : "was killed") << "; samples seen: " << seen);
  REQUIRE_FALSE(exited);  // it must still have been running: 100000 repetitions
  REQUIRE(WIFSIGNALED(st));
  REQUIRE(seen >= 2);

  const cuzk::ResultsFile f = t::read_killed_results(out);
  std::string text = t::slurp(out);
  text.resize(text.rfind('\n') + 1);  // the complete lines (a kill mid-write may leave a partial one)
  CHECK_FALSE(f.summary.has_value());  // the run did not finish
  CHECK(f.samples.size() >= seen);     // every sample seen before the kill is still there
  for (auto& s : f.samples) {
    CHECK(s.value["case"] == "tiny");
    CHECK(s.value["phases"].contains("proof/synth"));
    CHECK(s.value["phases"].contains("proof/prove"));
  }

  // A partial line (planted here, whether or not the kill left one) is refused with its line
  // number rather than read as a sample.
  const auto lines = t::lines_of(text);
  const std::string partial = text + lines.back().substr(0, lines.back().size() / 2);
  t::spit(d.file("partial.jsonl"), partial);
  try {
    cuzk::read_results(d.file("partial.jsonl"));
    FAIL("a file ending in a partial line was accepted");
  } catch (const cuzk::ResultsError& e) {
    CHECK(std::string(e.what()).find(":" + std::to_string(lines.size() + 1) + ": truncated line") != std::string::npos);
  }
}
