// Stable mode (`--stable` of `cuzk-bench prove` and `run`, docs/ab.md "Stable mode"): conditions
// under which two runs of the same proof time alike, and warm-ups until the times settle.
//
// Who calls what: a subcommand checks its flags (resolve_warmup), then calls apply_stable_mode()
// first thing, before resolve_backend() probes the GPU (module loading is read once, when CUDA
// initializes) and before anything uses ThreadPool::global(); it prints summary(), and passes
// {"stable": describe(mode)} to SessionOptions::header_extra. The job (run_porep_job) drives its
// warm-ups with a Warmups tracker and reports WarmupOutcome, which the subcommand records in the
// summary line through describe(outcome).
//
// What it never does: change GPU settings (clocks, power limits, persistence mode, application
// clocks). The header records the clocks the machine probe read; locking them is an opt-in on
// one's own machine, outside cuzk (docs/ab.md).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "prover/util/cpu_placement.hpp"

namespace cuzk {

// ---------------------------------------------------------------- placement and module loading

struct StableMode {
  std::string cuda_module_loading;          // CUDA_MODULE_LOADING in effect ("EAGER" unless the user set it)
  bool module_loading_set_by_user = false;  // the user's value was kept
  placement::Placement placement;           // the driver (this thread) and the pool's CPUs
  unsigned pool_threads = 0;                // ThreadPool::global().size(): its workers + the calling thread
};

// Sets CUDA_MODULE_LOADING=EAGER unless already set (every kernel is loaded when CUDA starts,
// not at its first launch inside a measured phase), sets the default placement of this
// process's CPUs (placement::default_split), creates the global pool on the worker CPUs and pins
// the calling thread, the one that drives the GPU, to the driver CPU. Throws std::runtime_error
// when the process has fewer than 2 CPUs, and std::logic_error when a placement is already set
// or the pool already exists (once per process).
StableMode apply_stable_mode();

// The header's "stable" object: {"stable": true, "cuda_module_loading", "module_loading_set_by":
// "cuzk"|"user", "driver_cpus", "worker_cpus", "pool_threads", "gpu_clocks": "read, never changed"}.
nlohmann::json describe(const StableMode& mode);
// One line for stderr: where the threads run and the module loading in effect.
std::string summary(const StableMode& mode);

// ---------------------------------------------------------------- warm-ups

constexpr int kDefaultWarmupCap = 20;
// The settling rule: the `proof` wall times of the last kSettleWindow warm-ups span (max - min)
// at most kSettleSpread of their median: NVBench's relative-noise stopping criterion, on a
// window short enough for proofs of seconds. It can hold at the 3rd warm-up at the earliest, so
// a cap must allow at least that many.
constexpr int kSettleWindow = 3;
constexpr double kSettleSpread = 0.02;

// How a job warms up: a fixed number of times (--warmup N), or until the proof time settles
// (--warmup auto).
enum class WarmupMode { kFixed, kUntilSettled };

struct WarmupPlan {
  WarmupMode mode = WarmupMode::kFixed;
  int count = 0;                // kFixed: the warm-ups
  int cap = kDefaultWarmupCap;  // kUntilSettled: the most warm-ups
  bool until_settled() const { return mode == WarmupMode::kUntilSettled; }
};

// The plan asked for by --warmup TEXT (nullopt: not given), --warmup-cap N (nullopt: not given)
// and --stable; nullopt when neither asks for anything (the command's own default count). Auto
// is the default under --stable. Throws std::invalid_argument with the message for the user:
// TEXT neither a count >= 0 nor "auto", a cap below kSettleWindow, or a cap without auto.
std::optional<WarmupPlan> resolve_warmup(const std::optional<std::string>& text, std::optional<int> cap, bool stable);

struct WarmupOutcome {
  WarmupMode mode = WarmupMode::kFixed;
  int done = 0;            // warm-ups run
  bool converged = false;  // kUntilSettled: the rule held before the cap
  double spread = 0;       // kUntilSettled: (max - min) / median of the last window (0 before it filled)
};

// Drives one job's warm-ups: `while (w.more()) { run one; w.add(its proof wall ns); }`.
class Warmups {
 public:
  explicit Warmups(const WarmupPlan& plan) : plan_(plan) {}
  bool more() const;
  void add(uint64_t proof_wall_ns);
  WarmupOutcome outcome() const;

 private:
  WarmupPlan plan_;
  std::vector<uint64_t> walls_;
  bool settled_ = false;
};

// (max - min) / median of the last kSettleWindow values; nullopt while fewer were given.
std::optional<double> settle_spread(const std::vector<uint64_t>& proof_wall_ns);
// The rule in words, as recorded in results.
std::string warmup_criterion();
// The summary line's "warmup" object: {"mode": "auto"|"fixed", "done", and for auto
// "converged", "spread", "criterion", "cap"}.
nlohmann::json describe(const WarmupOutcome& outcome, const WarmupPlan& plan);

}  // namespace cuzk
