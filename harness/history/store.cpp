#include "harness/history/store.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/analysis/stats.hpp"
#include "harness/measure/machine.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/results.hpp"
#include "prover/gadgets/sha256_native.hpp"
#include "prover/interop/input_file.hpp"
#include "prover/interop/input_limits.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuzk::history {
namespace {

std::string hex(const gadgets::Sha256Digest& d, size_t bytes = 32) {
  std::string s;
  for (size_t i = 0; i < bytes; ++i) s += fmt::format("{:02x}", d[i]);
  return s;
}

std::string sha256_hex(const std::string& text, size_t bytes = 32) {
  return hex(gadgets::sha256_native(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())), bytes);
}

// Version 1: the samples and what they were measured on. The id column differs by dialect.
std::string schema_v1(const std::string& dialect) {
  const std::string id = dialect == "postgresql" ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY";
  return fmt::format(R"(
CREATE TABLE files (id {0}, content_hash TEXT NOT NULL UNIQUE, path TEXT NOT NULL, kind TEXT NOT NULL,
  samples BIGINT NOT NULL, ingested_utc TEXT NOT NULL);
CREATE TABLE machines (fingerprint TEXT PRIMARY KEY, label TEXT NOT NULL, hostname TEXT, machine_json TEXT NOT NULL);
CREATE TABLE runs (id {0}, file_id BIGINT NOT NULL REFERENCES files(id), commit_sha TEXT NOT NULL,
  commit_date TEXT, branch TEXT, git_dirty INTEGER NOT NULL, source_hash TEXT NOT NULL, preset TEXT NOT NULL,
  flags TEXT NOT NULL, machine TEXT NOT NULL REFERENCES machines(fingerprint), suite TEXT NOT NULL,
  started_utc TEXT, command_line TEXT NOT NULL);
CREATE TABLE samples (id {0}, run_id BIGINT NOT NULL REFERENCES runs(id), case_name TEXT NOT NULL,
  parameters TEXT NOT NULL, backend TEXT NOT NULL, repetition BIGINT NOT NULL, warmup INTEGER NOT NULL,
  process_id TEXT, round_id BIGINT);
CREATE TABLE measurements (sample_id BIGINT NOT NULL REFERENCES samples(id), phase TEXT NOT NULL,
  metric TEXT NOT NULL, value DOUBLE PRECISION NOT NULL);
CREATE INDEX runs_by_machine ON runs(machine, suite);
CREATE INDEX samples_by_run ON samples(run_id);
CREATE INDEX measurements_by_sample ON measurements(sample_id, phase, metric);
)",
                     id);
}

// Version 2: the change points' statuses (new, acknowledged, resolved), kept across
// recomputations by their stable ids.
std::string schema_v2(const std::string&) {
  return R"(
CREATE TABLE change_points (id TEXT PRIMARY KEY, series_key TEXT NOT NULL, commit_sha TEXT NOT NULL,
  direction TEXT NOT NULL, status TEXT NOT NULL, first_seen_utc TEXT NOT NULL, note TEXT);
)";
}

// Version 3: commits that could not be measured (a failed build or run), one per machine, suite
// and case.
std::string schema_v3(const std::string&) {
  return R"(
CREATE TABLE commit_failures (commit_sha TEXT NOT NULL, machine TEXT NOT NULL, suite TEXT NOT NULL,
  case_name TEXT NOT NULL, stage TEXT NOT NULL, message TEXT NOT NULL, recorded_utc TEXT NOT NULL,
  PRIMARY KEY (commit_sha, machine, suite, case_name));
)";
}

// Version 4: a commit's place in its history, `git rev-list --count SHA` (its ancestors and
// itself): a child always counts more than its parents, so it orders commits that share a
// committer date (a rebase, a scripted series) where dates cannot.
std::string schema_v4(const std::string&) { return "ALTER TABLE runs ADD COLUMN commit_seq BIGINT;\n"; }

const std::vector<std::string (*)(const std::string&)> kMigrations = {schema_v1, schema_v2, schema_v3, schema_v4};

