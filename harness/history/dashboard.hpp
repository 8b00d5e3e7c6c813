// `cuzk-bench history dashboard -o DIR`: a static, self-contained HTML page of the history
// (docs/history.md, "Dashboard"): the newest change points first, then per series a trend chart
// of the per-commit medians with their CI band and the change points marked, each point linking
// to its commit and carrying the command that reproduces it. No server, no script from the
// network: it opens from the file.
#pragma once
#include <string>
#include <vector>

#include "harness/history/store.hpp"

namespace cuzk::history {

// A change point as the page shows it (change_points.hpp computes them).
struct ChangeMark {
  size_t index = 0;           // the series point where the new level starts
  std::string id;             // the change's stable id
  std::string status;         // "new", "acknowledged", "resolved"
  double ratio = 1, low = 1, high = 1;  // after / before, with its CI
  double p_value = 1;
  bool regression = false;    // the metric grew (slower, or more of a counter)
};

struct DashboardSeries {
  Series series;
  std::vector<ChangeMark> changes;
};

struct DashboardOptions {
  std::string title = "cuzk results history";
  // The link of a commit, with {sha} replaced (e.g. https://github.com/org/repo/commit/{sha}); ""
  // links each point to its row in the page's table.
  std::string commit_url;
  std::string generated_utc;  // shown in the header
};

// The page's HTML.
std::string dashboard_html(const std::vector<DashboardSeries>& all, const DashboardOptions& o);
// The command that reproduces a point: check out its commit, build its preset, run its command.
std::string reproduce_command(const Series& s, const CommitPoint& p);

}  // namespace cuzk::history
