// Test helper: run a shell command, capture stdout+stderr and the exit status.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace cuzk::testing {

struct CommandResult {
  int status = -1;  // exit code, or 128+signal
  std::string output;
};

inline CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, f)) r.output.append(buf, n);
  int st = pclose(f);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return r;
}

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace cuzk::testing
