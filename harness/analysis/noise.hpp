// `cuzk-bench noise`: where does the run-to-run noise of each phase come from? (docs/noise.md)
//
// Input: results files of P processes that each ran R repetitions of the same workload. Per
// phase, on the log of its primary metric (compare's: gpu_kernel_ns when every analysed sample
// has one, else gpu_ns when every one has that, else wall_ns), so that every spread reads as a
// relative (cv-like) figure:
//   - a one-way random-effects ANOVA with processes as groups: within-process sd,
//     between-process sd, the share of the variance between processes, F and its p-value;
//   - the first-repetition effect (first / median of the later ones - 1, per process), kept out
//     of the ANOVA, the trend and the correlations, which use repetitions 2..R;
//   - the trend: pooled within-process OLS slope of log time on the repetition index;
//   - Spearman correlation of the time with each environment reading (sample "env") that varies;
//   - a one-sentence diagnosis naming the dominant source, only from significant findings.
// analyse() is a pure function of the loaded files; running the workload is cmd_noise.cpp's job.
#pragma once
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/analysis/stats.hpp"
#include "harness/measure/results.hpp"

namespace cuzk::noise {

// Bad or insufficient input; the message names the file (file:line) or the option at fault.
class NoiseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::vector<std::string> phases;  // rows to show (exact phase paths); empty: every phase
  bool include_warmup = false;      // warm-up samples count as their process's earliest repetitions
  double alpha = 0.05;              // significance level of every test behind the diagnosis
};

// Every statistic below carries `why`: "" when it was computed, else the reason it could not be
// (printed as "-" with a footnote; the numbers are then meaningless and written as null).

struct EnvCorrelation {
  std::string name;
  size_t n = 0;
  double rho = 0, p = 1;
  double p_adjusted = 1;  // Bonferroni over the readings tested for the row: min(1, p * tested)
};

struct PhaseNoise {
  std::string case_key;  // the case (and its parameters) the row belongs to
  std::string phase;
  std::string label;   // as printed: the phase, prefixed by the case when the data hold several
  std::string metric;  // "gpu_kernel_ns", "gpu_ns" or "wall_ns"
  size_t processes = 0, reps_min = 0, reps_max = 0, samples = 0;
  double median_ns = 0;  // over every analysed sample, first repetitions included
  double cv = 0;         // 1.4826 MAD / median over the same samples
  std::string cv_why;    // "" or why cv is not available
  Anova anova;
  FirstRep first;
  Trend trend;
  std::vector<EnvCorrelation> env;  // every reading that varies, strongest |rho| first
  std::string env_why;              // "" or why no correlation was computed
  std::string diagnosis;            // one sentence
};

struct ProcessInfo {
  std::string id;    // process_id, or "file:<path>" when the samples carry none
  std::string file;  // the file its first sample came from
  size_t samples = 0;
};

struct Analysis {
  Options options;
  std::vector<std::string> files;
  std::vector<ProcessInfo> processes;
  size_t warmup_skipped = 0;
  std::vector<PhaseNoise> rows;
  std::map<std::string, std::string> env_null;  // reading -> reason: null in every sample
  std::map<std::string, double> env_constant;   // reading -> its one value in every sample
  // reading -> its Spearman rho with env.interval_ns, when |rho| >= 0.999 over 6+ samples: a
  // function of the window's length (e.g. a rate's +- resolution), left out of the correlations
  std::map<std::string, double> env_window_derived;
  bool env_seen = false;  // some sample carries "env"
  nlohmann::json run;     // how the workload was run (null for --from)
};

// Analyses loaded results files (the samples of each file; grouped into processes by
// "process_id", or one process per file when absent). Throws NoiseError when there is no sample,
// fewer than 2 processes, a --phase that no sample holds, or malformed process_id / env fields.
Analysis analyse(const std::vector<ResultsFile>& files, const Options& o);
// Reads then analyses; unreadable or malformed files are NoiseError("file:line: ...").
Analysis analyse_files(const std::vector<std::string>& paths, const Options& o);

std::string format_table(const Analysis& a);  // terminal: table, footnotes, diagnosis, env notes
std::string format_markdown(const Analysis& a);
nlohmann::json to_json(const Analysis& a);  // schema "cuzk.noise", version 1

constexpr const char* kNoiseSchema = "cuzk.noise";
constexpr int kNoiseVersion = 1;

}  // namespace cuzk::noise
