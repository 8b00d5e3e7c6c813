// `cuzk-bench report DIR` on a matrix folder (`cuzk-bench matrix` leaves DIR/manifest.json of kind
// "cuzk-matrix" and DIR/attribution.json): report.md and report.html, per case the summary, a
// forest plot of the flags' effects (factorial mode) or of the variants' ratios (variants mode)
// and a phase x variant heat map. docs/reports.md, "Matrix folders".
//
// Pieces: read_attribution() loads and checks attribution.json (every key the report uses, with
// its type), forest_rows() picks what the forest shows, forest_svg() draws it
// (report_forest.cpp), heat_colour() colours one heat-map cell, and write_matrix_report() puts
// them into the two files. write_report() (report.hpp) calls it when is_matrix_folder(dir).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace cuzk::report {

struct MatrixCounter {
  std::string name;
  std::optional<double> a, b;  // null when not read
  std::string note;            // e.g. "x37"
};

// One variant against the baseline in one phase, as `compare` reports it.
struct MatrixVariant {
  std::string name;
  std::optional<double> ratio, low, high;  // B/A; null for "only in A" / "only in B"
  std::string verdict;                     // faster, slower, unchanged, too noisy, only in A, only in B
  std::optional<double> delta_ns, delta_low_ns, delta_high_ns;  // "only in" rows
  std::vector<MatrixCounter> counters;
};

// One main effect (order 1) or two-flag interaction (order 2) of the factorial analysis.
struct MatrixEffect {
  std::string name;  // "pinned" or "pinned x smallvec"
  std::vector<std::string> flags;
  int order = 1;
  double ratio = 1, low = 1, high = 1;  // flag on / off, with its simultaneous CI
  double p = 1;
  bool significant = false;
  double share = 0;  // fraction of the phase's variance
  std::vector<MatrixCounter> counters;
};

struct MatrixFactorial {
  std::vector<MatrixEffect> effects;
  double share_higher_order = 0, share_blocks = 0, share_noise = 0;
  double mde_main_ratio = 1, mde_interaction_ratio = 1;  // smallest effects detectable at this noise (NaN: no such term)
  double df = 0, s_e = 0;
};

struct MatrixPhase {
  std::string phase, metric;
  std::optional<double> baseline_median_ns;  // null when the phase is not in the baseline
  std::vector<MatrixVariant> variants;       // every non-baseline variant
  std::optional<MatrixFactorial> factorial;  // factorial mode only
};

struct MatrixCase {
  std::string suite, case_name, params, summary;
  std::vector<MatrixPhase> phases;
};

struct Attribution {
  std::string mode;                // "factorial" or "variants"
  std::vector<std::string> flags;  // factorial only
  std::string baseline;
  std::vector<std::string> variants;  // all, the baseline among them
  int rounds = 0;
  double level = 0.95;
  bool injected = false;  // planted slowdowns (CUZK_INJECT_SLOWDOWN) were active
  // A matrix that did not complete: what its analysis covers ("partial.statement"), "" otherwise.
  std::string partial;
  // A resumed matrix (matrix --resume): the line that says so ("resumed.statement"), "" otherwise.
  std::string resumed;
  std::vector<MatrixCase> cases;
};

// DIR/manifest.json exists and its "kind" is "cuzk-matrix". Throws CompareError when the
// manifest exists but is not a JSON object.
bool is_matrix_folder(const std::string& dir);

// Loads attribution.json; throws CompareError naming the file and the key that is missing or
// has the wrong type (e.g. "cases[0].phases[2].variants[1].ratio").
Attribution read_attribution(const std::string& path);

// One row of the forest plot: an effect (factorial) or a variant (variants mode) in a phase.
struct ForestRow {
  std::string phase, effect;  // drawn as "phase: effect"
  double ratio = 1, low = 1, high = 1;
  bool significant = false;
  std::optional<double> share, p;  // factorial only
  std::vector<MatrixCounter> counters;
  std::string verdict;  // variants mode only
};

// The rows the forest plot of one case shows: for the case's root phase (the one without '/')
// and each phase with at least one significant effect (factorial) or a faster/slower/"only in"
// variant (variants mode), one row per effect (variant). "only in" variants have no ratio and
// get no row; the report lists them under the plot.
std::vector<ForestRow> forest_rows(const Attribution& att, const MatrixCase& c);

// The forest plot as inline SVG (report_forest.cpp): per row a <circle class="effect"> at the
// ratio and a <line class="ci"> over [low, high] on a log x axis centred on 1, whose vertical
// <line class="unity"> marks no change; ticks labelled as percent change.
std::string forest_svg(const std::vector<ForestRow>& rows, const std::string& title);

// A heat-map cell's background as "#rrggbb": red slower, blue faster, intensity by |ln ratio|
// capped at ±30%; white for unchanged, too noisy and anything else not significant; "only in B"
// pale red, "only in A" pale blue.
std::string heat_colour(const MatrixVariant& v);

// A ratio as percent change: 1.064 -> "+6.4%", 0.9 -> "-10.0%", 37 -> "+3600%".
std::string percent_change(double ratio);

struct MatrixPaths {
  std::string md_path, html_path;
};
// Reads dir/attribution.json and writes out/report.md and out/report.html. Throws CompareError for
// a missing or malformed attribution.json (before writing anything), std::runtime_error when the
// output cannot be written.
MatrixPaths write_matrix_report(const std::string& dir, const std::string& out);

}  // namespace cuzk::report
