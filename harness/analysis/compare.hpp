// `cuzk-bench compare A B`: phase-by-phase comparison of two results files (cuzk JSONL or
// Google Benchmark JSON). Statistics and the verdict rule: docs/compare.md.
//
// Three choices shape every row, and each is recorded in the output:
// - the metric: a phase whose samples all carry GPU time (CUDA events) on both sides is judged
//   by gpu_ns (its primary row), and its wall time follows as a secondary row that is shown but
//   never judged by gate or calibrate; other phases are judged by wall_ns (--metric wall: every
//   phase by wall time, GPU time secondary);
// - the unit (design, compare_design.cpp): when both sides' samples carry round ids (interleaved
//   runs), the sides are paired round by round and each round's log ratio of the medians is one
//   observation; else, when some process ran several repetitions, processes are the units (block
//   design); else every sample (--design paired|blocks|samples|auto);
// - the metric may also be a counter: when every sample names one as its "primary_metric" (an
//   instruction count from a simulator), that counter judges each phase that has it;
// - the samples: those taken while the GPU throttled or the host was loaded by others
//   (harness/measure/env_readings.hpp judge_env) are counted and named in a warning, and left out with
//   drop_disturbed (--drop-disturbed).
//
// A phase that only one side has (pin_abc of the pinned build) is compared as a cost of 0 on
// the other side: its row has the present side's median and a CI of the change, verdict
// "only in A" / "only in B". Beyond the rows, every case gets an accounting of each parent
// phase's change into its children's changes (compare_accounting.cpp) and a summary paragraph
// (compare_summary.cpp) that the outputs print before the table.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/measure/env_readings.hpp"

