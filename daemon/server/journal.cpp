#include "daemon/server/journal.hpp"

#include <fmt/core.h>

#include "harness/history/db.hpp"

namespace cuzk::daemon {
namespace {

constexpr const char* kColumns =
    "seq, id, request_id, kind, priority, input, state, reason, proof_path, record, restarts, accepted_unix_ms";

}  // namespace

Journal::Journal(const std::string& path) : path_(path) {
  try {
    db_ = history::open_db(path);
    // Each commit fsync'ed before it returns (the history's own setting is NORMAL).
    db_->exec("PRAGMA synchronous=FULL");
    db_->exec(
        "CREATE TABLE IF NOT EXISTS jobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, "
        "request_id TEXT NOT NULL, kind TEXT NOT NULL, priority INTEGER NOT NULL, input TEXT NOT NULL, "
        "state TEXT NOT NULL, reason TEXT NOT NULL, proof_path TEXT NOT NULL, record TEXT NOT NULL, "
        "restarts INTEGER NOT NULL, accepted_unix_ms INTEGER NOT NULL)");
  } catch (const history::DbError& e) {
    throw JournalError(fmt::format("journal {}: {}", path, e.what()));
  }
}

Journal::~Journal() = default;

int64_t Journal::insert(JournalEntry& e) {
  try {
    e.seq = db_->insert_id(
        "INSERT INTO jobs (id, request_id, kind, priority, input, state, reason, proof_path, record, restarts, "
        "accepted_unix_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq AS id",
        {e.id, e.request_id, e.kind, int64_t(e.priority), e.input, e.state, e.reason, e.proof_path, e.record,
         int64_t(e.restarts), e.accepted_unix_ms});
  } catch (const history::DbError& err) {
    throw JournalError(fmt::format("journal {}: {}", path_, err.what()));
  }
  return e.seq;
}

void Journal::update(const JournalEntry& e) {
  try {
    db_->query("UPDATE jobs SET state=?, reason=?, proof_path=?, record=?, restarts=? WHERE id=?",
               {e.state, e.reason, e.proof_path, e.record, int64_t(e.restarts), e.id});
  } catch (const history::DbError& err) {
    throw JournalError(fmt::format("journal {}: {}", path_, err.what()));
  }
}

std::vector<JournalEntry> Journal::load() const {
  std::vector<JournalEntry> out;
  try {
    for (const history::Row& r : db_->query(fmt::format("SELECT {} FROM jobs ORDER BY seq", kColumns))) {
      JournalEntry e;
      e.seq = r.integer(0);
      e.id = r.text(1);
      e.request_id = r.text(2);
      e.kind = r.text(3);
      e.priority = int(r.integer(4));
      e.input = r.text(5);
      e.state = r.text(6);
      e.reason = r.text(7);
      e.proof_path = r.text(8);
      e.record = r.text(9);
      e.restarts = int(r.integer(10));
      e.accepted_unix_ms = r.integer(11);
      out.push_back(std::move(e));
    }
  } catch (const history::DbError& err) {
    throw JournalError(fmt::format("journal {}: {}", path_, err.what()));
  }
  return out;
}

}  // namespace cuzk::daemon
