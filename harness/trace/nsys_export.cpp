// Reading an nsys SQLite export through the SQLite C API. Every check that can fail names the
// file and what to do, because a trace is often the product of a long capture on another machine.
#include "harness/trace/nsys_export.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#if CUZK_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace cuzk::trace {

#if CUZK_HAVE_SQLITE
bool sqlite_available() { return true; }

namespace {

class Db {
 public:
  explicit Db(const std::string& path) : path_(path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw TraceError(fmt::format("{}: cannot open: {}", path, why));
    }
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs `sql` and calls row(stmt) for each row.
  template <class F>
  void each(const std::string& sql, F&& row) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) fail(sql);
    struct Finalize {
      sqlite3_stmt* s;
      ~Finalize() { sqlite3_finalize(s); }
    } fin{st};
    for (;;) {
      const int rc = sqlite3_step(st);
      if (rc == SQLITE_DONE) return;
      if (rc != SQLITE_ROW) fail(sql);
      row(st);
    }
  }

  [[noreturn]] void fail(const std::string& sql) {
    const int code = sqlite3_errcode(db_);
    if (code == SQLITE_NOTADB)
      throw TraceError(fmt::format("{}: not an SQLite file (give the output of nsys export --type sqlite)", path_));
    if (code == SQLITE_CORRUPT)
      throw TraceError(fmt::format("{}: damaged SQLite file ({}); export the trace again", path_, sqlite3_errmsg(db_)));
    throw TraceError(fmt::format("{}: {} (in: {})", path_, sqlite3_errmsg(db_), sql.substr(0, 80)));
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

std::string text_at(sqlite3_stmt* st, int i) {
  const unsigned char* t = sqlite3_column_text(st, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), db_(path) {
    db_.each("SELECT name FROM sqlite_master WHERE type = 'table'",
             [&](sqlite3_stmt* st) { tables_.insert(text_at(st, 0)); });
  }

  bool has(const std::string& table) const { return tables_.count(table) != 0; }

  // Refuses a table without every column in `cols`; returns the columns it has.
  std::set<std::string> require(const std::string& table, const std::vector<std::string>& cols, const char* hint) {
    if (!has(table)) throw TraceError(fmt::format("{}: no table {} ({})", path_, table, hint));
    std::set<std::string> have;
    db_.each(fmt::format("PRAGMA table_info({})", table), [&](sqlite3_stmt* st) { have.insert(text_at(st, 1)); });
    for (const auto& c : cols)
      if (!have.count(c))
        throw TraceError(fmt::format("{}: table {} has no column {} (schema {}; known: {})", path_, table, c,
                                     version_, kSchemaKnown));
    return have;
  }


  void check_version() {
    const std::string meta = has("META_DATA_EXPORT") ? "META_DATA_EXPORT" : has("EXPORT_META_DATA") ? "EXPORT_META_DATA" : "";
    if (meta.empty())
      throw TraceError(fmt::format("{}: no META_DATA_EXPORT table, so no export schema version (known: {}); "
                                   "is it an nsys export --type sqlite?",
                                   path_, kSchemaKnown));
    require(meta, {"name", "value"}, "the export's version table");
    std::map<std::string, std::string> kv;
    db_.each(fmt::format("SELECT name, value FROM {} WHERE name LIKE 'EXPORT_SCHEMA_VERSION%'", meta),
             [&](sqlite3_stmt* st) { kv[text_at(st, 0)] = text_at(st, 1); });
    if (kv.count("EXPORT_SCHEMA_VERSION"))
      version_ = kv["EXPORT_SCHEMA_VERSION"];
    else if (kv.count("EXPORT_SCHEMA_VERSION_MAJOR"))
      version_ = fmt::format("{}.{}.{}", kv["EXPORT_SCHEMA_VERSION_MAJOR"], kv["EXPORT_SCHEMA_VERSION_MINOR"],
                             kv["EXPORT_SCHEMA_VERSION_MICRO"]);
    else
      throw TraceError(fmt::format("{}: {} holds no EXPORT_SCHEMA_VERSION (known: {})", path_, meta, kSchemaKnown));
    size_t used = 0;
    int major = -1;
    try {
      major = std::stoi(version_, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || major != kSchemaMajor)
      throw TraceError(fmt::format("{}: export schema version {} is not one this reader knows ({}); export with a "
                                   "Nsight Systems of that schema or extend harness/trace/nsys_export.cpp",
                                   path_, version_, kSchemaKnown));
  }

  Export read() {
    Export e;
    e.path = path_;
    check_version();
    e.schema_version = version_;
    require("StringIds", {"id", "value"}, "the export's strings");
    read_ranges(e);
    read_calls(e);
    read_kernels(e);
    read_copies(e);
    read_memsets(e);
    return e;
  }

 private:
  void read_ranges(Export& e) {
    const auto have = require("NVTX_EVENTS", {"start", "end", "text", "textId", "globalTid", "eventType"},
                              "capture with nsys profile --trace=cuda,nvtx");
    // Only the harness's own domain: libraries open ranges of their own (CUB's "CCCL" domain
    // around a sort inside msm_h), and an innermost-range rule would hand them msm_h's kernels.
    std::string domain_filter;
    if (have.count("domainId")) {
      std::vector<int64_t> ids;
      db_.each(fmt::format("SELECT n.domainId FROM NVTX_EVENTS n LEFT JOIN StringIds s ON n.textId = s.id "
                           "WHERE n.eventType = {} AND COALESCE(n.text, s.value) = '{}'",
                           kNvtxDomainCreate, kNvtxDomain),
               [&](sqlite3_stmt* st) { ids.push_back(sqlite3_column_int64(st, 0)); });
      for (size_t i = 0; i < ids.size(); ++i)
        domain_filter += fmt::format("{}{}", i == 0 ? " AND n.domainId IN (" : ", ", ids[i]) + (i + 1 == ids.size() ? ")" : "");
      e.nvtx_domain = ids.empty() ? "" : kNvtxDomain;
    }
    db_.each(fmt::format("SELECT n.start, n.end, n.globalTid, COALESCE(n.text, s.value) FROM NVTX_EVENTS n "
                         "LEFT JOIN StringIds s ON n.textId = s.id WHERE n.end IS NOT NULL AND n.eventType IN ({}, {}){}",
                         kNvtxPushPopRange, kNvtxStartEndRange, domain_filter),
             [&](sqlite3_stmt* st) {
               e.ranges.push_back({sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                   sqlite3_column_int64(st, 2), text_at(st, 3)});
             });
    if (e.ranges.empty())
      throw TraceError(fmt::format("{}: no NVTX ranges, so no phases (capture a cuzk-bench run with nsys profile "
                                   "--trace=cuda,nvtx, NVTX compiled in)",
                                   path_));
  }

  void read_calls(Export& e) {
    require("CUPTI_ACTIVITY_KIND_RUNTIME", {"start", "end", "globalTid", "correlationId"},
            "capture with nsys profile --trace=cuda,nvtx");
    db_.each("SELECT start, end, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME", [&](sqlite3_stmt* st) {
      e.calls.push_back({sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                         sqlite3_column_int64(st, 3)});
    });
  }

  void read_kernels(Export& e) {
    const auto have = require("CUPTI_ACTIVITY_KIND_KERNEL",
                              {"start", "end", "deviceId", "streamId", "correlationId", "demangledName", "shortName",
                               "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread",
                               "staticSharedMemory", "dynamicSharedMemory"},
                              "a trace of GPU work: capture with --trace=cuda and the CUDA backend");
    // The demangled name, else the mangled one (demangled here), else the short name.
    const std::string mangled = have.count("mangledName") ? "m.value" : "NULL";
    const std::string join_m = have.count("mangledName") ? "LEFT JOIN StringIds m ON k.mangledName = m.id" : "";
    db_.each(fmt::format("SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, "
                         "COALESCE(d.value, {}, s.value, ''), k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, "
                         "k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory, {} "
                         "FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds d ON k.demangledName = d.id "
                         "LEFT JOIN StringIds s ON k.shortName = s.id {}",
                         mangled, have.count("globalPid") ? "k.globalPid" : "-1", join_m),
             [&](sqlite3_stmt* st) {
               Activity a;
               a.kind = ActivityKind::kernel;
               common(st, a);
               a.name = text_at(st, 5);
               for (int i = 0; i < 3; ++i) {
                 a.grid[i] = sqlite3_column_int64(st, 6 + i);
                 a.block[i] = sqlite3_column_int64(st, 9 + i);
               }
               a.registers = sqlite3_column_int64(st, 12);
               a.static_smem = sqlite3_column_int64(st, 13);
               a.dynamic_smem = sqlite3_column_int64(st, 14);
               a.global_pid = sqlite3_column_int64(st, 15);
               e.activities.push_back(std::move(a));
             });
  }

  void read_copies(Export& e) {
    if (!has("CUPTI_ACTIVITY_KIND_MEMCPY")) return;  // a trace without copies has no such table
    const auto have = require(
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        {"start", "end", "deviceId", "streamId", "correlationId", "bytes", "copyKind", "srcKind", "dstKind"}, "the copies");
    db_.each(fmt::format("SELECT start, end, deviceId, streamId, correlationId, bytes, copyKind, srcKind, dstKind, {} "
                         "FROM CUPTI_ACTIVITY_KIND_MEMCPY",
                         have.count("globalPid") ? "globalPid" : "-1"),
             [&](sqlite3_stmt* st) {
               Activity a;
               a.kind = ActivityKind::memcpy;
               common(st, a);
               a.bytes = sqlite3_column_int64(st, 5);
               a.copy_kind = sqlite3_column_int(st, 6);
               a.src_kind = sqlite3_column_int(st, 7);
               a.dst_kind = sqlite3_column_int(st, 8);
               a.global_pid = sqlite3_column_int64(st, 9);
               e.activities.push_back(std::move(a));
             });
  }

  void read_memsets(Export& e) {
    if (!has("CUPTI_ACTIVITY_KIND_MEMSET")) return;
    const auto have = require("CUPTI_ACTIVITY_KIND_MEMSET",
                              {"start", "end", "deviceId", "streamId", "correlationId", "bytes"}, "the memsets");
    db_.each(fmt::format("SELECT start, end, deviceId, streamId, correlationId, bytes, {} FROM CUPTI_ACTIVITY_KIND_MEMSET",
                         have.count("globalPid") ? "globalPid" : "-1"),
             [&](sqlite3_stmt* st) {
               Activity a;
               a.kind = ActivityKind::memset;
               common(st, a);
               a.bytes = sqlite3_column_int64(st, 5);
               a.global_pid = sqlite3_column_int64(st, 6);
               e.activities.push_back(std::move(a));
             });
  }

  static void common(sqlite3_stmt* st, Activity& a) {
    a.start = sqlite3_column_int64(st, 0);
    a.end = sqlite3_column_int64(st, 1);
    a.device = sqlite3_column_int64(st, 2);
    a.stream = sqlite3_column_int64(st, 3);
    a.correlation = sqlite3_column_int64(st, 4);
  }

  std::string path_;
  Db db_;
  std::set<std::string> tables_;
  std::string version_ = "unknown";
};

}  // namespace

namespace {

// The file header of the SQLite format (https://www.sqlite.org/fileformat.html#the_database_header):
// a file cut short, by a copy or download that stopped, reads as "malformed" to SQLite; the
// header's page size and page count (valid when the "version-valid-for" number at offset 92
// equals the change counter at 24) tell it apart.
void check_header(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::array<unsigned char, 100> h{};
  f.read(reinterpret_cast<char*>(h.data()), h.size());
  if (f.gcount() == 0) throw TraceError(fmt::format("{}: empty file (give the output of nsys export --type sqlite)", path));
  static constexpr char kMagic[] = "SQLite format 3";  // with its NUL: 16 bytes
  if (f.gcount() < 100 || std::memcmp(h.data(), kMagic, sizeof kMagic) != 0)
    throw TraceError(fmt::format("{}: not an SQLite file (give the output of nsys export --type sqlite)", path));
  auto be = [&](size_t at, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | h[at + i];
    return v;
  };
  uint64_t page_size = be(16, 2);
  if (page_size == 1) page_size = 65536;
  const uint64_t pages = be(28, 4);
  if (std::memcmp(&h[24], &h[92], 4) != 0 || pages == 0) return;  // a header size SQLite would not trust either
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (!ec && size < pages * page_size)
    throw TraceError(fmt::format("{}: truncated: {} bytes of the {} its header gives; copy or export it again", path,
                                 size, pages * page_size));
}

}  // namespace

Export read_nsys_export(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw TraceError(fmt::format("{}: no such file", path));
  check_header(path);
  Reader r(path);
  return r.read();
}

#else
bool sqlite_available() { return false; }

Export read_nsys_export(const std::string& path) {
  throw TraceError(fmt::format("{}: this cuzk-bench was built without SQLite (libsqlite3-dev), which reading nsys "
                               "exports needs; install it and configure again",
                               path));
}
#endif

std::vector<std::string> sqlite_files_in(const std::string& dir, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw TraceError(fmt::format("{} {}: not a folder", flag, dir));
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".sqlite") out.push_back(e.path().string());
  if (ec) throw TraceError(fmt::format("{} {}: cannot list: {}", flag, dir, ec.message()));
  std::sort(out.begin(), out.end());
  if (out.empty()) throw TraceError(fmt::format("{} {}: no *.sqlite file in it (nsys export --type sqlite)", flag, dir));
  return out;
}

}  // namespace cuzk::trace
