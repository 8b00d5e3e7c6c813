// trace-diff's result in the output model (analysis/output/table.hpp): a summary of the kernels
// and copies that explain each changed phase, the phase table, and per phase its items and the
// k-th launches that differ. The three printers render these.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "harness/analysis/output/table.hpp"
#include "harness/trace/diff.hpp"

namespace cuzk::trace {

// The summary's two fixed sections, after the changed phases' own: phases whose idle time moved,
// and items that changed behind another stream.
constexpr const char* kIdleSection = "Idle time inside the phase changed";
constexpr const char* kHiddenSection = "Changed but hidden behind another stream";
// Contributors listed per changed phase in the summary.
constexpr size_t kSummaryItems = 5;

output::Summary diff_summary(const Diff& d);
output::Table phase_table(const Diff& d);
// phase_changed: whether the phase moved (a share of its change is shown only then).
output::Table item_table(const PhaseDiff& p, bool phase_changed);
// Rows per item in the k-th launch table: the largest changes; the count of the rest is a note.
constexpr size_t kLaunchRowsPerItem = 6;
// The k-th launches whose duration changed (up to kLaunchRowsPerItem per item) and, as notes,
// the runs of launches that only one side has.
output::Table launch_table(const PhaseDiff& p, double threshold);

std::string format_text(const Diff& d);
std::string format_markdown(const Diff& d);
nlohmann::json to_json(const Diff& d);

}  // namespace cuzk::trace
