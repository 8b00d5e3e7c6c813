#include "harness/history/changes.hpp"

#include <fmt/core.h>

#include <cmath>
#include <map>

#include "harness/analysis/stats.hpp"
#include "harness/measure/process.hpp"

namespace cuzk::history {

std::string series_key(const Series& s) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", s.machine, s.suite, s.case_name, s.parameters, s.backend, s.preset,
                     s.phase, s.metric);
}

std::vector<SeriesChanges> analyse_history(Db& db, const SeriesFilter& f, const ChangePointOptions& o, bool record) {
  SeriesFilter all = f;
  all.since.clear();  // a change needs the points before --since too
  std::vector<SeriesChanges> out;
  for (auto& s : read_series(db, all)) {
    const std::string key = series_key(s);
    std::vector<SeriesPoint> pts;
    for (const auto& p : s.points) {
      SeriesPoint q;
      q.id = p.commit + (p.dirty ? "-dirty" : "");
      q.value = p.median;
      // The points' own noise, for a series too short to estimate it: the robust sd of the
      // samples relative to their median.
      if (p.values.size() >= 3 && p.median > 0) q.spread = 1.4826 * mad(p.values) / p.median;
      q.runs = static_cast<int>(p.samples);
      if (!(q.value > 0) || !std::isfinite(q.value)) continue;  // a zero counter cannot be on a log scale
      pts.push_back(std::move(q));
    }
    std::vector<KnownChange> known;
    std::map<std::string, std::pair<std::string, std::string>> status;  // id -> status, first seen
    for (const auto& r : db.query("SELECT id, commit_sha, direction, status, first_seen_utc FROM change_points "
                                  "WHERE series_key = ?",
                                  {key})) {
      known.push_back({.id = r.text(0), .point_id = r.text(1),
                       .direction = r.text(2) == "improvement" ? Direction::kImprovement : Direction::kRegression});
      status[r.text(0)] = {r.text(3), r.text(4)};
    }
    SeriesChanges sc;
    const auto result = detect_change_points(key, pts, o, known);
    sc.pending = result.pending;
    for (const auto& c : result.changes) {
      StoredChange st{.change = c, .status = "new", .first_seen_utc = utc_stamp()};
      if (auto it = status.find(c.id); it != status.end()) {
        st.status = it->second.first;
        st.first_seen_utc = it->second.second;
      } else if (record) {
        db.query("INSERT INTO change_points (id, series_key, commit_sha, direction, status, first_seen_utc) "
                 "VALUES (?, ?, ?, ?, 'new', ?)",
                 {c.id, key, c.after_id, std::string(direction_name(c.direction)), st.first_seen_utc});
      }
      sc.changes.push_back(std::move(st));
    }
    sc.series = std::move(s);
    out.push_back(std::move(sc));
  }
  return out;
}

void set_change_status(Db& db, const std::string& id, const std::string& status, const std::string& note) {
  if (db.query("SELECT id FROM change_points WHERE id = ?", {id}).empty())
    throw DbError(fmt::format("no change point {} in the history {} (history changes lists them)", id, db.describe()));
  db.query("UPDATE change_points SET status = ?, note = ? WHERE id = ?",
           {status, note.empty() ? Value{} : Value(note), id});
}

}  // namespace cuzk::history
