// Per-phase event counters, chosen at run time by name, from three sources that share one model
// (a value or null with its reason, per phase; docs/counters.md): PAPI events (`PAPI_TOT_INS`,
// `perf::PAGE-FAULTS`), the operating system's counters (`os::minflt`, `os::utime_ns`, ...:
// harness/measure/os_counters.hpp), which need no PMU and no PAPI and cover the whole process,
// and Valgrind's simulated counts (`sim::instructions`, ...: harness/measure/sim_counters.hpp),
// available only in a process that runs under callgrind.
//
// The PAPI part:
//
// Scope: counts cover every *enlisted* thread of the process. A thread is enlisted when it
// opens a phase while counting is on, and the pool's workers are enlisted up front
// (enlist_pool). Each enlisted thread starts its own PAPI eventset; reads sum the eventsets of
// all enlisted threads (PAPI eventsets of other threads are readable from any thread) plus
// the final counts of enlisted threads that have exited. A phase's value is the difference
// of two such sums, so it holds the whole process's counted threads during the phase's
// interval, and concurrent phases overlap. scope_text() says how many threads were counted.
//
// (PAPI_attach to each /proc/self/task thread would not need enlisting, but PAPI checks
// attach permission by opening a hardware event, which fails on machines without a PMU,
// such as the team's virtual machines.)
//
// Event names: a name PAPI does not know at all is an error (CounterError) up front, and so is
// an `os::` name that is not an OS counter; a known event that cannot be counted here is
// recorded as null with the reason. Without PAPI built in (CUZK_HAVE_PAPI == 0) every requested
// PAPI event is null with reason "PAPI not built in"; the OS counters work either way.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/measure/os_counters.hpp"
#include "harness/measure/sim_counters.hpp"

namespace cuzk {

class ThreadPool;

struct CounterStatus {
  std::string name;
  bool available = false;
  std::string reason;  // why not available ("" when available)
  std::string source;  // "papi", "os" or "sim"
};

// Where a counter comes from and what it covers, for the results header (docs/results-format.md).
struct CounterSource {
  std::string source;  // "papi", "os" or "sim"
  std::string scope;   // which threads, over what interval
  std::string how;     // the API that reads it
  std::string unit;    // "" when the event does not say
};
CounterSource counter_source(const std::string& name);

class CounterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr bool kPapiBuiltIn = CUZK_HAVE_PAPI != 0;
constexpr const char* kReasonNoPapi = "PAPI not built in";

// Events `cuzk-bench info` probes by default.
const std::vector<std::string>& default_probe_counters();

// Whether each event can be counted here (never throws for unknown names: they are reported
// unavailable with the reason).
std::vector<CounterStatus> probe_counters(const std::vector<std::string>& names);

// "a, b,c" -> {"a","b","c"}; duplicates dropped; an empty item throws CounterError.
std::vector<std::string> parse_counter_list(const std::string& csv);

// A recording command's default list: its PAPI events, then the default OS counters (always on:
// they are cheap and need no PMU; os_counters::defaults()).
std::vector<std::string> with_os_defaults(std::vector<std::string> papi);

// The counter list of a recording command: the flag when given, else $CUZK_COUNTERS, else
// `fallback`.
std::vector<std::string> counters_from(const std::optional<std::string>& flag,
                                       const std::vector<std::string>& fallback);

// A running set of counters over the enlisted threads. One CounterSet at a time per process.
class CounterSet {
 public:
  explicit CounterSet(const std::vector<std::string>& names);  // throws CounterError
  ~CounterSet();
  CounterSet(const CounterSet&) = delete;
  CounterSet& operator=(const CounterSet&) = delete;

  // Every requested event, in request order, with availability.
  const std::vector<CounterStatus>& status() const { return status_; }
  // Indices (into status()) of the events that are counted; read() returns them in this order.
  const std::vector<size_t>& counted() const { return counted_; }

  // Whether OS counters are counted (their scope is the whole process, not enlisted threads).
  bool counts_os() const { return os_ && os_->available_count() > 0; }
  // Whether sim counters are counted (under callgrind; every thread).
  bool counts_sim() const { return sim_ && sim_->available_count() > 0; }
  // The position of a counted event in Reading::values; -1 when it is not counted.
  int value_index(const std::string& name) const;
  // The header's "sim" object (sim::Reader::header) when sim counters were requested, else null.
  nlohmann::json sim_header() const;

  void enlist_this_thread();              // idempotent; cheap after the first call per thread
  void enlist_pool(ThreadPool& pool);     // enlists every thread of the pool (and the caller)

  struct Reading {
    std::vector<int64_t> values;  // one per counted() event: sum over counted threads
    int threads = 0;              // enlisted threads read (alive; PAPI)
    bool os = false;              // the OS counters were read (they cover the whole process)
    bool sim = false;             // the sim counters were read (every thread, under Valgrind)
    int retired = 0;              // enlisted threads that have exited (their final counts included)
    bool ok = true;
    std::string error;            // when !ok: why the read failed
  };
  Reading read() const;

  // "3 of 3 process threads" (+ exited ones), and/or the OS counters' scope; `process_threads`
  // from /proc/self/task.
  static std::string scope_text(const Reading& r);
  static int process_threads();

  struct Impl;

 private:
  void init_papi(const std::vector<size_t>& idx);  // the PAPI names among status_
  bool papi_counting() const;
  Reading read_papi() const;

  std::vector<CounterStatus> status_;
  // The names of status_ at `idx` to `source`: their availability, and counted_ for those read.
  void add_source(CounterReader& source, const std::vector<size_t>& idx);
  // Appends `source`'s values to `r` (zeros and the error when the read fails).
  static void read_source(CounterReader& source, Reading& r);

  std::vector<size_t> counted_;   // PAPI events first, then OS counters, then sim counters
  std::shared_ptr<Impl> impl_;
  std::unique_ptr<os_counters::Reader> os_;
  std::unique_ptr<sim::Reader> sim_;
};

}  // namespace cuzk
