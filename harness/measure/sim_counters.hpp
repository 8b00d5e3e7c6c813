// Simulated counters per phase (`sim::*` names): instruction counts and simulated cache misses
// from Valgrind's callgrind, numbers that no other process on the machine can change, and the
// only cache-miss counts on machines without a PMU (docs/counters.md).
//
// How: `cuzk-bench ... --counters sim` re-executes itself under
//   valgrind --tool=callgrind [--cache-sim=yes --branch-sim=yes]
// (harness/cli/sim_exec.hpp) with $CUZK_SIM_OUT naming callgrind's output file. Inside, every
// reading is a CALLGRIND_DUMP_STATS_AT client request: callgrind writes the costs since the
// previous dump to `<out>.<part>` before the request returns and zeroes them, so the sum of
// the dumps' `summary:` lines is a running total and a phase's value is end minus start, like
// every other counter. The dump aggregates every thread (callgrind's --separate-threads=no), so
// the scope is the whole process; Valgrind runs one thread at a time.
//
// Collection stays on from the start (--collect-atstart=yes): callgrind's collection switch is
// per thread (CALLGRIND_TOGGLE_COLLECT affects only the calling thread, and a new thread starts
// with the --collect-atstart state), so switching it on at a phase's start would leave the
// pool's workers uncounted. Costs outside phases are simply never differenced.
//
// Off Valgrind every request is a few no-op instructions and no sim:: counter is available:
// its value is null with the reason, never 0.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/measure/counter_reader.hpp"

namespace cuzk::sim {

constexpr const char* kPrefix = "sim::";
// The keyword `--counters sim` expands to the sim:: counters (the cache ones with --cache-sim).
constexpr const char* kKeyword = "sim";
// Set by the re-executing parent: callgrind's --callgrind-out-file, whose dumps are read.
constexpr const char* kOutEnv = "CUZK_SIM_OUT";
// Set by the parent: "1" when callgrind simulates caches and branches (--cache-sim).
constexpr const char* kCacheSimEnv = "CUZK_SIM_CACHE";
// Set by the parent: the arithmetic path a native run takes on this machine.
constexpr const char* kNativePathEnv = "CUZK_SIM_NATIVE_ARITHMETIC";
// Set by the parent when it chose CUZK_THREADS=1 for the run under Valgrind (the user set none).
constexpr const char* kThreadsSetEnv = "CUZK_SIM_THREADS_SET";
// The valgrind binary to run (default: `valgrind` on PATH).
constexpr const char* kValgrindEnv = "CUZK_VALGRIND";
constexpr const char* kScope = "all threads (Valgrind serializes threads) over the phase's interval";

struct Info {
  const char* name;         // "sim::instructions"
  const char* unit;         // "instructions", "misses", "mispredicts"
  const char* events;       // the callgrind events summed, "I1mr+D1mr+D1mw"
  bool needs_cache_sim;     // only with --cache-sim (callgrind's --cache-sim/--branch-sim)
  const char* description;
};

// Every sim counter, in a fixed order.
const std::vector<Info>& all();
bool is_sim_name(const std::string& name);
const Info* find(const std::string& name);  // nullptr when not a sim counter
// What `sim` expands to: sim::instructions, plus the cache and branch counters with cache_sim.
std::vector<std::string> keyword_names(bool cache_sim);
// `names` with each `sim` keyword replaced by keyword_names(cache_sim) (duplicates dropped).
std::vector<std::string> expand_keyword(const std::vector<std::string>& names, bool cache_sim);
bool any_sim(const std::vector<std::string>& names);

// True inside Valgrind (RUNNING_ON_VALGRIND).
bool under_valgrind();
// The field arithmetic this process dispatches to at run time (CPUID): what a simulated run
// executes is not what a native run on the same machine executes when they differ.
std::string arithmetic_path();

// Reads a fixed list of sim counters through callgrind dumps; thread-safe (reads serialize).
class Reader final : public CounterReader {
 public:
  // `names` must all be sim counter names (find() != nullptr). Takes the first dump when any
  // name is available, so the header can record the simulated caches.
  explicit Reader(const std::vector<std::string>& names);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Running totals (callgrind's, since the start of the process).
  bool read(std::vector<int64_t>& out, std::string& error) override;

  // The header's "sim" object: tool, Valgrind version, simulated caches, arithmetic paths.
  nlohmann::json header() const;

  struct State;

 private:
  std::vector<std::string> names_;
  std::unique_ptr<State> st_;
};

// Parses one callgrind dump's text: `events:` names and the `summary:` (else `totals:`) costs,
// the `creator:` version and the `desc: <cache> cache:` lines. For the reader and its tests.
struct Dump {
  std::vector<std::string> events;
  std::vector<int64_t> costs;  // one per event
  std::string version;         // "3.19.0"
  std::string i1, d1, ll;      // "32768 B, 64 B, 8-way associative"; "" without cache simulation
};
// False with `error` when the text has no `events:` line or no cost line that matches it.
bool parse_dump(const std::string& text, Dump& out, std::string& error);

// Instructions of one iteration of planted_work's loop (checked under callgrind by the tests).
constexpr uint64_t kWorkInstructionsPerIteration = 4;
// Executes `iterations` iterations of a dependency chain of integer multiply-adds: a loop of
// known instruction count (harness/measure/inject.hpp `:work`). Returns the chain's value.
uint64_t planted_work(uint64_t iterations);

}  // namespace cuzk::sim
