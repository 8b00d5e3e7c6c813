// `cuzk-bench gate`: pass/fail a candidate against a baseline with per-phase slowdown
// thresholds from a TOML file (docs/gating.md). Fails closed: anything that prevents a sound
// decision is an error (exit 2), never a pass.
//
// The false alarms it controls are counted per merge, not per phase: the p-values of all gated
// phases of all cases form one multiple-testing procedure (GateThresholds::multiple), so a
// change that touched nothing fails with probability about alpha however many phases it has.
// An alarm can then be re-measured on fresh data (confirm_alarms) before it fails the merge.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/analysis/compare.hpp"
#include "harness/analysis/output/table.hpp"

namespace cuzk {

class GateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Limits on a phase only the candidate has (pin_abc when pinning lands): it fails the gate when
// its median cost is significant (the CI of the cost excludes 0) and above either limit.
struct NewPhaseLimit {
  std::optional<double> max_ms;     // its median, in milliseconds
  std::optional<double> max_share;  // its median over its parent's median in the candidate (fraction)
  bool any() const { return max_ms || max_share; }
};

// [throughput]: how far a load case's throughput may fall (docs/gating.md, "Load runs").
struct ThroughputLimit {
  double max_drop = 0;     // fraction of the baseline's throughput, in [0, 1)
  size_t min_rounds = 3;   // fewer rounds per side is an error (load --rounds)
  // The row's threshold: the growth of the time between completions that a drop of max_drop is.
  double threshold() const { return 1 / (1 - max_drop) - 1; }
};

struct GateThresholds {
  double max_slowdown = 0.05;                  // [default] max_slowdown
  double alpha = 0.05;                         // [default] alpha
  size_t min_samples = 5;                      // [default] min_samples: fewer per side is an error
  bool fail_on_noisy = false;                  // [default] fail_on_noisy: "too noisy" is an error
  // [default] multiple: how the gated phases' p-values are adjusted (docs/gating.md): "holm"
  // (one Holm family of every gated phase of every case), "hierarchy" (each case's root phases
  // first, then the children of a phase that changed, each family Holm-adjusted: needs fewer
  // samples, but a child is tested only when its parent changed), "none" (each phase at alpha
  // on its own, the rule before).
  std::string multiple = "holm";
  std::map<std::string, double> phases;        // [phases] "path" = max slowdown
  std::vector<std::string> required_phases;    // [required] phases = [...]
  std::vector<std::string> required_cases;     // [required] cases = ["suite/case", ...]
  std::vector<std::string> ignore_phases;      // [ignore] phases = [...]: not gated (still compared)
  // [default] policy and [policy] "path" = "fail" | "warn" | "ignore": what a regression of a
  // phase does. A key is a phase's path, or "path/*" for every phase below path; a phase takes
  // its own key, else that of its nearest "ancestor/*", else the default. [ignore] phases are
  // "ignore". "warn": reported, never fails the gate.
  std::string default_policy = "fail";
  std::map<std::string, std::string> policies;
  NewPhaseLimit new_phases;                    // [new_phases] max_ms, max_share: every new phase
  std::map<std::string, NewPhaseLimit> new_phase_overrides;  // [new_phases."path"]: one phase
  // [counters."phase"] "counter" = max ratio B/A of the counter's medians (2.0: must not double)
  std::map<std::string, std::map<std::string, double>> counter_limits;
  // [tails."phase"] "p99" = max growth of the phase's 99th percentile in load cases (the key as
  // quantile_metric writes it: "p99", "p99.9"). Other quantiles' rows are shown, not gated.
  std::map<std::string, std::map<std::string, double>> tails;
  std::optional<ThroughputLimit> throughput;  // [throughput]; without it throughput is not gated
  // [kernels."phase"] "kernel" = max ratio B/A of the normalised kernel's time in the phase, and
  // "idle" = of the phase's GPU idle time, judged on two sets of nsys traces
  // (harness/trace/gate_kernels.hpp); the gate then needs the traces.
  std::map<std::string, std::map<std::string, double>> kernel_limits;
};

// The policy of a phase: "fail", "warn" or "ignore" (see GateThresholds::policies).
std::string policy_of(const GateThresholds& t, const std::string& phase);

// Parses and validates the thresholds file; throws GateError("FILE: what is wrong").
GateThresholds load_thresholds(const std::string& path);
GateThresholds parse_thresholds(const std::string& text, const std::string& name);

struct GateOptions {
  bool allow_machine_mismatch = false;
  bool allow_variant_mismatch = false;   // different provenance.flags (variant) between the files
  bool allow_injected = false;           // one file written under $CUZK_INJECT_SLOWDOWN, the other not
  int bootstrap_resamples = 2000;
  uint64_t bootstrap_seed = 1;
  AnalysisChoices analysis;              // metric, process blocks, disturbed samples (compare.hpp)
  // run_gate only: a second, fresh pair of results files that must confirm every alarm of the
  // first pair before the gate fails (confirm_alarms). Both or neither.
  std::string confirm_baseline, confirm_candidate;
};

// One gated phase (a primary row that both files have, not ignored, with enough samples) and
// its place in the multiple-testing procedure.
struct GatedPhase {
  std::string suite, case_name, params, phase, metric;
  std::string kind = "phase";  // the row's kind: "phase", or a load case's "tail" or "throughput"
  double p_value = 1;       // the row's own test
  double adjusted_p = 1;    // after GateThresholds::multiple; compared with alpha
  std::string family;       // "all" (holm), "roots" or the parent's path (hierarchy), "self" (none)
  size_t family_size = 1;
  std::string verdict;      // compare_verdict with adjusted_p: "slower" fails the gate
};

// One reason the gate fails: a slower phase, a new phase above its limit or a counter above its
// ratio. Kept structured so that a re-measurement can look for the same row.
struct GateAlarm {
  // "phase" (a phase's, tail or throughput row: metric says which), "new_phase", "counter" or
  // "kernel" (a [kernels] limit: metric is the kernel's name or "idle"; no case)
  std::string kind;
  std::string suite, case_name, params, phase, metric, counter;
  double p_value = NAN, adjusted_p = NAN;  // "phase" alarms only
  std::string text;         // the regression line
  std::string policy = "fail";             // the phase's policy: "warn" alarms never fail the gate
  std::optional<bool> confirmed;           // set by confirm_alarms
  std::string confirmation;                // "alarm on ...; re-measured ...: confirmed" or "... not confirmed"
};

struct GateResult {
  int exit_code = 2;                     // 0 pass, 1 regression, 2 error
  std::string result = "error";          // "pass", "regression", "error"
  std::vector<std::string> errors;       // reasons for exit 2
  std::vector<std::string> regressions;  // one line per regressed phase whose policy is "fail"
  std::vector<std::string> warned;       // one line per regressed phase whose policy is "warn"
  std::vector<std::string> warnings;
  std::vector<GateAlarm> alarms;         // one per regression line, same order
  std::vector<GateAlarm> warn_alarms;    // one per warned line, same order (not re-measured)
  std::vector<GatedPhase> gated;         // every phase the procedure tested
  std::string multiple;                  // the procedure applied
  std::string family_summary;            // "Holm's procedure over one family of 13 gated phases ..."
  std::string cannot_fail;               // "" or the warning that some gated phases cannot fail at these sample counts
  std::string baseline, candidate, thresholds_path;
  std::string confirm_baseline, confirm_candidate;  // set when alarms were re-measured
  std::optional<GateThresholds> thresholds;
  std::optional<Comparison> comparison;
};

// Holm's step-down adjusted p-values, in the order given: with the p-values sorted ascending,
// the i-th (from 0) becomes min(1, max over j <= i of (m - j) p_(j)). A phase of the family is
// rejected at alpha exactly when its adjusted p is below alpha.
std::vector<double> holm_adjusted(const std::vector<double>& p);

// The comparison options a gate uses: alpha, thresholds and min_samples from the thresholds file,
// the quantiles and phases of [tails] beside compare's own (so that their rows exist), the rest
// from the options. Build the Comparison given to gate_comparison with these.
CompareOptions gate_compare_options(const GateThresholds& t, const GateOptions& o);

// The gate's decision on a comparison already made (files are not read; confirm_baseline and
// confirm_candidate are ignored). This is the entry point for counting false failures per
// merge: compare two A/A halves with gate_compare_options(t, o), call this, and a result with
// exit_code 1 is one false failure of one merge (exit_code 2: the halves could not be gated).
// g.thresholds_path is left empty; messages then say "the thresholds".
GateResult gate_comparison(const Comparison& c, const GateThresholds& t, const GateOptions& o);

// Re-judges every alarm of g (exit_code 1) on fresh measurements of the same cases: a phase
// alarm is confirmed when the fresh data alone gives the same verdict "slower" with its p-value
// Holm-adjusted over the phase alarms being confirmed; new-phase and counter alarms when their
// own rule fires again. Fresh data alone is the honest replication: the first data were chosen
// because they looked extreme, so pooling them into the test would carry that selection into
// it. The gate then fails (exit 1) only on confirmed alarms; unconfirmed ones become warnings,
// and a fresh pair that cannot be judged (missing row, too few samples, other variant) is an
// error (exit 2). Does nothing when g is not a regression.
void confirm_alarms(GateResult& g, const Comparison& fresh, const GateThresholds& t, const GateOptions& o);

// The case names (without suite) that have an alarm, sorted and unique: what `ab --case` takes
// to re-measure only those.
std::vector<std::string> alarmed_cases(const GateResult& g);

// Sets exit_code and result from the errors and regressions (errors win): after adding either.
void set_result(GateResult& g);

// Never throws for bad input: every problem becomes an error in the result (exit_code 2).
// With o.confirm_baseline/candidate set, a regression is re-judged on those files.
GateResult run_gate(const std::string& baseline, const std::string& candidate,
                    const std::string& thresholds_path, const GateOptions& o);
nlohmann::json to_json(const GateResult& g);
// The verdict, its inputs and its errors, regressions and warnings: what every printer shows.
output::Summary summary(const GateResult& g);
std::string format_markdown(const GateResult& g);

}  // namespace cuzk
