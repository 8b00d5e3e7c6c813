// `cuzk-bench compare A B`: phase-by-phase comparison of two results files (cuzk JSONL or
// Google Benchmark JSON). Statistics and the verdict rule: docs/compare.md.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk {

struct CompareOptions {
  double alpha = 0.05;             // significance level of the two-sided Mann-Whitney U test
  double noise_threshold = 0.03;   // relative change below which a significant difference is "unchanged"
  std::map<std::string, double> phase_thresholds;  // phase -> relative threshold override
  int bootstrap_resamples = 2000;
  uint64_t bootstrap_seed = 1;
  bool allow_machine_mismatch = false;  // else refuse results from different machines/GPUs (throws CompareError)
  size_t min_samples = 5;          // warn below this per side
  bool include_warmup = false;
  double ci_level = 0.95;
  // Threshold for one phase: phase_thresholds[phase] if present, else noise_threshold.
  double threshold_for(const std::string& phase) const {
    auto it = phase_thresholds.find(phase);
    return it == phase_thresholds.end() ? noise_threshold : it->second;
  }
};

struct CounterDelta {
  std::string name;
  std::optional<double> median_a, median_b;
  std::optional<double> ratio;     // median_b / median_a when both present and median_a != 0
  std::string note;                // e.g. "+12%", "x3.0", "n/a (event does not exist)"
};

struct PhaseComparison {
  std::string suite, case_name, params;  // params: canonical JSON dump of the sample's parameters object
  std::string phase;                     // slash path, e.g. "proof/synth" (Google Benchmark: benchmark name)
  std::string metric;                    // "wall_ns" or "gpu_ns"
  size_t n_a = 0, n_b = 0;
  double median_a = 0, median_b = 0, mad_a = 0, mad_b = 0, iqr_a = 0, iqr_b = 0;
  double ratio = 1, ci_low = 1, ci_high = 1;   // B/A of medians, 95% bootstrap CI
  double p_value = 1;
  bool exact_test = false;               // exact U distribution used
  double threshold = 0.03;               // relative noise threshold applied to this row
  std::string verdict;                   // "faster", "slower", "unchanged", "too noisy"
  std::string missing;                   // "" or "a" / "b": phase present only on one side (no stats)
  std::vector<CounterDelta> counters;
  std::vector<std::string> warnings;
};

struct Comparison {
  std::string path_a, path_b;
  std::string format_a, format_b;        // "cuzk" or "gbench"
  std::vector<PhaseComparison> rows;
  std::vector<std::string> warnings;
  nlohmann::json provenance_a, provenance_b, machine_a, machine_b;
  std::vector<std::string> cases_only_a, cases_only_b;  // "suite/case params" keys on one side only
};

class CompareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Auto-detects the format of each file. Throws CompareError for unreadable/malformed files,
// different formats, or different machines (unless allow_machine_mismatch).
Comparison compare_files(const std::string& a, const std::string& b, const CompareOptions& o);
std::string format_table(const Comparison&);     // aligned terminal table
std::string format_markdown(const Comparison&);
nlohmann::json to_json(const Comparison&);

// The verdict rule of docs/compare.md, exposed for tests and `calibrate`.
std::string compare_verdict(double p_value, double ratio, double ci_low, double ci_high,
                            double alpha, double threshold);

}  // namespace cuzk
