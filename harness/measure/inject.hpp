// Calibration-only injected slowdowns (used by `cuzk-bench calibrate`, docs/calibration.md).
//
//   CUZK_INJECT_SLOWDOWN="proof/prove/msm_h=20%"            one phase, +20 %
//   CUZK_INJECT_SLOWDOWN="proof=3%,proof/synth=12.5"        several; the '%' is optional
//   CUZK_INJECT_SLOWDOWN="proof/prove/msm_h=2%:gpu"          the phase's GPU time, not its wall time
//   CUZK_INJECT_SLOWDOWN="proof/synth=2%:work"               planted work: real instructions, not a wait
//
// The variable is read and parsed once per process (on first use). When a phase scope whose
// full path equals a spec's path closes, the Recorder (harness/measure/recorder.cpp, Recorder::end)
// calls on_phase_end() before taking the scope's end time: it busy-waits (spinning on the
// steady clock, so it costs CPU like real work, unlike sleeping) until the scope has lasted
// (1 + pct/100) times what it had lasted when it closed. Only that phase gets longer by pct %;
// its ancestors get longer by the same absolute amount (the wait happens inside them), its
// siblings and children are unchanged.
//
// An entry marked ":gpu" slows the phase's GPU time instead: the GPU time it reports
// (Recorder::gpu_time), and its GPU kernel time where the activity collector measures one
// (apply_gpu_activity), are multiplied by (1 + pct/100) and nothing waits, so its wall time and its
// ancestors are unchanged. `calibrate` uses it for phases judged by GPU time (compare.hpp): a
// host-side wait would not lengthen GPU time, and would lengthen the ancestors (proof) instead.
//
// An entry marked ":work" plants work instead of waiting: at the phase's end it runs
// sim::planted_work (harness/measure/sim_counters.hpp), a dependency chain of integer
// multiply-adds of known instruction count (sim::kWorkInstructionsPerIteration per iteration).
// Under sim counters (`--counters sim`, callgrind) the loop is sized to pct % of the phase's own
// simulated instruction count so far (one extra callgrind dump); otherwise to pct % of its
// elapsed time, converted to iterations by a rate measured once per process. It costs CPU and
// instructions like a real regression, which a clock spin would not show in instruction counts.
//
// A malformed specification is an error: parse_spec() throws InjectError naming the entry at
// fault; check_env() reports it, and harness/measure/results.cpp calls it at start-up in every
// process that writes results (with the checks of $CUZK_ROUND_ID and of $CUZK_INJECT_FAULT,
// prover/engine/fault.hpp, docs/reliability.md): exit 2 before any work.
// Whenever an injection is active, a one-line notice goes to stderr once per process, and every
// results file the process writes carries "injected": describe() in its header (make_header,
// harness/measure/results.cpp); compare, gate and report refuse to compare such a file with a
// plain one unless allow_injected (--allow-injected), so an injected effect is never mistaken
// for a real one. calibrate allows it (it compares injected with plain by design) and records
// the spec of each side in its JSON summary.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::inject {

constexpr const char* kEnvVar = "CUZK_INJECT_SLOWDOWN";

class InjectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Slowdown {
  std::string phase;  // full slash path, e.g. "proof/prove/msm_h"
  double pct = 0;     // > 0 and <= 1000
  bool gpu = false;   // ":gpu": scale the reported GPU time instead of waiting
  bool work = false;  // ":work": run planted work (instructions) instead of waiting
};

// Parses "path=pct[%][:gpu|:work][,...]"; "" gives no entry. Throws InjectError on a malformed
// entry, a percentage outside (0, 1000], or a phase named twice.
std::vector<Slowdown> parse_spec(const std::string& spec);
// Formats entries back ("proof=3%,proof/synth=12.5%").
std::string format_spec(const std::vector<Slowdown>& s);

// The process's parsed $CUZK_INJECT_SLOWDOWN (parsed once). Throws InjectError when malformed.
const std::vector<Slowdown>& from_env();
// Validates $CUZK_INJECT_SLOWDOWN now (throws InjectError) and prints the stderr notice once
// when an injection is active.
void check_env();
// True when $CUZK_INJECT_SLOWDOWN names at least one valid entry.
bool active();
// {"spec": "...", "slowdowns": [{"phase":..., "pct":...}]} or null when none is active.
nlohmann::json describe();

// The instructions the closing phase has executed so far, for ":work" entries under sim
// counters (the Recorder reads them from callgrind); a value < 0 means unknown.
using InstructionsSoFar = int64_t (*)(const void* ctx);

// The hook (Recorder::end): `path` is the closing scope's full path, `t0_ns` its start on the
// steady clock (harness/measure/clock.hpp now_ns). Returns the ns busy-waited, or for a ":work"
// entry the planted instructions (0 when not injected). `so_far` (with `ctx`) is given when sim
// counters count instructions. When the variable is malformed it does nothing (check_env
// reports it before work starts).
uint64_t on_phase_end(const std::string& path, uint64_t t0_ns, InstructionsSoFar so_far = nullptr,
                      const void* ctx = nullptr);

// The planted-work iterations that take about `ns` on this machine (rate measured once).
uint64_t work_iterations_for_ns(uint64_t ns);

// The hook for reported GPU time (Recorder::gpu_time, and the kernel time of apply_gpu_activity):
// the time scaled by a ":gpu" entry for `path`, or unchanged.
uint64_t scale_gpu_time(const std::string& path, uint64_t gpu_ns);

// Busy-waits until now_ns() >= until_ns; returns a value so the loop is not optimized away.
uint64_t spin_until(uint64_t until_ns);

}  // namespace cuzk::inject
