// Running a suite in measured processes and merging their rounds (suite_runs.hpp).
#include "harness/cli/suite_runs.hpp"

#include <fmt/core.h>

#include <filesystem>

#include "harness/cli/commands.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/results.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

}  // namespace

void merge_rounds(const std::vector<std::string>& files, int warmup_rounds, const std::string& out) {
  int rep = 0;  // numbers the measured samples of all rounds in order
  std::vector<json> samples;
  json header;
  uint64_t elapsed = 0;
  for (size_t r = 0; r < files.size(); ++r) {
    ResultsFile rf = read_results(files[r]);
    if (r == 0) header = rf.header.value;
    const bool warm = int(r) < warmup_rounds;
    for (auto& s : rf.samples) {
      json v = s.value;  // whole, so "round_id" (the round the process measured) stays with the sample
      if (v.value("warmup", false)) continue;  // the round's own warm-ups (--stable: until settled) are not kept
      v["warmup"] = warm;
      v["repetition"] = warm ? int(r) : rep++;
      samples.push_back(v);
    }
    if (rf.summary) elapsed += rf.summary->value.value("elapsed_ns", uint64_t(0));
  }
  // One whole document through the shared output writer: `out` holds the old merge or the new one,
  // never a part (harness/measure/output_file.hpp).
  std::string text = results_line(header) + "\n";
  for (auto& s : samples) text += results_line(s) + "\n";
  text += results_line(make_summary(samples, elapsed)) + "\n";
  write_output_file(out, text);
}

LoadedSuite load_suite_for_runs(const std::string& name_or_file) {
  try {
    LoadedSuite l;
    l.path = fs::absolute(suite::resolve_suite(name_or_file)).string();
    l.suite = suite::load_suite_file(l.path);
    return l;
  } catch (const suite::SuiteError& e) {
    throw Error(e.what());
  }
}

std::string suite_run_command(const std::string& bin, const std::string& suite_path, int reps, const std::string& out,
                              const std::string& extra, int round) {
  const std::string env = round >= 0 ? fmt::format("env {}={} ", kRoundIdEnvVar, round) : std::string();
  return env + shell_quote(bin) + " run --suite " + shell_quote(suite_path) + fmt::format(" --reps {} --force --out ", reps) +
         shell_quote(out) + extra + " >/dev/null";
}

}  // namespace cuzk::cli
