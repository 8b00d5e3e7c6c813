// `ab --nsys N`: after the timed rounds, N untimed Nsight Systems captures of each side (A, B,
// A, B, ...), their SQLite exports and the trace A/B of the two sets (docs/trace-diff.md,
// "From ab"). The captures are not measurements: their results files stay beside the traces.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace cuzk::cli {

// nsys as scripts/nsys-capture.sh finds it: $NSYS (which must then be an executable file), else
// the PATH, else the usual install folders. Throws Error (exit 2) naming where it looked.
std::string find_nsys();

struct AbTraceRequest {
  std::string nsys;          // find_nsys()
  int count = 0;             // traces per side
  std::string bin_a, bin_b;  // the two sides' cuzk-bench
  std::string suite_path;
  int reps = 1;
  std::string extra;  // the rounds' run options (--quick, --case, --backend, ...)
  std::string dir;    // the A/B's folder: traces go to <dir>/nsys/{a,b}/
  double run_timeout = 0;
};

// Captures, exports and compares; prints the trace A/B's text and writes trace-diff.md and
// trace-diff.json beside comparison.md. `meta` (ab.json) gets an "nsys" entry. Throws Error: exit
// 1 when a capture or export fails (the A/B's own files stay), 130/143 when interrupted.
void capture_and_diff_traces(const AbTraceRequest& r, nlohmann::json& meta);

}  // namespace cuzk::cli
