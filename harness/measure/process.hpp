// Small process and time helpers shared by the subcommands that drive other processes
// (ab, calibrate, report) and by the machine probe.
#pragma once
#include <optional>
#include <string>

namespace cuzk {

// 'text' quoted for /bin/sh.
std::string shell_quote(const std::string& s);

struct CommandOutput {
  int code = -1;  // exit status, or 128 + signal; -1 when the command could not start
  std::string out;  // standard output
};
// Runs a shell command and captures its stdout (stderr passes through unless `quiet`).
CommandOutput run_capture(const std::string& cmd, bool quiet = false);
// Runs a shell command with inherited stdio; returns its exit status (128 + signal).
int run_status(const std::string& cmd);

// The running executable's path (/proc/self/exe); nullopt where it cannot be read. Commands that
// run other cuzk-bench processes default to this very binary, never one found on a PATH.
std::optional<std::string> own_executable();

// The current UTC time as 20261129T203018Z (file and folder names of runs).
std::string utc_stamp();

}  // namespace cuzk
