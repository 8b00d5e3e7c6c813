// `cuzk-bench calibrate`: how trustworthy is a comparison on this machine? (docs/calibration.md)
//
// 1. Pool. Runs the workload (`cuzk-bench selfmeasure` or `cuzk-bench prove`) as separate
//    processes, each with `--reps R` measured repetitions (plus the workload's warm-up): pool_a
//    plain runs, and pool_b runs for each slowdown level s with CUZK_INJECT_SLOWDOWN naming every
//    calibrated phase at s% (harness/measure/inject.hpp). A phase judged by GPU time or GPU kernel
//    time (compare.hpp) gets a ":gpu" entry (its reported GPU times are scaled, nothing waits); a
//    phase judged by wall time gets a host busy-wait. The first run is plain and decides each
//    phase's metric. The runs are interleaved round by round (one A run, then one run of each
//    level, in a shuffled order per round) so slow drift of the machine hits all pools alike.
// 2. Trials. An A/A trial draws 2N distinct runs from the A pool at random (seeded) and splits
//    them into two sides of N; an A/B trial at level s draws N runs from the A pool and N from
//    the level-s pool. Each side is written as a results file and compared with compare_files
//    (the same code and options as `cuzk-bench compare`: with R > 1 every process's median is
//    one observation, the block design). Per calibrated phase, on its primary row: a false alarm
//    is an A/A verdict "slower" or "faster"; a detection is an A/B verdict "slower". Trials
//    overlap in the runs they draw: they are resamples of pool_a + pool_b independent runs, not
//    independent experiments (the docs say what this means for the rates).
//    Draws (--draw): "unpaired" (the above), "paired" (every round of the pool holds two plain
//    runs A and A'; a trial draws N rounds and both sides come from those rounds: A/A pairs A
//    with A', A/B pairs A with the level's run; each sample carries its round as round_id, so
//    compare's paired design applies), or "both" from one pool, side by side.
//    Duet (--duet, harness/measure/duet.hpp): each pair of a round (A with A', A with each
//    level's run) runs at the same time, each on half of the CPUs, halves swapped per round.
//    Counter (--counter NAME): each calibrated phase judged by that per-phase counter instead
//    of time (its value stands in for the phase's wall time in the trial files), the injection
//    planting real work (":work") so that the counter grows.
// 3. Runs needed. From the A pool's robust coefficient of variation of each phase's observations
//    (cv = 1.4826 MAD / median), the normal-theory estimate of runs per side for a target effect
//    (see runs_needed()), next to the empirical detection curve.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/analysis/compare.hpp"

namespace cuzk::calibrate {

struct Options {
  std::string workload = "selfmeasure";  // "selfmeasure" or "prove"
  std::string bench;                     // cuzk-bench to run ("" -> this executable)
  std::vector<std::string> workload_args;  // extra arguments for the workload subcommand
  int trials = 40;
  int runs = 10;                         // processes per side
  int reps = 1;                          // measured repetitions per process (> 1: block design)
  bool stable = false;                   // pass --stable to the workload (docs/ab.md)
  std::vector<std::string> phases = {"proof"};  // calibrated together from one pool
  std::vector<double> slowdowns = {1, 2, 3, 5, 10};  // percent
  double target_effect = 3;              // percent
  double power = 0.90;
  int pool_a = 0;                        // 0 -> 4 * runs
  int pool_b = 0;                        // per level; 0 -> 2 * runs
  uint64_t seed = 1;
  std::string out_dir;                   // "" -> results/local/calibrate-<UTC time>
  std::string draw = "unpaired";         // "unpaired", "paired" or "both"
  bool duet = false;                     // the pool's pairs run at once on halves of the CPUs
  std::string counter;                   // "" (time) or a counter judged instead (e.g. sim::instructions)
  // A gate thresholds file (docs/gating.md): every trial is also gated with it, so that the A/A
  // trials count the gate's false failures per merge and the A/B trials its detections.
  std::string gate_thresholds;
  CompareOptions compare;
  std::function<void(const std::string&)> log;  // progress lines (may be empty)
};

struct LevelResult {
  double slowdown_pct = 0;   // 0 = the A/A trials
  int trials = 0;
  int slower = 0, faster = 0, unchanged = 0, too_noisy = 0, missing = 0;
  double median_ratio = 1;   // median over trials of the phase's B/A median ratio
  double rate() const { return trials ? double(slower) / trials : 0; }
  double false_alarm_rate() const { return trials ? double(slower + faster) / trials : 0; }
};

// The calibration of one phase.
struct PhaseResult {
  std::string phase;
  std::string metric = "wall_ns";   // the metric compare judges it by (gpu_kernel_ns, gpu_ns, wall_ns or a counter)
  std::vector<LevelResult> levels;  // [0] = A/A, then one per slowdown
  double median_ns = 0, mad_ns = 0, cv = 0;  // of its observations over the A pool
  double min_detectable_pct = -1;   // smallest level detected with >= power (and all larger); -1: none
  int runs_needed_target = 0;       // runs per side for target_effect (normal approximation); -1: never
  std::string note;                 // caveats (e.g. threshold above target)
};

// The trials of one draw ("unpaired" or "paired") over the pool.
struct DrawResult {
  std::string draw;
  std::vector<PhaseResult> phases;  // in the order of Options::phases
  int aa_any_phase_alarms = 0;      // A/A trials where any phase's primary row got slower/faster
  // With Options::gate_thresholds: per level (0 = A/A, then each slowdown) the trials the gate
  // failed (exit 1) and those it could not decide (exit 2); empty without a gate.
  struct GateLevel {
    double slowdown_pct = 0;
    int trials = 0, failed = 0, errors = 0;
  };
  std::vector<GateLevel> gate;
};

struct Result {
  Options options;
  std::string out_dir;
  std::vector<PhaseResult> phases;  // the first draw's (draws.front().phases)
  int aa_any_phase_alarms = 0;      // the first draw's
  std::vector<DrawResult> draws;    // one, or unpaired then paired (--draw both)
  int pool_rounds = 0;
  nlohmann::json duet;              // the CPU halves (duet::describe), null without --duet
  std::string unit = "samples";     // "processes" when reps > 1 (per-process medians)
  double pool_seconds = 0;
  nlohmann::json machine;
};

// Runs everything above; writes <out_dir>/calibration.json, calibration.md, pool/*.jsonl.
// Throws std::runtime_error (a failed run names its log file) or CompareError; under
// interrupt::install(), interrupt::Interrupted once SIGINT/SIGTERM arrives (pool/index.json then
// lists the runs that finished, with status "interrupted" when the pool was not complete).
Result run(const Options& o);

std::string format_table(const Result& r);     // the terminal table
std::string format_markdown(const Result& r);  // calibration.md
nlohmann::json to_json(const Result& r);

// The metric compare judges `phase` by in a plain run's measured sample lines
// (judged_time_metric, compare.hpp). For a GPU time the injection is ":gpu", which scales both
// GPU times (harness/measure/inject.hpp).
std::string judged_metric(const std::vector<nlohmann::json>& samples, const std::string& phase,
                          const CompareOptions& co);
// gpu_ns or gpu_kernel_ns.
bool is_gpu_metric(const std::string& metric);

}  // namespace cuzk::calibrate
