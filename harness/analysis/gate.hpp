// `cuzk-bench gate`: pass/fail a candidate against a baseline with per-phase slowdown
// thresholds from a TOML file (docs/gating.md). Fails closed: anything that prevents a sound
// decision is an error (exit 2), never a pass.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/analysis/compare.hpp"

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

struct GateThresholds {
  double max_slowdown = 0.05;                  // [default] max_slowdown
  double alpha = 0.05;                         // [default] alpha
  size_t min_samples = 5;                      // [default] min_samples: fewer per side is an error
  bool fail_on_noisy = false;                  // [default] fail_on_noisy: "too noisy" is an error
  std::map<std::string, double> phases;        // [phases] "path" = max slowdown
  std::vector<std::string> required_phases;    // [required] phases = [...]
  std::vector<std::string> required_cases;     // [required] cases = ["suite/case", ...]
  std::vector<std::string> ignore_phases;      // [ignore] phases = [...]: not gated (still compared)
  NewPhaseLimit new_phases;                    // [new_phases] max_ms, max_share: every new phase
  std::map<std::string, NewPhaseLimit> new_phase_overrides;  // [new_phases."path"]: one phase
  // [counters."phase"] "counter" = max ratio B/A of the counter's medians (2.0: must not double)
  std::map<std::string, std::map<std::string, double>> counter_limits;
};

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
};

struct GateResult {
  int exit_code = 2;                     // 0 pass, 1 regression, 2 error
  std::string result = "error";          // "pass", "regression", "error"
  std::vector<std::string> errors;       // reasons for exit 2
  std::vector<std::string> regressions;  // one line per regressed phase
  std::vector<std::string> warnings;
  std::string baseline, candidate, thresholds_path;
  std::optional<GateThresholds> thresholds;
  std::optional<Comparison> comparison;
};

// Never throws for bad input: every problem becomes an error in the result (exit_code 2).
GateResult run_gate(const std::string& baseline, const std::string& candidate,
                    const std::string& thresholds_path, const GateOptions& o);
nlohmann::json to_json(const GateResult& g);
std::string format_markdown(const GateResult& g);

}  // namespace cuzk