std::string now_utc() { return utc_stamp(); }

// The whole file, for its hash and its validation before any write; a FIFO or a device is
// refused as the results reader refuses it (prover/interop/input_file.hpp).
std::string read_whole(const std::string& path) {
  InputFile in(path, throw_as<ResultsError>);
  return in.read_text();
}

std::optional<std::string> commit_date(const std::string& repo, const std::string& sha) {
  if (repo.empty() || sha.empty() || sha == "unknown") return std::nullopt;
  auto out = run_capture(fmt::format("TZ=UTC git -C {} show -s --date=format-local:%Y%m%dT%H%M%SZ --format=%cd {} 2>/dev/null", shell_quote(repo), shell_quote(sha)),
                         true);
  std::string d = out.out;
  while (!d.empty() && (d.back() == '\n' || d.back() == '\r')) d.pop_back();
  if (out.code != 0 || d.empty()) return std::nullopt;
  return d;
}

std::optional<int64_t> commit_seq(const std::string& repo, const std::string& sha) {
  if (repo.empty() || sha.empty() || sha == "unknown") return std::nullopt;
  auto out = run_capture(fmt::format("git -C {} rev-list --count {} -- 2>/dev/null", shell_quote(repo), shell_quote(sha)), true);
  if (out.code != 0) return std::nullopt;
  try {
    return std::stoll(out.out);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Runs stored before their commit's place was known (an older store, or a checkout that did not
// know the commit then) get it now, where `repo` knows them.
void fill_commit_seq(Db& db, const std::string& repo) {
  if (repo.empty()) return;
  for (const auto& row : db.query("SELECT DISTINCT commit_sha FROM runs WHERE commit_seq IS NULL")) {
    const std::string sha = row.text(0);
    // Only what can be a commit's name: a test's "commit07" or a results file of a build
    // without git would cost a git call at every ingest.
    if (sha.size() != 40 || sha.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
    const auto seq = commit_seq(repo, sha);
    if (!seq) continue;
    const auto date = commit_date(repo, row.text(0));
    Transaction tx(db);
    db.query("UPDATE runs SET commit_seq = ? WHERE commit_sha = ? AND commit_seq IS NULL", {*seq, row.text(0)});
    if (date) db.query("UPDATE runs SET commit_date = ? WHERE commit_sha = ? AND commit_date IS NULL", {*date, row.text(0)});
    tx.commit();
  }
}

// Whether `path`'s first line is a cuzk.results header (other *.jsonl files, such as
// bisect.jsonl, are not measurements).
bool is_results_file(const std::string& path) {
  std::string line;
  try {
    InputFile in(path);
    if (in.next_line(line, kMaxResultsLineBytes) != InputFile::Line::kLine) return false;
  } catch (const InputFileError&) {  // a link in the folder to a FIFO or a /proc file
    return false;
  }
  if (limits::json_nesting_depth(line) > limits::kMaxJsonDepth) return false;  // the parser would recurse that deep
  const auto j = json::parse(line, nullptr, false);
  return j.is_object() && j.value("schema", "") == "cuzk.results" && j.value("type", "") == "header";
}

std::string folder_kind(const fs::path& dir) {
  if (fs::exists(dir / "ab.json")) return "ab";
  if (fs::exists(dir / "manifest.json")) return "matrix";
  if (fs::exists(dir / "bisect.jsonl")) return "bisect";
  if (fs::exists(dir / "calibration.json")) return "calibration";
  return "folder";
}

// The results files below a folder, sorted. Round files are skipped where the folder's merged
// files hold the same samples (ab, matrix, bisect probes: rounds/), and so are worktrees.
std::vector<std::string> results_below(const fs::path& dir) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it) {
    const auto name = it->path().filename().string();
    if (it->is_directory() && (name == "rounds" || name == "worktrees" || name == "build")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".jsonl" && is_results_file(it->path().string()))
      out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A header field as text: a string as it is, another value as its JSON, absent or null as "".
std::string text_of(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return {};
  return obj[key].is_string() ? obj[key].get<std::string>() : obj[key].dump();
}

// git_dirty is a boolean, or "unknown" where the build could not tell: only true is dirty.
bool dirty_of(const json& prov) {
  return prov.is_object() && prov.contains("git_dirty") &&
         (prov["git_dirty"] == true || prov["git_dirty"] == "true");
}

// A value of a phase record that is a measurement: a finite number.
std::optional<double> number(const json& v) {
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  return std::isfinite(d) ? std::optional(d) : std::nullopt;
}

IngestedFile ingest_file(Db& db, const std::string& path, const std::string& kind, const IngestOptions& o) {
  IngestedFile r;
  r.path = path;
  r.kind = kind;
  const std::string text = read_whole(path);
  const ResultsFile rf = parse_results(text, path);  // validates the whole file before any write
  const json& h = rf.header.value;
  if (h.contains("injected") && !h["injected"].is_null()) {
    r.why = "written under CUZK_INJECT_SLOWDOWN (planted slowdowns are not history)";
    return r;
  }
  if (h.contains("fault_injection")) {
    r.why = "written under CUZK_INJECT_FAULT (a test's fault injection)";
    return r;
  }
  if (rf.samples.empty()) {
    r.why = "no samples";
    return r;
  }
  const std::string hash = sha256_hex(text);
  Transaction tx(db);
  if (!db.query("SELECT id FROM files WHERE content_hash = ?", {hash}).empty()) {
    r.why = "already in the history (same content)";
    return r;
  }
  const json& prov = h["provenance"];
  const std::string machine_text = h["machine"].dump();
  const std::string fp = machine_fingerprint(machine_text);
  if (db.query("SELECT fingerprint FROM machines WHERE fingerprint = ?", {fp}).empty())
    db.query("INSERT INTO machines (fingerprint, label, hostname, machine_json) VALUES (?, ?, ?, ?)",
             {fp, machine_identity(h["machine"]), text_of(h["machine"], "hostname"), machine_text});
  const int64_t file_id = db.insert_id(
      "INSERT INTO files (content_hash, path, kind, samples, ingested_utc) VALUES (?, ?, ?, ?, ?) RETURNING id",
      {hash, fs::absolute(path).lexically_normal().string(), kind, static_cast<int64_t>(rf.samples.size()), now_utc()});
  std::string sha = text_of(prov, "git_commit");
  if (sha.empty()) sha = "unknown";
  const auto date = commit_date(o.repo, sha);
  const auto seq = commit_seq(o.repo, sha);
  const json& cl = h["command_line"];
  std::string command;
  if (cl.is_array())
    for (const auto& a : cl)
      if (a.is_string()) command += (command.empty() ? "" : " ") + shell_quote(a.get<std::string>());
  const int64_t run_id = db.insert_id(
      "INSERT INTO runs (file_id, commit_sha, commit_date, commit_seq, branch, git_dirty, source_hash, preset, flags, "
      "machine, suite, started_utc, command_line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      {file_id, sha, date ? Value(*date) : Value{}, seq ? Value(*seq) : Value{}, o.branch.empty() ? Value{} : Value(o.branch),
       static_cast<int64_t>(dirty_of(prov) ? 1 : 0), text_of(prov, "source_hash"), text_of(prov, "preset"),
       text_of(prov, "flags_string"), fp, text_of(h, "suite"),
       h.contains("started_utc") ? Value(text_of(h, "started_utc")) : Value{}, command});
  for (const auto& line : rf.samples) {
    const json& s = line.value;
    const json params = s.value("parameters", json::object());
    const std::string backend = params.is_object() && params.contains("backend") && params["backend"].is_string()
                                    ? params["backend"].get<std::string>()
                                    : std::string();
    const int64_t sample_id = db.insert_id(
        "INSERT INTO samples (run_id, case_name, parameters, backend, repetition, warmup, process_id, round_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        {run_id, text_of(s, "case"), params.dump(), backend,
         s.contains("repetition") && s["repetition"].is_number_integer() ? s["repetition"].get<int64_t>() : int64_t(0),
         static_cast<int64_t>(s.contains("warmup") && s["warmup"] == true ? 1 : 0),
         s.contains("process_id") ? Value(text_of(s, "process_id")) : Value{},
         s.contains("round_id") && s["round_id"].is_number_integer() ? Value(s["round_id"].get<int64_t>()) : Value{}});
    ++r.samples;
    // All of a sample's measurements in one statement: an ingest costs one round trip per sample.
    std::string sql = "INSERT INTO measurements (sample_id, phase, metric, value) VALUES ";
    std::vector<Value> vals;
    auto add = [&](const std::string& phase, const std::string& metric, double v) {
      sql += vals.empty() ? "(?, ?, ?, ?)" : ", (?, ?, ?, ?)";
      vals.insert(vals.end(), {sample_id, phase, metric, v});
    };
    for (const auto& [phase, rec] : s["phases"].items()) {
      // The GPU activity times (--gpu-activity) beside the event time: compare judges a GPU phase
      // by gpu_kernel_ns where collected, so the long view keeps it too.
      for (const char* m : {"wall_ns", "gpu_ns"})
        if (auto v = number(rec.value(m, json()))) add(phase, m, *v);
      for (const char* m : kGpuActivityFields)
        if (auto v = number(rec.value(m, json()))) add(phase, m, *v);
      if (rec.contains("counters") && rec["counters"].is_object())
        for (const auto& [name, v] : rec["counters"].items())
          if (auto d = number(v)) add(phase, name, *d);
    }
    if (!vals.empty()) db.query(sql, vals);
    r.measurements += vals.size() / 4;
  }
  tx.commit();
  r.added = true;
  return r;
}

}  // namespace

