// The SQL connection the results history runs on: embedded SQLite (a file, the default) or a
// PostgreSQL server shared by a team's machines (docs/history.md, "Store"). The store writes
// one dialect, with `?` placeholders; the PostgreSQL connection numbers them ($1, $2, ...).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace cuzk::history {

class DbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bound parameter or a column value: NULL, an integer, a real or text.
using Value = std::variant<std::monostate, int64_t, double, std::string>;

// One row of a query, columns in SELECT order.
struct Row {
  std::vector<Value> cols;
  bool is_null(size_t i) const { return std::holds_alternative<std::monostate>(cols.at(i)); }
  int64_t integer(size_t i) const;
  double real(size_t i) const;  // an integer column reads as its value
  std::string text(size_t i) const;
};

class Db {
 public:
  virtual ~Db() = default;
  // Runs statements without results or parameters (DDL, BEGIN, ...); several may be separated by ';'.
  virtual void exec(const std::string& sql) = 0;
  // Runs one statement with parameters and returns every row.
  virtual std::vector<Row> query(const std::string& sql, const std::vector<Value>& params = {}) = 0;
  // The id of a row an INSERT ... RETURNING id made: run `sql` (which must end in RETURNING id).
  int64_t insert_id(const std::string& sql, const std::vector<Value>& params);
  // "sqlite" or "postgresql": where the dialects differ (the schema's id columns).
  virtual std::string dialect() const = 0;
  // What the user named: the SQLite file or the connection URL without its password.
  virtual std::string describe() const = 0;
};

// Transaction scope: rolls back unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  void commit();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  Db& db_;
  bool done_ = false;
};

// Opens the store: "postgresql://..." or "postgres://..." is a PostgreSQL connection URL
// (libpq), anything else a SQLite file (created with its folder when absent, WAL journal).
// Throws DbError naming the target when it cannot be opened.
std::unique_ptr<Db> open_db(const std::string& target);

// Whether this build can reach PostgreSQL (libpq was found at configure time).
bool postgresql_available();

}  // namespace cuzk::history
