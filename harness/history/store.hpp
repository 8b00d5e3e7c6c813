// The results history (docs/history.md): every sample of every ingested results file, keyed by
// commit, build, machine, suite, case, parameters, phase and metric, in a SQL store (db.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/history/db.hpp"

namespace cuzk::history {

// The schema version this build writes; migrate() brings an older store up to it.
constexpr int kSchemaVersion = 4;

// Creates the schema in an empty store, or applies the migrations an older one lacks, each in a
// transaction of its own, up to `target` (tests build older stores with it). Throws DbError for
// a store newer than this build.
void migrate(Db& db, int target = kSchemaVersion);
// The store's schema version (0: empty).
int schema_version(Db& db);

struct IngestOptions {
  std::string branch;  // recorded with every run ("" -> NULL): the branch the commits were built from
  // A git checkout that knows the commits, for their dates and places in the history ("" -> none
  // looked up); runs stored without them get them when this checkout knows their commit.
  std::string repo;
};


// What ingesting one path did.
struct IngestedFile {
  std::string path;
  std::string kind;     // "results" (a file given), or the folder's: "ab", "matrix", "bisect", "calibration", "folder"
  bool added = false;   // false: skipped (see why)
  std::string why;      // "already in the history (same content)", "written under CUZK_INJECT_SLOWDOWN", ...
  size_t samples = 0, measurements = 0;
};

// Ingests results files, or folders of them (every *.jsonl results file below, except round
// files a merged file already holds: docs/history.md, "Ingest"). One transaction per file;
// a file whose content hash is stored already adds nothing. Throws ResultsError ("file:line:
// ...") for a malformed file, before anything of it is written; files before it stay ingested.
std::vector<IngestedFile> ingest(Db& db, const std::vector<std::string>& paths, const IngestOptions& o);

// A machine's fingerprint: 12 hex digits over what makes its runs comparable (CPU model,
// logical CPUs, memory, GPU names, drivers and clocks read), so that two runners are never
// mixed in one series.
std::string machine_fingerprint(const std::string& machine_json_text);

// Which series `history show` reads.
struct SeriesFilter {
  std::string suite, case_name, phase, metric = "wall_ns", machine, branch, since;
  std::string backend, preset;
  bool include_warmup = false;
};

// One point of a series: one commit (and build) on one machine.
struct CommitPoint {
  std::string commit, commit_date, first_ingested;  // commit_date "" when not known
  std::optional<int64_t> commit_seq;                 // `git rev-list --count`, where known
  int64_t first_run = 0;                             // the first run's id: the order of ingestion
  bool dirty = false;
  size_t runs = 0, samples = 0;                      // results files and samples behind it
  double median = 0, ci_low = 0, ci_high = 0;         // 95% distribution-free CI of the median
  std::vector<double> values;                        // every sample's value
  std::string command;                               // the first run's command line, to reproduce it
};

// The order of a series' points: the commit's place in its history (`git rev-list --count`)
// where both points have one, else the commit date, else the first ingestion; then the first run.
bool commit_order(const CommitPoint& a, const CommitPoint& b);

struct Series {
  std::string machine, machine_label, suite, case_name, parameters, backend, preset, phase, metric;
  std::vector<CommitPoint> points;  // in commit order: commit date, then first ingestion
};

// Every series that matches, each with its points. Throws DbError for --since naming no commit.
std::vector<Series> read_series(Db& db, const SeriesFilter& f);

// A commit that could not be measured: it did not build, or its run failed (a backfill over
// the past records these, so that a resumed backfill skips them and a series' gap is explained).
struct CommitFailure {
  std::string commit, machine, suite, case_name;
  std::string stage;    // "build" or "run"
  std::string message;  // the first line of the error, or the log's last lines
  std::string recorded_utc;
};
// Stores (or replaces) the failure of `commit` for (machine, suite, case).
void record_failure(Db& db, const CommitFailure& f);

// What the store holds of a commit for one suite and case on one machine.
struct StoredCommit {
  std::string commit;
  std::string status;   // "measured", "build failed" or "run failed"
  size_t runs = 0;      // results files of that commit (measured)
  std::string message;  // the failure's message
};
// Every commit with runs or a recorded failure for the suite and case (either may be empty: any)
// on `machine` (a fingerprint or its prefix; empty: any), in no particular order.
std::vector<StoredCommit> stored_commits(Db& db, const std::string& suite, const std::string& case_name,
                                         const std::string& machine);

// The distribution-free CI of a median at `level`: order statistics k and n-k+1 with k the
// largest rank whose binomial(n, 1/2) tail stays within (1 - level) / 2. NaN bounds below 6 values.
std::pair<double, double> median_ci(std::vector<double> v, double level = 0.95);

}  // namespace cuzk::history