namespace cuzk {

// Which metric judges a phase (--metric): kAuto, GPU time where every sample of both sides has
// it, else wall time; kWall, wall time everywhere.
enum class MetricChoice { kAuto, kWall };
// The unit of observation (--design; docs/compare.md, "Designs"): per-round log ratios of the two
// sides' medians (where every sample carries a round_id), per-process medians, every sample, or
// kAuto: paired where possible, else blocks, else samples.
enum class DesignChoice { kAuto, kPaired, kBlocks, kSamples };
// The paired design's reported CI (--paired-ci): the t interval over rounds, or rounds resampled.
enum class PairedCi { kT, kBootstrap };
// The names the command line and the JSON outputs use: "auto", "wall"; "auto", "paired",
// "blocks", "samples"; "t", "bootstrap".
const char* choice_name(MetricChoice m);
const char* choice_name(DesignChoice d);
const char* choice_name(PairedCi c);

// Which metric judges a phase, what the unit of observation is, and which samples count: the
// choices in the header comment above, shared by compare, gate, calibrate and ab.
struct AnalysisChoices {
  MetricChoice metric_choice = MetricChoice::kAuto;
  DesignChoice design = DesignChoice::kAuto;
  PairedCi paired_ci = PairedCi::kT;
  bool drop_disturbed = false;     // leave out samples judged throttled or loaded
  EnvThresholds env_thresholds;
};

struct CompareOptions {
  double alpha = 0.05;             // significance level of the two-sided Mann-Whitney U test
  double noise_threshold = 0.03;   // relative change below which a significant difference is "unchanged"
  std::map<std::string, double> phase_thresholds;  // phase -> relative threshold override
  int bootstrap_resamples = 2000;
  uint64_t bootstrap_seed = 1;
  bool allow_machine_mismatch = false;  // else refuse results from different machines/GPUs (throws CompareError)
  bool allow_injected = false;     // else refuse to compare a file written under $CUZK_INJECT_SLOWDOWN with a plain one
  size_t min_samples = 5;          // warn below this per side
  bool include_warmup = false;
  double ci_level = 0.95;
  AnalysisChoices analysis;
  // Load runs (suite "load"; load_rows.hpp): each case also gets a row per tail phase and
  // quantile, and one of throughput, after its phase rows.
  bool load_rows = true;
  std::vector<double> tail_quantiles = {0.9, 0.99};
  std::vector<std::string> tail_phases = {"request"};
  // Threshold of a tail row, by phase and metric ("p99"); else threshold_for(phase).
  std::map<std::string, std::map<std::string, double>> tail_thresholds;
  // Threshold of the throughput rows (a growth of the time between completions); else noise_threshold.
  std::optional<double> throughput_threshold;
  // Threshold for one phase: phase_thresholds[phase] if present, else noise_threshold.
  double threshold_for(const std::string& phase) const {
    auto it = phase_thresholds.find(phase);
    return it == phase_thresholds.end() ? noise_threshold : it->second;
  }
};

// The side of an A/B; a phase or child that only one side has names that side.
enum class Side { kA, kB };
// "a" or "b" (the letter the JSON outputs use); "" for none.
const char* side_letter(std::optional<Side> s);
// "only in A" / "only in B".
std::string only_in_text(Side s);

struct CounterDelta {
  std::string name;
  std::optional<double> median_a, median_b;
  std::optional<double> ratio;     // median_b / median_a when both present and median_a != 0
  std::string note;                // e.g. "+12%", "x3.0", "n/a (event does not exist)"
};

// Fills d.ratio and d.note ("+12%", "x3.0", "0 -> 45") from d.median_a and d.median_b (both set).
void describe_counter_delta(CounterDelta& d);
// Whether a counter's change is worth a place in a narrow table beside a phase whose medians are
// phase_a_ns and phase_b_ns (compare_format.cpp says the rule).
bool counter_is_notable(const CounterDelta& d, double phase_a_ns, double phase_b_ns);

struct PhaseComparison {
  std::string suite, case_name, params;  // params: canonical JSON dump of the sample's parameters object
  std::string phase;                     // slash path, e.g. "proof/synth" (Google Benchmark: benchmark name)
  std::string metric;                    // "wall_ns", "gpu_ns" or "gpu_kernel_ns"; a load row's "p99" or "throughput"
  bool primary = true;                   // the row that carries the phase's verdict (gate, calibrate)
  // "phase": a phase's row (its median; the rows above); "tail" or "throughput": a row of a load
  // case (load_rows.hpp) beside the phase rows. A reader that wants one row per phase takes the
  // primary "phase" rows.
  std::string kind = "phase";
  // "samples", "processes" (per-process medians) or "rounds" (paired); load rows: "jobs" or "rounds"
  std::string unit = "samples";
  std::string design = "samples";        // the case's design: "samples", "blocks" or "paired" (docs/compare.md)
  // Observations per side, counted in `unit`: samples, processes, or the rounds both sides have
  // (JSON: n_a, n_b).
  size_t observations_a = 0, observations_b = 0;
  size_t samples_a = 0, samples_b = 0;   // samples behind them
  double median_a = 0, median_b = 0, mad_a = 0, mad_b = 0, iqr_a = 0, iqr_b = 0;
  // B/A of medians with its 95% bootstrap CI; paired: exp(mean log ratio over rounds) with the CI
  // that ci_method names.
  double ratio = 1, ci_low = 1, ci_high = 1;
  std::string ci_method = "bootstrap";   // "bootstrap" (of medians); paired: "t" or "bootstrap" (over rounds)
  double p_value = 1;                    // Mann-Whitney U; paired: Wilcoxon signed-rank over rounds
  bool exact_test = false;               // exact null distribution used
  // median B - median A (ns), 95% bootstrap CI; paired: the mean per-round difference, its CI as ci_method.
  double delta = 0, delta_low = 0, delta_high = 0;
  // Paired only (NaN elsewhere): exp of the Hodges-Lehmann estimate of the log ratios, the t and the
  // round-bootstrap intervals of the ratio, and the sd of the per-round log ratios.
  double hodges_lehmann = NAN, t_low = NAN, t_high = NAN, boot_low = NAN, boot_high = NAN, sd_log_ratio = NAN;
  bool log_ratios = false;               // paired: analysed as log ratios (else as per-round differences)
  // The CI widened for the case's `family` primary rows (Bonferroni: level 1 - 0.05 / family),
  // of the ratio, or of the change for a row only one side has. Set on primary rows whose
  // verdict is a change; NaN elsewhere. A change whose widened CI still excludes "no change"
  // stands even though many phases were compared at once (compare_summary.cpp).
  size_t family = 0;
  double family_low = NAN, family_high = NAN;
  bool change_stands() const;
  double threshold = 0.03;               // relative noise threshold applied to this row
  std::string verdict;                   // "faster", "slower", "unchanged", "too noisy", "only in A", "only in B"
  std::optional<Side> only_in;           // set when only that side has the phase (its cost on the other is 0)
  std::vector<CounterDelta> counters;
  std::vector<std::string> warnings;
};

// What the environment readings said about one side's samples.
struct EnvSummary {
  size_t samples = 0;          // measured samples read
  size_t throttled = 0, loaded = 0, without_env = 0;
  size_t dropped = 0;          // left out (drop_disturbed)
  std::vector<std::string> examples;  // a few "repetition R (process P): why"
};

// One term of a parent phase's change (all in wall nanoseconds, medians B - A, with a bootstrap
// CI from resampling the same observations as the parent).
struct AccountingTerm {
  std::string kind;        // "child", "overlap" (minus the change of time children ran side by side), "remainder"
  std::string phase;       // the child's path ("" for overlap and remainder)
  std::optional<Side> only_in;  // set when the child exists on that side only
  double median_a = 0, median_b = 0;  // the child's medians (overlap: the overlapped time)
  double delta = 0, ci_low = 0, ci_high = 0;
  bool significant = false;  // the CI excludes 0
  bool concurrent = false;   // the child ran on another thread than its parent, beside it, in at least
                             // half the samples of a side (msm_b_g2 on the G2 thread)
};

// Where one parent phase's change comes from: parent = sum of children - overlap + remainder,
// sample by sample; in medians the remainder also takes what medians do not add up to.
struct Accounting {
  std::string suite, case_name, params;
  std::string parent;
  std::string unit = "samples";   // as the rows: "samples", "processes" or "rounds"
  size_t observations_a = 0, observations_b = 0;  // counted in `unit` (JSON: n_a, n_b)
  double median_a = 0, median_b = 0, delta = 0, ci_low = 0, ci_high = 0;
  bool significant = false;
  bool overlap_measured = false;  // both sides recorded complete spans (else children count as serial)
  std::vector<AccountingTerm> terms;  // children by |delta| descending, then overlap, then remainder
};

// The paragraph that opens a case's output (compare_summary.cpp).
struct CaseSummary {
  std::string suite, case_name, params;
  std::string end_to_end;         // the case's root phase ("proof"), "" when it has none
  std::string verdict;            // its primary row's verdict
  int rounds_needed = 0;          // observations per side (paired: rounds) that would settle a "too
                                  // noisy" verdict; -1: none would; 0: not too noisy
  std::string design;             // "samples", "blocks" or "paired"
  std::string design_reason;      // "paired by round (12 rounds on both sides; ...)"
  std::string text;
};

struct Comparison {
  std::string path_a, path_b;
  std::string format_a, format_b;        // "cuzk" or "gbench"
  std::vector<PhaseComparison> rows;
  std::vector<std::string> warnings;
  nlohmann::json provenance_a, provenance_b, machine_a, machine_b;
  // Each side's header "injected" ({"spec", "slowdowns"}) when it was written under
  // $CUZK_INJECT_SLOWDOWN, else null (harness/measure/inject.hpp).
  nlohmann::json injected_a, injected_b;
  std::vector<std::string> cases_only_a, cases_only_b;  // "suite/case params" keys on one side only
  MetricChoice metric_choice = MetricChoice::kAuto;  // as applied
  DesignChoice design = DesignChoice::kAuto;          // as asked (each case's choice: summaries)
  EnvSummary env_a, env_b;
  std::string label_a = "A", label_b = "B";  // "A (baseline)": the build's preset, when recorded
  std::vector<Accounting> accounting;    // every parent phase of every case in both files
  std::vector<CaseSummary> summaries;    // one per case in both files
};

// Whether a phase's kernel time (gpu_kernel_ns, summed over its samples) may judge it, against
// its copy time (gpu_copy_ns): only where kernels are most of its GPU work. An upload's kernel
// time is a few memsets, which would not see its copies slow down; the CUDA-event time judges it.
bool kernels_dominate(double kernel_total_ns, double copy_total_ns);

// The time a phase is judged by over its records (one "phases" entry per sample; nullptr where a
// sample lacks the phase), compare's rule for tools that read records themselves (noise,
// calibrate): wall_ns under kWall or where a record has no GPU time; gpu_kernel_ns, GPU kernel
// time without gaps, where every record has it (runs with --gpu-activity) and kernels dominate
// the phase's GPU work; else gpu_ns.
std::string judged_time_metric(const std::vector<const nlohmann::json*>& records,
                               MetricChoice choice = MetricChoice::kAuto);

// The row that carries a phase's verdict (its primary "phase" row), or nullptr when the phase is
// not in the comparison.
const PhaseComparison* primary_row(const Comparison& c, const std::string& phase);
// The first row of `phase` for `metric` ("wall_ns", "gpu_ns", "gpu_kernel_ns", ...), or nullptr.
const PhaseComparison* find_row(const Comparison& c, const std::string& phase, const std::string& metric);

class CompareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Auto-detects the format of each file. Throws CompareError for unreadable/malformed files,
// different formats, different machines (unless allow_machine_mismatch), or one file written
// under $CUZK_INJECT_SLOWDOWN and the other not (unless allow_injected).
Comparison compare_files(const std::string& a, const std::string& b, const CompareOptions& o);
struct FormatOptions {
  bool wide = false;  // every column (MAD/IQR per side, p); else the narrow set (docs/compare.md)
};
std::string format_table(const Comparison&, const FormatOptions& = {});  // aligned terminal text
std::string format_markdown(const Comparison&, const FormatOptions& = {});
nlohmann::json to_json(const Comparison&);
// One line of the accounting tree: "proof/prove +1.9 ms [..] = h2d -70.2 ms + pin_abc +90.4 ms
// (only in B) + ... + remainder +0.3 ms (n.s.)".
std::string format_accounting_line(const Accounting&);

// The verdict rule of docs/compare.md, exposed for tests and `calibrate`.
std::string compare_verdict(double p_value, double ratio, double ci_low, double ci_high,
                            double alpha, double threshold);

}  // namespace cuzk