int schema_version(Db& db) {
  db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  auto rows = db.query("SELECT max(version) FROM schema_version");
  return rows.empty() || rows[0].is_null(0) ? 0 : static_cast<int>(rows[0].integer(0));
}

void migrate(Db& db, int target) {
  int v = schema_version(db);
  if (v > kSchemaVersion)
    throw DbError(fmt::format("the history {} has schema version {}, newer than this cuzk-bench's {}: use a newer "
                              "cuzk-bench",
                              db.describe(), v, kSchemaVersion));
  for (; v < std::min(target, kSchemaVersion); ++v) {
    Transaction tx(db);
    // Another process may have migrated between the read and the lock: read again inside.
    if (schema_version(db) > v) continue;
    db.exec(kMigrations[static_cast<size_t>(v)](db.dialect()));
    db.query("INSERT INTO schema_version (version) VALUES (?)", {static_cast<int64_t>(v + 1)});
    tx.commit();
  }
}

std::string machine_fingerprint(const std::string& machine_json_text) {
  const json m = json::parse(machine_json_text, nullptr, false);
  std::string key = machine_identity(m);
  if (m.is_object() && m.contains("gpus") && m["gpus"].is_array())
    for (const auto& g : m["gpus"])
      if (g.is_object())
        key += fmt::format("|{}/{}/{}", g.value("driver", ""), g.value("sm_clock_max", ""), g.value("mem_clock", ""));
  return sha256_hex(key, 6);
}

