// One writer per output: a command that writes a results file or an output folder claims it for
// its whole run with an exclusive flock(2), so that a second cuzk-bench aimed at the same output
// is refused (exit 2, naming the holder's pid) before it does any work or touches the output.
//
//  - A results file (run, engine, prove, selfmeasure --out) is locked itself, on the writer's
//    own descriptor (ResultsWriter, harness/measure/results.hpp).
//  - An output folder (ab, matrix, bisect, noise, calibrate --out-dir) is locked through
//    <dir>/.cuzk-bench.lock, which holds the owner's pid and is removed when the run ends.
//
// flock, not the existence of a pid file: the kernel releases the lock when its holder dies
// (kill -9 included), so a stale lock file never blocks the next run. The holder's pid comes
// from /proc/locks (a lock file also holds it). docs/reliability.md, "One writer per output".
#pragma once
#include <sys/types.h>

#include <string>

namespace cuzk {

// The lock file's name inside a claimed folder; a folder holding only it counts as empty.
constexpr const char* kOutputLockName = ".cuzk-bench.lock";

// Tries to take an exclusive flock on the open descriptor `fd` without waiting. Returns true
// when taken (or when the filesystem has no locks: nothing to protect against then); false when
// another open file description holds it.
bool try_lock_exclusive(int fd);

// The process holding a flock on the file open as `fd`, from /proc/locks; 0 when unknown.
pid_t lock_holder(int fd);

// "<what> is being written by another cuzk-bench (pid N)" ("... by another cuzk-bench" when the
// pid is unknown): the message of every refusal.
std::string claimed_message(const std::string& what, pid_t holder);

// Throws FileError(claimed_message(what, holder)) when `path` exists and /proc/locks shows
// another process's lock on it; does nothing otherwise (never locks or changes it).
void check_not_claimed(const std::string& path, const std::string& what);

// An output folder claimed for the lifetime of the object (move-only). Releasing it removes the
// lock file, and the folders the claim created when nothing was written there.
class FolderClaim {
 public:
  FolderClaim() = default;
  // Creates `dir` (and its parents) if needed and claims it. `flag` names the option in
  // messages (e.g. "--out-dir"). With `require_empty`, a folder holding anything but the lock
  // file is refused: "<flag> <dir> already exists and is not empty: ...". Throws FileError.
  FolderClaim(const std::string& dir, const std::string& flag, bool require_empty);
  FolderClaim(FolderClaim&& o) noexcept;
  FolderClaim& operator=(FolderClaim&& o) noexcept;
  FolderClaim(const FolderClaim&) = delete;
  FolderClaim& operator=(const FolderClaim&) = delete;
  ~FolderClaim() { release(); }

  void release();
  bool held() const { return fd_ >= 0; }

 private:
  std::string dir_, lock_path_;
  std::string created_top_;  // the outermost folder the claim created
  int fd_ = -1;
  bool created_dir_ = false;
};

}  // namespace cuzk
