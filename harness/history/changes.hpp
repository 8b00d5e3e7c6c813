// The change points of the stored history (docs/history.md, "Change points"): every series that
// a filter selects is analysed by the detector (change_points.hpp), with the ids the store
// already knows, and the store records each change's status (new, acknowledged, resolved), so
// that an alert stays until someone resolves it and a recomputation never raises it twice.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "harness/history/change_points.hpp"
#include "harness/history/store.hpp"

namespace cuzk::history {

// The key that names a series in the store and in change ids: machine, suite, case, parameters,
// backend, preset, phase and metric.
std::string series_key(const Series& s);

struct StoredChange {
  ChangePoint change;
  std::string status;          // "new", "acknowledged", "resolved"
  std::string first_seen_utc;  // when an analysis first found it
};

struct SeriesChanges {
  Series series;
  std::vector<StoredChange> changes;     // in index order
  std::optional<PendingShift> pending;   // the newest segment's strongest shift that is not a change
};

// Analyses every series `f` selects; with `record`, stores changes found for the first time as
// "new" (a change keeps its status across analyses).
std::vector<SeriesChanges> analyse_history(Db& db, const SeriesFilter& f, const ChangePointOptions& o, bool record);

// Sets a stored change's status ("acknowledged" or "resolved"); throws DbError for an unknown id.
void set_change_status(Db& db, const std::string& id, const std::string& status, const std::string& note);

}  // namespace cuzk::history
