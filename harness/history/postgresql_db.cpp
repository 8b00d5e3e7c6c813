// The history on a PostgreSQL server (libpq), for a team whose machines share one store. The
// store's `?` placeholders become $1, $2, ...; values travel as text and come back typed by the
// column's type.
#include <fmt/core.h>

#include <regex>

#include "harness/history/db.hpp"

#if CUZK_HAVE_LIBPQ
#include <libpq-fe.h>
#endif

namespace cuzk::history {

namespace {
// The URL as shown in messages: user:password@ becomes user@.
std::string without_password(const std::string& url) {
  static const std::regex pw(R"(^(postgres(?:ql)?://[^:/@]*):[^@]*@)");
  return std::regex_replace(url, pw, "$1@");
}
}  // namespace

#if CUZK_HAVE_LIBPQ
namespace {

// `?` outside quotes -> $n.
std::string number_placeholders(const std::string& sql) {
  std::string out;
  int n = 0;
  bool quoted = false;
  for (char c : sql) {
    if (c == '\'') quoted = !quoted;
    if (c == '?' && !quoted) out += "$" + std::to_string(++n);
    else out += c;
  }
  return out;
}

class PostgresDb : public Db {
 public:
  explicit PostgresDb(std::string url) : url_(std::move(url)) {
    conn_ = PQconnectdb(url_.c_str());
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
      std::string why = conn_ ? PQerrorMessage(conn_) : "out of memory";
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      PQfinish(conn_);
      conn_ = nullptr;
      throw DbError(fmt::format("cannot connect to the history {}: {}", describe(), why));
    }
    exec("SET client_min_messages = warning");
  }
  ~PostgresDb() override { PQfinish(conn_); }

  void exec(const std::string& sql) override {
    PGresult* r = PQexec(conn_, sql.c_str());
    check(r, sql);
    PQclear(r);
  }

  std::vector<Row> query(const std::string& sql, const std::vector<Value>& params) override {
    std::vector<std::string> text(params.size());
    std::vector<const char*> ptrs(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      const Value& v = params[i];
      if (std::holds_alternative<std::monostate>(v)) continue;
      if (auto p = std::get_if<int64_t>(&v)) text[i] = std::to_string(*p);
      else if (auto p = std::get_if<double>(&v)) text[i] = fmt::format("{}", *p);  // shortest round trip
      else text[i] = std::get<std::string>(v);
      ptrs[i] = text[i].c_str();
    }
    const std::string pg = number_placeholders(sql);
    PGresult* r = PQexecParams(conn_, pg.c_str(), static_cast<int>(params.size()), nullptr, ptrs.data(), nullptr,
                               nullptr, 0);
    check(r, sql);
    std::vector<Row> rows;
    const int nr = PQntuples(r), nc = PQnfields(r);
    for (int i = 0; i < nr; ++i) {
      Row row;
      for (int c = 0; c < nc; ++c) {
        if (PQgetisnull(r, i, c)) {
          row.cols.emplace_back(std::monostate{});
          continue;
        }
        const char* s = PQgetvalue(r, i, c);
        switch (PQftype(r, c)) {
          case 20: case 21: case 23: row.cols.emplace_back(static_cast<int64_t>(std::stoll(s))); break;  // int8, int2, int4
          case 700: case 701: case 1700: row.cols.emplace_back(std::stod(s)); break;  // float4, float8, numeric
          default: row.cols.emplace_back(std::string(s, static_cast<size_t>(PQgetlength(r, i, c))));
        }
      }
      rows.push_back(std::move(row));
    }
    PQclear(r);
    return rows;
  }

  std::string dialect() const override { return "postgresql"; }
  std::string describe() const override { return without_password(url_); }

 private:
  void check(PGresult* r, const std::string& sql) {
    const auto st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return;
    std::string why = r ? PQresultErrorMessage(r) : PQerrorMessage(conn_);
    PQclear(r);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    throw DbError(fmt::format("{} (in: {})", why, sql.substr(0, 80)));
  }

  std::string url_;
  PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<Db> open_postgresql(const std::string& url) { return std::make_unique<PostgresDb>(url); }
bool postgresql_available() { return true; }
#else
std::unique_ptr<Db> open_postgresql(const std::string& url) {
  throw DbError(fmt::format("cannot use the history {}: this cuzk-bench was built without libpq (install libpq-dev "
                            "and reconfigure)",
                            without_password(url)));
}
bool postgresql_available() { return false; }
#endif

}  // namespace cuzk::history
