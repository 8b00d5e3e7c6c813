// Synthetic nsys exports written with the SQLite C API, for the tests of the trace library
// (trace-diff, the gate's [kernels] table): exactly the tables and columns the reader uses, at
// the schema version it accepts. Include only where CUZK_HAVE_SQLITE is set.
#pragma once
#include <fmt/core.h>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/trace/nsys_export.hpp"

namespace cuzk::test::nsys {

namespace tr = cuzk::trace;

constexpr int64_t kPid = 4242, kTid = 4243;
constexpr int64_t kUs = 1000;  // ns

inline int64_t global_tid(int64_t tid) { return (kPid << 24) | tid; }

struct RangeSpec {
  std::string text;
  int64_t start, end;
  int64_t tid = kTid;
};

// One launch: the runtime call at `call` on `tid`, its GPU work from `start` for `dur`.
struct LaunchSpec {
  std::string name;  // kernel name as demangledName; "" for a copy
  int64_t call, start, dur;
  int64_t stream = 7;
  int64_t tid = kTid;
  int copy_kind = 0, src_kind = 0, dst_kind = 0;  // a copy when copy_kind != 0
};

struct TraceSpec {
  std::string version = "3.17.2";
  std::vector<RangeSpec> ranges;
  std::vector<LaunchSpec> launches;
};

inline void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string why = err ? err : "?";
    sqlite3_free(err);
    FAIL(why << " in " << sql);
  }
}

inline std::string quote(const std::string& s) { return "'" + s + "'"; }

inline void write_trace(const std::string& path, const TraceSpec& t) {
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db,
       "BEGIN;"
       "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
       "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
       "CREATE TABLE NVTX_EVENTS (start INT NOT NULL, end INT, eventType INT NOT NULL, text TEXT, textId INT, "
       "globalTid INT);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT NOT NULL, end INT NOT NULL, globalTid INT, "
       "correlationId INT, nameId INT);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, deviceId INT, streamId INT, "
       "correlationId INT, globalPid INT, demangledName INT, shortName INT, mangledName INT, gridX INT, gridY INT, "
       "gridZ INT, blockX INT, blockY INT, blockZ INT, registersPerThread INT, staticSharedMemory INT, "
       "dynamicSharedMemory INT);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT NOT NULL, end INT NOT NULL, deviceId INT, streamId INT, "
       "correlationId INT, globalPid INT, bytes INT, copyKind INT, srcKind INT, dstKind INT);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INT NOT NULL, end INT NOT NULL, deviceId INT, streamId INT, "
       "correlationId INT, globalPid INT, bytes INT);");
  exec(db, "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', " + quote(t.version) + ");");
  // Range texts through StringIds (textId), as nsys writes registered strings.
  int64_t sid = 1;
  for (const auto& r : t.ranges) {
    exec(db, fmt::format("INSERT INTO StringIds VALUES ({}, {});", sid, quote(r.text)));
    exec(db, fmt::format("INSERT INTO NVTX_EVENTS VALUES ({}, {}, {}, NULL, {}, {});", r.start, r.end,
                         tr::kNvtxPushPopRange, sid++, global_tid(r.tid)));
  }
  int64_t corr = 1;
  for (const auto& l : t.launches) {
    exec(db, fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, {}, {}, 0);", l.call, l.call + 5 * kUs,
                         global_tid(l.tid), corr));
    if (l.copy_kind) {
      exec(db, fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES ({}, {}, 0, {}, {}, {}, 1048576, {}, {}, {});",
                           l.start, l.start + l.dur, l.stream, corr, kPid << 24, l.copy_kind, l.src_kind, l.dst_kind));
    } else {
      exec(db, fmt::format("INSERT INTO StringIds VALUES ({}, {});", sid, quote(l.name)));
      exec(db, fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, 0, {}, {}, {}, {}, {}, NULL, "
                           "128, 1, 1, 256, 1, 1, 64, 0, 0);",
                           l.start, l.start + l.dur, l.stream, corr, kPid << 24, sid, sid));
      ++sid;
    }
    ++corr;
  }
  exec(db, "COMMIT;");
  sqlite3_close(db);
}

// A proof with msm_h (kernels "void sum_runs<N>(...)" and "void msm_sum<3, true>(...)") and ntt_h
// on one stream; `scale` multiplies one kernel's duration, `jitter` every duration.
inline TraceSpec proof_trace(std::mt19937_64& rng, double sum_scale, double jitter, int sum_launches = 3) {
  std::uniform_real_distribution<double> u(1 - jitter, 1 + jitter);
  TraceSpec t;
  t.ranges = {{"proof/prove", 0, 100000 * kUs}, {"proof/prove/msm_h", 1000 * kUs, 60000 * kUs},
              {"proof/prove/ntt_h", 61000 * kUs, 90000 * kUs}};
  int64_t at = 2000 * kUs;
  auto add = [&](const std::string& name, double dur_us, int64_t call) {
    const auto d = static_cast<int64_t>(dur_us * u(rng) * kUs);
    t.launches.push_back({name, call, at, d});
    at += d + 10 * kUs;
  };
  for (int i = 0; i < sum_launches; ++i) add("void sum_runs<1>(int*)", 1000 * sum_scale, 1100 * kUs + i * 10 * kUs);
  add("void msm_sum<3, true>(const int*, unsigned long)", 3000, 1200 * kUs);
  at = 62000 * kUs;
  add("void ntt<8>(int*)", 2000, 61500 * kUs);
  return t;
}

}  // namespace cuzk::test::nsys