std::vector<IngestedFile> ingest(Db& db, const std::vector<std::string>& paths, const IngestOptions& o) {
  migrate(db);
  fill_commit_seq(db, o.repo);
  std::vector<IngestedFile> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      const std::string kind = folder_kind(p);
      const auto files = results_below(p);
      if (files.empty()) {
        IngestedFile none;
        none.path = p;
        none.kind = kind;
        none.why = "no results files in this folder";
        out.push_back(none);
      }
      for (const auto& f : files) {
        // The kind of the innermost ab/matrix/bisect/calibrate folder holding the file.
        std::string k = kind;
        for (fs::path up = fs::path(f).parent_path(); up.string().size() >= fs::path(p).string().size();
             up = up.parent_path()) {
          if (const std::string here = folder_kind(up); here != "folder") {
            k = here;
            break;
          }
          if (up == up.parent_path()) break;
        }
        out.push_back(ingest_file(db, f, k, o));
      }
    } else {
      out.push_back(ingest_file(db, p, "results", o));
    }
  }
  return out;
}

std::pair<double, double> median_ci(std::vector<double> v, double level) {
  const size_t n = v.size();
  if (n < 6) return {NAN, NAN};
  std::sort(v.begin(), v.end());
  // P(Bin(n, 1/2) <= j), accumulated in log space; k is the largest j + 1 with that tail <= alpha/2.
  const double alpha2 = (1 - level) / 2;
  double cdf = 0;
  size_t k = 0;
  for (size_t j = 0; j < n; ++j) {
    cdf += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) - n * std::log(2.0));
    if (cdf > alpha2) break;
    k = j + 1;
  }
  if (k == 0) return {v.front(), v.back()};
  return {v[k - 1], v[n - k]};
}

