// The daemon's journal of jobs (docs/daemon.md#journal): one SQLite table (through the results
// history's SQL layer, harness/history/db.hpp), written with synchronous=FULL so that a job is
// on disk before its submitter hears it was accepted, and read back at start so that a restart
// (or a crash) loses no accepted job.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::history {
class Db;
}

namespace cuzk::daemon {

class JournalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One job as journaled. `state` is a JobState name of the .proto (QUEUED, RUNNING, DONE,
// FAILED, CANCELLED); `input` the canonical input JSON; `record` the JobStatus's phases and
// details as JSON once the job ended.
struct JournalEntry {
  int64_t seq = 0;  // order of acceptance, across restarts
  std::string id, request_id, kind;
  int priority = 0;
  std::string input;
  std::string state = "QUEUED";
  std::string reason, proof_path, record = "{}";
  int restarts = 0;
  int64_t accepted_unix_ms = 0;
};

class Journal {
 public:
  // Opens (creating) the journal at `path`; throws JournalError naming the file and the reason
  // (not a database, locked by another daemon, unwritable folder).
  explicit Journal(const std::string& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends a new job (its seq is assigned); durable when this returns.
  int64_t insert(JournalEntry& e);
  // Records a job's new state and details; durable when this returns.
  void update(const JournalEntry& e);
  // Every job, in acceptance order.
  std::vector<JournalEntry> load() const;
  const std::string& path() const { return path_; }

 private:
  std::unique_ptr<history::Db> db_;
  std::string path_;
};

}  // namespace cuzk::daemon
