#include "harness/measure/process.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

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
  CommandOutput r;
  FILE* f = popen((cmd + (quiet ? " 2>/dev/null" : "")).c_str(), "r");
  if (!f) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, f)) r.out.append(buf, n);
  r.code = decode_status(pclose(f));
  return r;
}

int run_status(const std::string& cmd) { return decode_status(std::system(cmd.c_str())); }

std::string utc_stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y%m%dT%H%M%SZ", &tm);
  return b;
}

}  // namespace cuzk
