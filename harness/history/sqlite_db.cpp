// The history on embedded SQLite (Debian's libsqlite3): one file, WAL journal so that readers
// (show, dashboard) never wait for an ingest, foreign keys on.
#include <fmt/core.h>

#include <filesystem>

#include "harness/history/db.hpp"

#if CUZK_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace cuzk::history {
#if CUZK_HAVE_SQLITE
namespace {

class SqliteDb : public Db {
 public:
  explicit SqliteDb(std::string path) : path_(std::move(path)) {
    std::error_code ec;
    const auto parent = std::filesystem::path(path_).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
        SQLITE_OK) {
      const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw DbError(fmt::format("cannot open the history {}: {}", path_, why));
    }
    // Another writer (a second ingest) waits up to 30 s for the lock instead of failing at once.
    sqlite3_busy_timeout(db_, 30000);
    try {
      exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL");
      // A file that is not a database fails here, not later in the middle of an ingest.
      (void)query("SELECT count(*) FROM sqlite_master", {});
    } catch (const DbError& e) {
      sqlite3_close(db_);
      db_ = nullptr;
      throw DbError(fmt::format("cannot open the history {}: {}", path_, e.what()));
    }
  }
  ~SqliteDb() override { sqlite3_close(db_); }

  void exec(const std::string& sql) override {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string why = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw DbError(why);
    }
  }

  std::vector<Row> query(const std::string& sql, const std::vector<Value>& params) override {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &st, nullptr) != SQLITE_OK)
      throw DbError(fmt::format("{} (in: {})", sqlite3_errmsg(db_), sql.substr(0, 80)));
    struct Finalize {
      sqlite3_stmt* s;
      ~Finalize() { sqlite3_finalize(s); }
    } fin{st};
    for (size_t i = 0; i < params.size(); ++i) {
      const int k = static_cast<int>(i + 1);
      const Value& v = params[i];
      int rc = SQLITE_OK;
      if (std::holds_alternative<std::monostate>(v)) rc = sqlite3_bind_null(st, k);
      else if (auto p = std::get_if<int64_t>(&v)) rc = sqlite3_bind_int64(st, k, *p);
      else if (auto p = std::get_if<double>(&v)) rc = sqlite3_bind_double(st, k, *p);
      else {
        const auto& s = std::get<std::string>(v);
        rc = sqlite3_bind_text(st, k, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      }
      if (rc != SQLITE_OK) throw DbError(sqlite3_errmsg(db_));
    }
    std::vector<Row> rows;
    for (;;) {
      const int rc = sqlite3_step(st);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) throw DbError(fmt::format("{} (in: {})", sqlite3_errmsg(db_), sql.substr(0, 80)));
      Row r;
      const int n = sqlite3_column_count(st);
      for (int c = 0; c < n; ++c) {
        switch (sqlite3_column_type(st, c)) {
          case SQLITE_INTEGER: r.cols.emplace_back(static_cast<int64_t>(sqlite3_column_int64(st, c))); break;
          case SQLITE_FLOAT: r.cols.emplace_back(sqlite3_column_double(st, c)); break;
          case SQLITE_NULL: r.cols.emplace_back(std::monostate{}); break;
          default:
            r.cols.emplace_back(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c)),
                                            static_cast<size_t>(sqlite3_column_bytes(st, c))));
        }
      }
      rows.push_back(std::move(r));
    }
    return rows;
  }

  std::string dialect() const override { return "sqlite"; }
  std::string describe() const override { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace

std::unique_ptr<Db> open_sqlite(const std::string& path) { return std::make_unique<SqliteDb>(path); }
#else
std::unique_ptr<Db> open_sqlite(const std::string& path) {
  throw DbError(fmt::format("cannot use the history {}: this cuzk-bench was built without libsqlite3 (install "
                            "libsqlite3-dev and reconfigure)",
                            path));
}
#endif

}  // namespace cuzk::history
