// Two sets of traces compared phase by phase and, inside each phase, kernel by kernel and copy
// by copy (docs/trace-diff.md#statistics): one observation per trace, the ratio of medians B/A
// with its bootstrap interval, the Mann-Whitney U test and the verdict words of `compare`.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/trace/model.hpp"

namespace cuzk::trace {

struct DiffOptions {
  double alpha = 0.05;      // significance level of the two-sided U test
  double threshold = 0.03;  // relative change below which a significant difference is "unchanged"
  std::string phase;        // "" -> every phase; else that phase and the phases under it
  int resamples = 2000;     // bootstrap resamples per row
};

// One quantity, one value per trace on each side.
struct Compared {
  std::vector<double> a, b;
  double med_a = 0, med_b = 0;
  double ratio = 1, ci_low = 1, ci_high = 1, p = 1;  // ratio of medians B/A; NaN where A's median is 0
  // compare's words ("faster", "slower", "unchanged", "too noisy"), "only in A" / "only in B", or
  // "n/a" where a side has fewer than 2 traces.
  std::string verdict;
  double change() const { return med_b - med_a; }
};

// Where a row's time sat in B (or in A when it is only there): its exposed share of its total.
// "exposed" from 95%, "hidden" to 5%, "partly hidden" between.
std::string exposure_word(double exposed, double total);

struct ItemDiff {
  std::string name, kind;   // kind: "kernel", "copy", "memset"
  Compared total;           // summed duration per trace
  Compared exposed;         // summed exposed time per trace
  Compared launch_median;   // median launch duration per trace
  double launches_a = 0, launches_b = 0;  // median launch count per trace
  std::string where;        // exposure_word on B's medians
  double share = 0;         // change of exposed time / change of the phase's busy time (0 where that is 0)
  std::string geometry;     // B's (A's where only in A); "varies" across launches or traces
  int64_t registers = -1;   // likewise; -1 where it varies
};

// The k-th launch of an item in each occurrence of the phase: the median over occurrences per trace.
struct LaunchDiff {
  std::string name;
  uint32_t k = 0;
  Compared duration;
};

struct PhaseDiff {
  std::string phase;
  Compared busy, exposed, kernel, copy, memset, idle, launches;
  double occurrences_a = 0, occurrences_b = 0;  // median per trace
  std::vector<ItemDiff> items;                  // by |change of exposed time|, largest first
  std::vector<LaunchDiff> launches_by_k;        // every (item, k) seen on either side
  bool changed() const { return busy.verdict == "slower" || busy.verdict == "faster"; }
};

struct Diff {
  std::vector<std::string> files_a, files_b;
  DiffOptions options;
  std::vector<PhaseDiff> phases;  // by phase path
  // Traces per side below which the U test cannot reach alpha (its smallest two-sided p with n
  // and n values is 2 / C(2n, n)).
  size_t traces_needed = 0;
  std::vector<std::string> notes;
};

// The smallest n such that the two-sided exact U test of n against n values can give p < alpha.
size_t traces_for_alpha(double alpha);
// Compares one quantity: the statistics where both sides have at least 2 values.
Compared compare_values(std::vector<double> a, std::vector<double> b, const DiffOptions& o);
// Throws TraceError when a side is empty or the phase filter matches no phase.
Diff diff_traces(const std::vector<TraceModel>& a, const std::vector<TraceModel>& b, const DiffOptions& o);

}  // namespace cuzk::trace
