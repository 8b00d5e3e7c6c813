// The attribution of `cuzk-bench matrix` (docs/matrix.md): which flag, or which variant, changed
// which phase, by how much, with what confidence.
//
// Input: a matrix folder's variants, each with its merged results file and its measured round
// files (one process per variant per round, rounds in a fresh random order: harness/cli/cmd_matrix.cpp).
// Per case and phase:
// - every variant against the baseline, exactly as `compare` does (ratio of medians, bootstrap CI,
//   U test, verdict, counter deltas);
// - in factorial mode, the 2^k factorial analysis (harness/analysis/factorial.hpp) of the phase's
//   primary metric on log time, one observation per variant and round, rounds as blocks: each
//   flag's main effect and each two-flag interaction as a ratio with a CI simultaneous over the
//   phase's effects, the allocation of variation, and the smallest effects the design finds with
//   90% power. Beside each main effect, the phase's counters with the flag off and on (the mean of
//   the variants' medians). A phase that exists only where some flags are on (pin_abc exists only
//   in pinned builds) cannot be analysed on log time: it is reported as a cost of those flags;
// - a summary paragraph: the end-to-end change with every flag on (or of each variant), each
//   flag's effect on it and the phase where most of that effect lands, and the interactions.
#pragma once
#include <initializer_list>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/analysis/compare.hpp"
#include "harness/analysis/factorial.hpp"

