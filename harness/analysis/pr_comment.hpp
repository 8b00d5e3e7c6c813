// The story of a gated merge for the people who decide on it: a pull-request comment body (and
// a CI job's summary) built from the gate's verdict, its comparison and the results history of
// the phases that changed. docs/ci-perf.md says what each part shows and why.
#pragma once
#include <string>
#include <vector>

#include "harness/analysis/gate.hpp"

namespace cuzk {

// A change point of the history of a phase the merge touched (the caller reads the store).
struct PrHistoryChange {
  std::string id, status, direction;  // direction: "regression" or "improvement"
  std::string case_name, phase, metric;
  std::string before, after;          // the commit range: last point before, first after
  double ratio = 1, low = 1, high = 1, p_value = 1;
};

struct PrCommentInput {
  std::string base, head;            // what was compared: revisions or labels
  std::string reproduce;             // the command that reproduces the whole run ("" -> the gate's own)
  bool history_read = false;         // a history was given (else its section says how to add one)
  std::string history_where;         // the store, for the text
  size_t history_series = 0;         // series of the changed phases in it
  std::vector<PrHistoryChange> history;
  std::vector<std::string> history_errors;  // a store that could not be read: said, never fatal
};

// The first line of every comment body: a workflow finds its own earlier comment by it and
// edits that one instead of adding another.
inline constexpr const char* kPrCommentMarker = "<!-- cuzk-perf-comment -->";

// The comment body (GitHub Markdown), at most kPrCommentLimit bytes: the verdict, each case's
// summary paragraph, the significant changes with their CIs and policies, where the time went,
// the counters that moved, the history's change points on the changed phases, the command that
// reproduces it, and the full comparison folded below while it fits.
std::string format_pr_comment(const GateResult& g, const PrCommentInput& in);
inline constexpr size_t kPrCommentLimit = 60000;  // GitHub refuses comment bodies over 65536 characters

// The phases a comment calls changed (their verdict is slower or faster, or an alarm names
// them), each once, in the comparison's order: whose history the caller reads.
struct ChangedPhase {
  std::string suite, case_name, phase, metric;
};
std::vector<ChangedPhase> changed_phases(const GateResult& g);

}  // namespace cuzk