bool commit_order(const CommitPoint& a, const CommitPoint& b) {
  if (a.commit_seq && b.commit_seq && *a.commit_seq != *b.commit_seq) return *a.commit_seq < *b.commit_seq;
  const std::string& ka = a.commit_date.empty() ? a.first_ingested : a.commit_date;
  const std::string& kb = b.commit_date.empty() ? b.first_ingested : b.commit_date;
  if (ka != kb) return ka < kb;
  return a.first_run < b.first_run;
}

std::vector<Series> read_series(Db& db, const SeriesFilter& f) {
  migrate(db);
  std::string sql =
      "SELECT r.machine, mc.label, r.suite, s.case_name, s.parameters, s.backend, r.preset, m.phase, m.metric, "
      "r.commit_sha, r.commit_date, f.ingested_utc, r.git_dirty, r.id, m.value, r.command_line, r.commit_seq "
      "FROM measurements m JOIN samples s ON s.id = m.sample_id JOIN runs r ON r.id = s.run_id "
      "JOIN files f ON f.id = r.file_id JOIN machines mc ON mc.fingerprint = r.machine WHERE m.metric = ?";
  std::vector<Value> params{f.metric};
  auto filter = [&](const std::string& col, const std::string& v, bool prefix = false) {
    if (v.empty()) return;
    sql += prefix ? " AND " + col + " LIKE ?" : " AND " + col + " = ?";
    params.push_back(prefix ? v + "%" : v);
  };
  filter("r.suite", f.suite);
  filter("s.case_name", f.case_name);
  filter("m.phase", f.phase);
  filter("r.machine", f.machine, true);
  filter("r.branch", f.branch);
  filter("s.backend", f.backend);
  filter("r.preset", f.preset);
  if (!f.include_warmup) sql += " AND s.warmup = 0";
  sql += " ORDER BY r.machine, r.suite, s.case_name, s.parameters, s.backend, r.preset, m.phase, r.id, s.id";
  std::map<std::string, Series> by_key;
  std::map<std::string, std::map<std::string, CommitPoint>> points;  // key -> commit -> point
  std::map<std::string, std::set<int64_t>> runs;                    // key|commit -> run ids
  for (const auto& row : db.query(sql, params)) {
    const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", row.text(0), row.text(2), row.text(3),
                                        row.text(4), row.text(5), row.text(6), row.text(7));
    auto& s = by_key[key];
    if (s.machine.empty())
      s = Series{.machine = row.text(0), .machine_label = row.text(1), .suite = row.text(2), .case_name = row.text(3),
                 .parameters = row.text(4), .backend = row.text(5), .preset = row.text(6), .phase = row.text(7),
                 .metric = row.text(8), .points = {}};
    const std::string commit = row.text(9) + (row.integer(12) ? "-dirty" : "");
    auto& p = points[key][commit];
    if (p.commit.empty()) {
      p.commit = row.text(9);
      p.dirty = row.integer(12) != 0;
      p.commit_date = row.text(10);
      p.first_run = row.integer(13);
      if (!row.is_null(16)) p.commit_seq = row.integer(16);
      p.first_ingested = row.text(11);
      p.command = row.text(15);
    }
    p.first_ingested = std::min(p.first_ingested, row.text(11));
    p.first_run = std::min(p.first_run, row.integer(13));
    runs[key + "|" + commit].insert(row.integer(13));
    p.values.push_back(row.real(14));
  }
  std::vector<Series> out;
  for (auto& [key, s] : by_key) {
    for (auto& [commit, p] : points[key]) {
      p.runs = runs[key + "|" + commit].size();
      p.samples = p.values.size();
      p.median = median(p.values);
      std::tie(p.ci_low, p.ci_high) = median_ci(p.values);
      s.points.push_back(std::move(p));
    }
    // Commit order: by the commit's place in its history where both are known (a child after its
    // parents, whatever their dates), else by commit date, else by when it was first ingested;
    // then by the first run stored.
    std::sort(s.points.begin(), s.points.end(), commit_order);
    if (!f.since.empty()) {
      auto it = std::find_if(s.points.begin(), s.points.end(),
                             [&](const CommitPoint& p) { return p.commit.rfind(f.since, 0) == 0; });
      if (it == s.points.end()) continue;
      s.points.erase(s.points.begin(), it);
    }
    out.push_back(std::move(s));
  }
  if (!f.since.empty() && out.empty() && !by_key.empty())
    throw DbError(fmt::format("--since {}: no series matched has a point at that commit", f.since));
  return out;
}

