// Operating-system counters per phase (`os::*` names): what the kernel counts for the whole
// process on every Linux machine, with no PMU and no PAPI (docs/counters.md).
//
// getrusage(RUSAGE_SELF): page faults, context switches, user and system CPU time, peak RSS;
// /proc/self/io: bytes read and written. A value is the difference of two readings taken when
// the phase opens and when it closes, so it covers every thread of the process over the
// phase's interval (concurrent phases overlap), including threads that exited meanwhile (the
// kernel folds their counts into the process's). os::maxrss_kib is the growth of the peak RSS
// over the interval, 0 when the phase did not raise it.
//
// Cost: one getrusage call (about 1 us with 16 threads on the development VM: the kernel sums
// the threads) per reading, two readings per phase; the /proc/self/io counters add a pread of
// that file per reading (about 1 us), so they are not in the default set.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/measure/counter_reader.hpp"

namespace cuzk::os_counters {

constexpr const char* kPrefix = "os::";

struct Info {
  const char* name;         // "os::minflt"
  const char* unit;         // "faults", "ns", "KiB", "bytes", "switches"
  const char* source;       // "getrusage(RUSAGE_SELF)" or "/proc/self/io"
  const char* description;
};

// Every OS counter, in a fixed order.
const std::vector<Info>& all();
// The OS counters recorded by default (the cheap ones: getrusage only).
const std::vector<std::string>& defaults();
bool is_os_name(const std::string& name);
// nullptr when `name` is not an OS counter.
const Info* find(const std::string& name);
// The scope of every OS counter, as the record says it.
constexpr const char* kScope = "the whole process (all threads) over the phase's interval";

// Reads a fixed list of OS counters; thread-safe (each read is independent).
class Reader final : public CounterReader {
 public:
  // `names` must all be OS counter names (find() != nullptr).
  explicit Reader(const std::vector<std::string>& names);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // A name is unavailable where its source is missing (e.g. /proc/self/io).
  bool read(std::vector<int64_t>& out, std::string& error) override;

 private:
  std::vector<int> field_;          // which value each name reads
  bool need_rusage_ = false, need_io_ = false;
  int io_fd_ = -1;
};

}  // namespace cuzk::os_counters
