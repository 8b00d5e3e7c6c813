#include "daemon/server/journal.hpp"

#include <fmt/core.h>
#include <sqlite3.h>

namespace cuzk::daemon {
namespace {

// A prepared statement that finalizes itself.
struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt(sqlite3* db, const char* sql, const std::string& path) {
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK)
      throw JournalError(fmt::format("journal {}: {}", path, sqlite3_errmsg(db)));
  }
  ~Stmt() { sqlite3_finalize(s); }
  void text(int i, const std::string& v) { sqlite3_bind_text(s, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT); }
  void integer(int i, int64_t v) { sqlite3_bind_int64(s, i, v); }
  std::string col_text(int i) const {
    const auto* p = sqlite3_column_text(s, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
};

}  // namespace

Journal::Journal(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw JournalError(fmt::format("cannot open the journal {}: {}", path, why));
  }
  sqlite3_busy_timeout(db_, 2000);
  try {
    // WAL with synchronous=FULL: each commit is fsync'ed before it returns.
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=FULL");
    exec("CREATE TABLE IF NOT EXISTS jobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, "
         "request_id TEXT NOT NULL, kind TEXT NOT NULL, priority INTEGER NOT NULL, input TEXT NOT NULL, "
         "state TEXT NOT NULL, reason TEXT NOT NULL, proof_path TEXT NOT NULL, record TEXT NOT NULL, "
         "restarts INTEGER NOT NULL, accepted_unix_ms INTEGER NOT NULL)");
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Journal::~Journal() { sqlite3_close(db_); }

void Journal::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string why = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw JournalError(fmt::format("journal {}: {}", path_, why));
  }
}

int64_t Journal::insert(JournalEntry& e) {
  Stmt st(db_,
          "INSERT INTO jobs (id, request_id, kind, priority, input, state, reason, proof_path, record, restarts, "
          "accepted_unix_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
          path_);
  st.text(1, e.id);
  st.text(2, e.request_id);
  st.text(3, e.kind);
  st.integer(4, e.priority);
  st.text(5, e.input);
  st.text(6, e.state);
  st.text(7, e.reason);
  st.text(8, e.proof_path);
  st.text(9, e.record);
  st.integer(10, e.restarts);
  st.integer(11, e.accepted_unix_ms);
  if (sqlite3_step(st.s) != SQLITE_DONE) throw JournalError(fmt::format("journal {}: {}", path_, sqlite3_errmsg(db_)));
  e.seq = sqlite3_last_insert_rowid(db_);
  return e.seq;
}

void Journal::update(const JournalEntry& e) {
  Stmt st(db_, "UPDATE jobs SET state=?1, reason=?2, proof_path=?3, record=?4, restarts=?5 WHERE id=?6", path_);
  st.text(1, e.state);
  st.text(2, e.reason);
  st.text(3, e.proof_path);
  st.text(4, e.record);
  st.integer(5, e.restarts);
  st.text(6, e.id);
  if (sqlite3_step(st.s) != SQLITE_DONE) throw JournalError(fmt::format("journal {}: {}", path_, sqlite3_errmsg(db_)));
}

std::vector<JournalEntry> Journal::load() const {
  Stmt st(db_,
          "SELECT seq, id, request_id, kind, priority, input, state, reason, proof_path, record, restarts, "
          "accepted_unix_ms FROM jobs ORDER BY seq",
          path_);
  std::vector<JournalEntry> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    JournalEntry e;
    e.seq = sqlite3_column_int64(st.s, 0);
    e.id = st.col_text(1);
    e.request_id = st.col_text(2);
    e.kind = st.col_text(3);
    e.priority = sqlite3_column_int(st.s, 4);
    e.input = st.col_text(5);
    e.state = st.col_text(6);
    e.reason = st.col_text(7);
    e.proof_path = st.col_text(8);
    e.record = st.col_text(9);
    e.restarts = sqlite3_column_int(st.s, 10);
    e.accepted_unix_ms = sqlite3_column_int64(st.s, 11);
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) throw JournalError(fmt::format("journal {}: {}", path_, sqlite3_errmsg(db_)));
  return out;
}

}  // namespace cuzk::daemon
