// Duet runs (docs/ab.md, "Duet"): two measured processes at the same time on one machine, each
// confined to its own half of the CPUs, so that whatever disturbs one disturbs the other and the
// ratio of simultaneous samples is steadier than either side's time. `ab --duet` and
// `calibrate --duet` drive them.
//
// The driver (run_pair) starts both processes with their CPU masks applied between fork and exec
// and these variables set:
//   CUZK_DUET_BARRIER  a folder of the round's barrier files
//   CUZK_DUET_SIDE     "a" or "b"
//   CUZK_DUET_CPUS     the CPUs assigned (cpu-list notation), recorded beside the CPUs the
//                      process really had
//   CUZK_ROUND_ID      the round (results.cpp writes it into every sample: the paired design)
//   CUZK_THREADS       the half's CPU count: the prover's pool sizes itself from it, not from
//                      the machine's core count
//   CUZK_DUET_PARENT   the driver's pid: a member whose driver is gone stops waiting
//   CUZK_DUET_TIMEOUT  seconds a member waits at one barrier (absent or 0: no limit)
// The barrier: before every measured sample, warm-ups included (Session::measure), a member
// creates `ready-<n>-<side>` (n counts its samples from 0) and waits for `go-<n>`; the driver
// creates `go-<n>` once both ready files exist, so set-up (loading, keys) happens before the
// first barrier and every repetition starts together. When one member ends, the driver creates
// `abort` (holding the reason): the other fails at its next barrier with that reason instead of
// waiting for a partner that will never come. Plain files and polling, because they survive any
// crash of either side and need no shared state beyond a folder.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/measure/process.hpp"

namespace cuzk::duet {

constexpr const char* kBarrierEnv = "CUZK_DUET_BARRIER";
constexpr const char* kSideEnv = "CUZK_DUET_SIDE";
constexpr const char* kCpusEnv = "CUZK_DUET_CPUS";
constexpr const char* kRoundEnv = "CUZK_ROUND_ID";
constexpr const char* kParentEnv = "CUZK_DUET_PARENT";
constexpr const char* kTimeoutEnv = "CUZK_DUET_TIMEOUT";

// The two halves of a CPU set. Whole cores go to one half (CPUs that share a core, by
// /sys/devices/system/cpu/cpuN/topology, stay together) where there are at least two cores, so
// that the two sides never share a core's hyperthreads; otherwise the CPUs are halved. Halves
// are equal in size: a CPU or core left over goes unused.
struct Halves {
  std::vector<int> first, second, unused;
  bool by_core = false;
};
// Throws std::invalid_argument (naming the CPUs) when `allowed` cannot give each side a CPU.
Halves split_halves(const std::vector<int>& allowed);
// The CPUs of side 0 (A) or 1 (B) in round `round`: A on the first half in even rounds, so that
// a slow core favours neither side.
const std::vector<int>& side_cpus(const Halves& h, int round, int side);
// {"cpus", "first", "second", "unused", "by_core"} for manifests.
nlohmann::json describe(const Halves& h);
// The statement every duet output carries: what the ratio means.
std::string relative_note(const Halves& h);

// ---- the member's side (a measured process) ----
class Member {
 public:
  // The duet this process belongs to, from the variables above; nullptr when CUZK_DUET_BARRIER
  // is unset. Throws std::invalid_argument for a malformed variable.
  static std::unique_ptr<Member> from_env();
  // The results header's "duet": {"side", "round", "cpus_assigned", "cpus" (sched_getaffinity
  // now), "threads", "barrier"}.
  nlohmann::json header() const;
  // The barrier before the next sample. Throws std::runtime_error when the partner ended, the
  // driver is gone or the wait timed out; interrupt::Interrupted on SIGINT/SIGTERM.
  void arrive_and_wait();
  // A sample's "duet": {"side", "round", "sequence", "start_ns", "end_ns"} (CLOCK_MONOTONIC,
  // one clock for every process of the machine, so that two sides' spans can be laid side by side).
  nlohmann::json sample_fields(uint64_t start_ns, uint64_t end_ns) const;

 private:
  std::string dir_, side_, cpus_assigned_;
  int round_ = -1, seq_ = 0;
  long parent_ = 0;
  double timeout_s_ = 0;
};

// ---- the driver's side ----
struct PairSide {
  std::string command;    // shell command of the measured process (its own output redirection)
  std::vector<int> cpus;  // its half
};
struct PairResult {
  std::array<ChildResult, 2> child;
  int released = 0;       // barriers released
  std::string abort_reason;  // "" when neither side had to be told its partner ended
};
// Runs both sides of round `round` at once (threads over run_child, each in its own process
// group, so SIGINT/SIGTERM reach both), coordinating the barrier in `barrier_dir` (created, and
// removed afterwards). timeout_s: run_child's --run-timeout per side, and each barrier wait's bound.
PairResult run_pair(const std::string& barrier_dir, const std::array<PairSide, 2>& sides, int round, double timeout_s);

}  // namespace cuzk::duet