void record_failure(Db& db, const CommitFailure& f) {
  if (f.stage != "build" && f.stage != "run")
    throw DbError(fmt::format("a failure's stage is \"build\" or \"run\", not \"{}\"", f.stage));
  if (f.commit.empty() || f.machine.empty() || f.suite.empty() || f.case_name.empty())
    throw DbError("a failure needs its commit, machine, suite and case");
  migrate(db);
  Transaction tx(db);
  db.query("DELETE FROM commit_failures WHERE commit_sha = ? AND machine = ? AND suite = ? AND case_name = ?",
           {f.commit, f.machine, f.suite, f.case_name});
  db.query("INSERT INTO commit_failures (commit_sha, machine, suite, case_name, stage, message, recorded_utc) "
           "VALUES (?, ?, ?, ?, ?, ?, ?)",
           {f.commit, f.machine, f.suite, f.case_name, f.stage, f.message,
            f.recorded_utc.empty() ? now_utc() : f.recorded_utc});
  tx.commit();
}

std::vector<StoredCommit> stored_commits(Db& db, const std::string& suite, const std::string& case_name,
                                         const std::string& machine) {
  migrate(db);
  std::map<std::string, StoredCommit> out;
  std::string sql =
      "SELECT r.commit_sha, count(DISTINCT r.id) FROM runs r JOIN samples s ON s.run_id = r.id WHERE r.git_dirty = 0";
  std::vector<Value> params;
  auto filter = [&](std::string& q, const std::string& col, const std::string& v, bool prefix = false) {
    if (v.empty()) return;
    q += prefix ? " AND " + col + " LIKE ?" : " AND " + col + " = ?";
    params.push_back(prefix ? v + "%" : v);
  };
  filter(sql, "r.suite", suite);
  filter(sql, "s.case_name", case_name);
  filter(sql, "r.machine", machine, true);
  sql += " GROUP BY r.commit_sha";
  for (const auto& row : db.query(sql, params))
    out[row.text(0)] = StoredCommit{.commit = row.text(0), .status = "measured",
                                    .runs = static_cast<size_t>(row.integer(1)), .message = ""};
  params.clear();
  std::string fsql = "SELECT commit_sha, stage, message FROM commit_failures WHERE 1 = 1";
  filter(fsql, "suite", suite);
  filter(fsql, "case_name", case_name);
  filter(fsql, "machine", machine, true);
  for (const auto& row : db.query(fsql, params))
    if (!out.count(row.text(0)))  // measured since: the runs count
      out[row.text(0)] = StoredCommit{.commit = row.text(0), .status = row.text(1) + " failed", .runs = 0,
                                      .message = row.text(2)};
  std::vector<StoredCommit> v;
  for (auto& [k, c] : out) v.push_back(std::move(c));
  return v;
}

}  // namespace cuzk::history
