// `cuzk-bench report DIR`: markdown and self-contained HTML report of an A/B folder
// (DIR/a.jsonl and DIR/b.jsonl, as `cuzk-bench ab` leaves them). docs/reports.md.
// A matrix folder (DIR/manifest.json of kind "cuzk-matrix") gets the matrix report instead:
// report_matrix.hpp.
//
// Contents: the two builds (variant, commit, flags); per case, compare's summary paragraph, the
// accounting of each parent phase's change (a waterfall chart in the HTML) and the comparison
// table (compare's format_markdown); the per-phase counters beside the times; and three plots drawn by
// scripts/plot.py with Debian's /usr/bin/python3 + matplotlib: per-phase stacked bars A against
// B, per-phase sample distributions, counter ratios. The HTML embeds the PNGs (base64), so it is
// one file to send. When matplotlib (or the script) is missing, both reports are still written,
// with a note that says the plots were skipped and why; that is not an error. Where `ab --nsys`
// left a trace A/B (trace-diff.json), a section with its summary and a per-phase waterfall of
// kernels follows.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/analysis/compare.hpp"
#include "harness/analysis/report_page.hpp"

namespace cuzk::report {

struct Options {
  std::string dir;                      // the A/B folder
  std::string a, b;                     // results files ("" -> dir/a.jsonl, dir/b.jsonl)
  std::string out;                      // "" -> dir
  std::string python = "/usr/bin/python3";  // interpreter with matplotlib; "" or "none" skips plots
  std::string plot_script;              // "" -> find_plot_script()
  CompareOptions compare;
};

struct Result {
  std::string md_path, html_path;
  std::vector<std::string> plots;  // PNG paths written
  std::string plots_note;          // why plots were skipped ("" when drawn)
  Comparison comparison;           // empty for a matrix folder
  bool matrix = false;             // DIR was a matrix folder (report_matrix.hpp)
};

// Throws CompareError (bad or mismatched files, a malformed matrix folder) or std::runtime_error
// (unwritable output). Nothing is written when the input is bad.
Result write_report(const Options& o);


// scripts/plot.py: $CUZK_PLOT_SCRIPT, else searched upward from the executable's folder and the
// current folder. "" when not found.
std::string find_plot_script();
// One parent phase's accounting as an inline SVG waterfall chart (report_waterfall.cpp); `measure`
// names the time in its title.
std::string waterfall_svg(const Accounting& a, const std::string& measure = "wall time");

// The trace A/B beside an A/B's comparison (report_traces.cpp): DIR/trace-diff.json, which
// `ab --nsys` writes. Each drawn phase is an Accounting of its GPU busy time's change: one term per
// kernel or copy (its exposed time), then the overlap across streams.
struct TraceSection {
  std::string path;
  std::string headline;
  std::vector<std::pair<std::string, std::vector<std::string>>> sections;  // the summary's
  std::vector<Accounting> phases;  // the changed phases; with none, the ones that moved most
  bool none_changed = false;
};
// nullopt without DIR/trace-diff.json; throws std::runtime_error when it is not a trace A/B.
std::optional<TraceSection> read_trace_section(const std::string& dir);
std::string trace_section_markdown(const TraceSection& s);
std::string trace_section_html(const TraceSection& s);

}  // namespace cuzk::report
