// Helpers for tests that start cuzk-bench in the background and act on it while it runs (send
// it a signal, start a second one beside it), and for tests that read a git checkout.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"

namespace cuzk::test {

// cuzk-bench with `args`, started in `dir` in the background: stdout to `out`, stderr to `err`
// (paths relative to `dir`, or absolute), `env` ("NAME=value") added. Returns the child's pid.
inline pid_t spawn_bench(const std::string& dir, const std::vector<std::string>& args, const std::string& out,
                         const std::string& err, const std::vector<std::string>& env = {}) {
  const std::string bin = bench();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (chdir(dir.c_str()) != 0) _exit(126);
  for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
  const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(o, 1);
  dup2(e, 2);
  std::vector<char*> argv{const_cast<char*>("cuzk-bench")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(bin.c_str(), argv.data());
  _exit(127);
}

// Bounded poll (a readiness condition on a file or a process), never a guess: true once
// `ready()` holds, false when `seconds` passed first.
template <class F>
bool wait_for(F ready, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ready();
}

// The source tree: $CUZK_SOURCE_DIR (ctest sets it), else the one this test was built from.
inline std::string source_dir() {
  const char* s = std::getenv("CUZK_SOURCE_DIR");
  return s && *s ? s : CUZK_SOURCE_DIR;
}

// stdout of a shell command, trailing newline removed; fails the test when it fails.
inline std::string capture(const std::string& cmd) {
  FILE* f = popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  REQUIRE(pclose(f) == 0);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace cuzk::test