namespace cuzk::matrix {

class MatrixError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct VariantRun {
  std::string name;                 // "baseline", "pinned", "fx-pinned+presize"
  std::vector<bool> flags;          // factorial mode: the flags on in this build, in Input::flags order
  std::string results;              // the merged results file (warm-up rounds marked)
  // Its measured round files; index = measured round; "" = a run left out (failed; in a matrix
  // that did not complete, also one that did not finish).
  std::vector<std::string> rounds;
  std::vector<std::string> warmups;  // the warm-up round files to merge (before the measured ones, marked)
};

// A matrix folder that did not complete: its manifest's status is "interrupted" (SIGINT or
// SIGTERM), "running" (stopped without a word: kill -9, the machine lost) or "failed" (a failed
// run under --on-failure stop). Its measured runs that finished are analysed; every other one is
// left out as missing and said as what it was (docs/matrix.md, "A matrix that did not complete").
struct Unfinished {
  std::string status;        // "interrupted", "running" or "failed"
  std::string how;           // "Interrupted by SIGTERM in round 4 of presize", "Stopped by a failed run (...)"
  nlohmann::json interrupted;  // the manifest's "interrupted" ({signal, round, variant}); null when absent
  std::string failure;       // the manifest's "failure" ("" when absent)
  struct Variant {
    std::string name;
    int finished = 0, of = 0;  // measured runs that finished, of the measured rounds
    // The measured runs left out, by round index (warm-up rounds counted first, as in the round
    // files' names): failed (null in the manifest), discarded (the run in flight when the signal
    // came), partial (a round file that does not end with the run's summary, or cannot be read),
    // never run (no round file).
    std::vector<int> failed, discarded, partial, not_run;
  };
  std::vector<Variant> variants;  // in the manifest's order
  int finished() const;
  int of() const;
};

struct Input {
  std::string mode = "variants";    // "variants" or "factorial"
  std::vector<std::string> flags;   // factorial mode: the flags, in bit order
  std::string baseline;             // the reference variant's name
  std::vector<VariantRun> variants;
  bool injected = false;            // planted slowdowns were active in some variant
  CompareOptions compare;
  // Set for a folder that did not complete: its variants' rounds are the runs that finished, and
  // their merged results files are still to be written from them (`results`: where).
  std::optional<Unfinished> unfinished;
};

// A variant against the baseline on one phase (the primary row of compare).
struct VariantCell {
  std::string name;
  std::string verdict;              // compare's: faster, slower, unchanged, too noisy, only in A, only in B
  double ratio = NAN, low = NAN, high = NAN;        // NaN when the phase is on one side only
  double delta = 0, delta_low = 0, delta_high = 0;  // ns, medians variant - baseline
  std::vector<CounterDelta> counters;               // the notable ones
  // On the case's end-to-end phase only, compare's CaseSummary::rounds_needed: the rounds a side
  // that would settle a "too noisy" verdict (-1: none would; 0: not too noisy).
  int rounds_needed = 0;
};

// A factorial effect on one phase, with what it moved beside it.
struct EffectRow {
  factorial::Effect effect;
  double delta_ns = 0;               // the baseline median x (ratio - 1): the size of the effect in time
  std::vector<CounterDelta> counters;  // main effects: flag off -> on (notable ones)
};

struct PhaseAttribution {
  std::string phase, metric;        // metric: "wall_ns", "gpu_ns" or "gpu_kernel_ns" (compare's primary metric)
  double baseline_median = NAN;     // NaN when the baseline lacks the phase
  std::vector<VariantCell> variants;  // every variant but the baseline, in Input order
  std::optional<factorial::Analysis> fx;
  std::vector<EffectRow> effects;   // fx's effects with their sizes and counters
  std::string fx_note;              // why there is no factorial analysis ("" when there is)
  // A phase that exists exactly where the flags `only_with` are on: its cost there.
  std::vector<std::string> only_with;
  double only_cost = NAN, only_low = NAN, only_high = NAN;  // ns: mean and CI of its observations
};

struct CaseAttribution {
  std::string suite, case_name, params;
  std::string summary;
  std::vector<PhaseAttribution> phases;
};

struct Attribution {
  std::string mode;
  std::vector<std::string> flags, variants;
  std::string baseline;
  size_t rounds = 0;
  double level = 0.95;
  bool injected = false;
  std::vector<CaseAttribution> cases;
  std::vector<std::string> warnings;
};

// Throws MatrixError (or CompareError from reading results) with a clear message.
Attribution attribute(const Input& in);

// The state of one run of a matrix that did not complete, from its manifest and its round file
// (docs/matrix.md, "A matrix that did not complete"): finished (its round file reads to its end
// with the run's own summary, the manifest neither marks it failed nor names it discarded), or
// left out as failed, discarded (in flight when a signal stopped a sitting, and not started again
// since: matrix --resume), partial (its round file is cut short, stopped or unreadable) or never
// run (no round file).
enum class RunState { kFinished, kFailed, kDiscarded, kPartial, kNotRun };
// "finished", "failed", "discarded", "partial", "never run": as outputs and the manifest name them.
const char* run_state_name(RunState s);
// Runs counted by state, in the order given, those with none left out: "1 discarded, 3 never run".
std::string state_counts(std::initializer_list<std::pair<RunState, size_t>> counts);
// Every run's state: [variant, in the manifest's order][round, warm-up rounds first, as the round
// files are named]. `manifest` as read_manifest returns it.
std::vector<std::vector<RunState>> run_states(const std::string& dir, const nlohmann::json& manifest);

// How a matrix's runs are made, as its manifest records it: what `matrix --resume` needs to run
// the rest of them exactly as the first ones ran. Checked like the rest of the manifest: a field
// missing or of the wrong type is one MatrixError naming it.
struct RunSpec {
  struct Variant {
    std::string name, binary;
    std::string inject;        // CUZK_INJECT_SLOWDOWN of its processes ("" none)
    std::map<std::string, std::string> cache_variables;  // what its binary's provenance must name
    std::vector<bool> flags;   // in the manifest's flag order
  };
  std::vector<Variant> variants;           // in the manifest's order
  std::vector<std::vector<size_t>> order;  // per round, warm-ups first: variant indices in run order
  int warmup = 0, rounds = 0, reps = 1;
  std::string suite, suite_file, backend, source_hash, on_failure;
  std::vector<std::string> cases;
  bool quick = false, stable = false;
  double run_timeout = 0;                   // seconds, 0: none
  // --counters and --cache-sim: absent from manifests written before they were recorded.
  std::optional<std::string> counters;
  std::optional<bool> cache_sim;
  bool one_binary = false;                  // --bin: every variant ran one binary (no preset to check)
  nlohmann::json machine;                   // the machine the matrix started on
};
RunSpec read_run_spec(const nlohmann::json& manifest, const std::string& name);

// One resumption of a matrix (`matrix --resume`), as its manifest's "resumed" records it.
struct Resumption {
  std::string started;        // UTC stamp, as the manifest's "started"
  int runs = 0;               // the runs it set out to run
  std::string other_machine;  // the identity of the machine it ran on when that was not the
                              // matrix's (--allow-machine-mismatch); "" otherwise
};
std::vector<Resumption> resumptions(const nlohmann::json& manifest);
// The line every analysis of a resumed matrix opens with, e.g. "Resumed once (2026-12-07T20:41Z,
// 4 runs): rounds ran in two sittings."; "" for a matrix never resumed.
std::string resumed_statement(const std::vector<Resumption>& r);
// attribution.json's "resumed": {statement, sittings, resumptions: [{started, runs,
// other_machine?}]}; null for a matrix never resumed.
nlohmann::json resumed_json(const std::vector<Resumption>& r);

// Reads a matrix folder's manifest.json into an Input (paths resolved against the folder). A
// folder that did not complete (unfinished_status) gets Input::unfinished, each variant the round
// files of its runs that finished (each read to its end), and throws MatrixError naming a variant
// none of whose measured runs finished.
Input load_input(const std::string& dir, const CompareOptions& compare = {});
// One run's results file in a matrix folder, relative to it: "rounds/<variant>-<round>.jsonl",
// rounds counted from 0, warm-up rounds first.
std::string round_file(const std::string& variant, int round);
// Whether a manifest's status is that of a matrix that did not complete: "interrupted", "running"
// or "failed" (absent or "complete": it completed).
bool unfinished_status(const nlohmann::json& manifest);
// A matrix folder's manifest.json, checked against its schema (docs/matrix.md, "The manifest"):
// every field that load_input and the failed-run report read. Throws MatrixError naming the
// file and the field, e.g. `manifest.json: "variants[1].name" must be a string (it is number)`.
nlohmann::json read_manifest(const std::string& dir);
// The same over text in memory (`name` in messages).
nlohmann::json parse_manifest(const std::string& text, const std::string& name);

nlohmann::json to_json(const Attribution& a);
struct FormatOptions {
  bool wide = false;  // every effect's CI in the grid
};
std::string format_table(const Attribution& a, const FormatOptions& f = {});
std::string format_markdown(const Attribution& a, const FormatOptions& f = {});
// What an analysis of a matrix that did not complete covers, the paragraph that opens each of its
// outputs: "Interrupted by SIGTERM in round 4 of presize: analysed the 18 of 20 measured runs that
// finished (baseline 4 of 4, ...). Left out: presize round 4 (discarded: ...); ...", then "\n\n".
std::string format_unfinished(const Unfinished& u);
// The same as attribution.json's "partial": status, statement, runs {finished, of}, and per
// variant its counts and the round indices left out, by why.
nlohmann::json unfinished_json(const Unfinished& u);

}  // namespace cuzk::matrix
