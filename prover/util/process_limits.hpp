// What the system still lets this process start and allocate, read before work so that a
// request beyond it is refused with the limit named (docs/reliability.md, "Limits of the
// machine"), instead of a thread that never starts or an allocation that fails mid-proof.
//
// Threads: RLIMIT_NPROC (ulimit -u) counts every task (process or thread) of the real user and is
// not enforced for root or with CAP_SYS_RESOURCE / CAP_SYS_ADMIN; a cgroup's pids.max counts the
// tasks of the cgroup (every ancestor's limit applies). Memory: MemAvailable of /proc/meminfo,
// the cgroup's memory limit less its usage, RLIMIT_AS (ulimit -v) less this process's VmSize.
// The readers only read; the checks take the readings as arguments, so tests can give their own.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cuzk::limits {

struct ThreadLimits {
  std::optional<uint64_t> nproc;  // RLIMIT_NPROC's soft limit; nullopt: unlimited
  bool nproc_enforced = true;     // false for root and with CAP_SYS_RESOURCE / CAP_SYS_ADMIN
  uid_t uid = 0;                  // the real user, whose tasks RLIMIT_NPROC counts
  uint64_t user_tasks = 0;        // that user's tasks now, as far as /proc shows them
  std::optional<uint64_t> pids_max;  // the tightest pids.max of this cgroup and its ancestors
  uint64_t pids_current = 0;         // the tasks counted against it
  std::string pids_file;             // where that pids.max was read
};
ThreadLimits read_thread_limits();

// Tasks this process may still start: the smaller headroom of the two limits; nullopt when
// neither applies.
std::optional<uint64_t> thread_headroom(const ThreadLimits& l);
// E.g. "ulimit -u 60 with 30 tasks of uid 1000 running; pids.max 100 (/sys/fs/cgroup/x/pids.max)
// with 20 in use"; "no limit" when none applies.
std::string describe(const ThreadLimits& l);

// Threads the harness and the engine start besides the pool's workers (the interrupt watchdog,
// the engine's stages, environment probes), counted in every thread check.
constexpr uint64_t kSpareThreads = 8;

// Empty when a pool of `pool_size` threads (the caller included) fits; else the refusal, naming
// `source` (e.g. "CUZK_THREADS=64"), the limit and the largest pool that fits.
std::string check_thread_request(unsigned pool_size, const std::string& source, const ThreadLimits& l);

struct MemoryLimits {
  std::optional<uint64_t> mem_available;  // MemAvailable
  std::optional<uint64_t> cgroup_limit;   // the tightest memory.max / memory.limit_in_bytes
  uint64_t cgroup_usage = 0;              // that cgroup's usage less its clean page cache
  std::string cgroup_file;
  std::optional<uint64_t> address_space;  // RLIMIT_AS's soft limit
  uint64_t vm_size = 0;                   // this process's VmSize
};
MemoryLimits read_memory_limits();
// The value of "key N" in a cgroup memory.stat file (inactive_file, total_inactive_file); nullopt
// when the file or the key is missing.
std::optional<uint64_t> memory_stat_field(const std::string& path, const std::string& key);
// The clean page cache of a cgroup's memory.stat (v2 names, or v1's total_* with `v1`): the file
// LRU lists, active and inactive, less the dirty and writeback pages, which the kernel reclaims
// before the cgroup runs out; 0 when the file or the lists are missing.
uint64_t reclaimable_file_bytes(const std::string& path, bool v1);

// Bytes this process may still use: the smallest of the three headrooms; nullopt when none is known.
std::optional<uint64_t> memory_headroom(const MemoryLimits& l);
// E.g. "MemAvailable 21.3 GiB; ulimit -v 2.0 GiB with 0.1 GiB in use".
std::string describe(const MemoryLimits& l);

// Empty when `need` bytes fit; else the refusal: "<what> needs about X GiB (estimate), more than
// this process may use: ...".
std::string check_memory_request(uint64_t need, const std::string& what, const MemoryLimits& l);

// "1.5 GiB", "12.0 MiB": sizes in messages.
std::string format_bytes(uint64_t bytes);

}  // namespace cuzk::limits
