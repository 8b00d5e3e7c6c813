// Running a suite in measured processes, as ab, matrix and bisect drive it: the suite loaded
// before anything runs, the command of one process, and the merge of its round files.
#pragma once
#include <string>
#include <vector>

#include "harness/suite/suite.hpp"

namespace cuzk::cli {

// Merges the round files of one variant into a valid results file: warm-up rounds are kept
// with warmup=true, measured samples renumbered in order; every other field of a sample (its
// "round_id" included) is kept. `out` is replaced whole: written to a temporary beside it, then
// renamed over it, so that it never holds part of a merge.
void merge_rounds(const std::vector<std::string>& files, int warmup_rounds, const std::string& out);

// A suite named or given as a file, loaded before anything is built or run: its absolute path in
// `path`; a bad suite throws Error (exit 2) with the suite's own message.
struct LoadedSuite {
  std::string path;
  suite::Suite suite;
};
LoadedSuite load_suite_for_runs(const std::string& name_or_file);

// The shell command that runs a suite in one measured process, as ab, matrix and bisect drive
// it: `<bin> run --suite <suite> --reps N --force --out <out> <extra>`, its stdout discarded.
// `round` >= 0 prefixes `env CUZK_ROUND_ID=<round> `, so that every sample of the process carries
// "round_id" and compare can pair the sides round by round (docs/compare.md, "Designs"); an
// interleaved run passes its round index (warm-up rounds included), -1 adds nothing.
// Run it with run_child (harness/measure/process.hpp): own process group, --run-timeout.
std::string suite_run_command(const std::string& bin, const std::string& suite_path, int reps, const std::string& out,
                              const std::string& extra, int round = -1);

}  // namespace cuzk::cli
