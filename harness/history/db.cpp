#include "harness/history/db.hpp"

#include <fmt/core.h>

#include <cmath>

namespace cuzk::history {

std::unique_ptr<Db> open_sqlite(const std::string& path);        // sqlite_db.cpp
std::unique_ptr<Db> open_postgresql(const std::string& url);     // postgresql_db.cpp

int64_t Row::integer(size_t i) const {
  const Value& v = cols.at(i);
  if (auto p = std::get_if<int64_t>(&v)) return *p;
  if (auto p = std::get_if<double>(&v)) return static_cast<int64_t>(*p);
  if (auto p = std::get_if<std::string>(&v)) return std::stoll(*p);
  throw DbError(fmt::format("column {} is NULL where an integer was expected", i));
}

double Row::real(size_t i) const {
  const Value& v = cols.at(i);
  if (auto p = std::get_if<double>(&v)) return *p;
  if (auto p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  if (auto p = std::get_if<std::string>(&v)) return std::stod(*p);
  return NAN;
}

std::string Row::text(size_t i) const {
  const Value& v = cols.at(i);
  if (auto p = std::get_if<std::string>(&v)) return *p;
  if (auto p = std::get_if<int64_t>(&v)) return std::to_string(*p);
  if (auto p = std::get_if<double>(&v)) return fmt::format("{}", *p);
  return {};
}

int64_t Db::insert_id(const std::string& sql, const std::vector<Value>& params) {
  auto rows = query(sql, params);
  if (rows.size() != 1 || rows[0].cols.empty()) throw DbError("an INSERT ... RETURNING id returned no id");
  return rows[0].integer(0);
}

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN"); }

Transaction::~Transaction() {
  if (done_) return;
  try {
    db_.exec("ROLLBACK");
  } catch (...) {  // the connection is gone: the server rolls back by itself
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

std::unique_ptr<Db> open_db(const std::string& target) {
  if (target.rfind("postgresql://", 0) == 0 || target.rfind("postgres://", 0) == 0) return open_postgresql(target);
  return open_sqlite(target);
}

}  // namespace cuzk::history
