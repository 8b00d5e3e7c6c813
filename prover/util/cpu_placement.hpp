// Where the process's threads run: one CPU set for the thread that drives the GPU, another for
// the worker pool, so that the driver finds a free core each time a GPU wait returns.
//
// Who calls what: the harness (harness/measure/stable.cpp, for `--stable`) computes a Placement, usually
// default_split(allowed_cpus()), calls set() once before anything uses ThreadPool::global(), and
// pins its own GPU-driving thread with pin_current_thread_to_driver(). ThreadPool::global() then
// sizes itself from current(), and every ThreadPool worker calls pin_current_thread_to_workers()
// when it starts; so does any other thread of CPU work the GPU backend starts (its B-query G2
// thread). With no placement set, every pin function is a no-op: a prover nobody places runs as
// it always did. The prover only offers the mechanism; whether and how to place is the caller's.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace cuzk::placement {

struct Placement {
  std::vector<int> driver_cpus;  // the GPU-driving thread (kept free of pool work)
  std::vector<int> worker_cpus;  // the pool's workers and other CPU-work threads
  bool operator==(const Placement&) const = default;
};

// Installs the process-wide placement. Throws std::invalid_argument when a set is empty, the
// two overlap, or a CPU number is outside [0, CPU_SETSIZE); std::logic_error when
// ThreadPool::global() already exists (its workers would stay unplaced: set the placement first).
void set(const Placement& p);
// The placement set, if any.
std::optional<Placement> current();

// Restrict the calling thread to the placement's worker CPUs / driver CPUs / both sets. No-ops
// without a placement. A refused sched_setaffinity throws std::system_error naming the CPUs.
void pin_current_thread_to_workers();
void pin_current_thread_to_driver();
// For threads that neither drive the GPU nor belong to the pool but inherit the caller's mask:
// child processes and threads started by a pinned driver thread.
void pin_current_thread_to_all();

// The CPUs the calling thread may run on (sched_getaffinity), ascending. Before any pinning
// this is the process's CPU set (taskset, cgroup cpuset, container limits).
std::vector<int> allowed_cpus();

// The default split of `allowed`: the driver gets the highest CPU, the workers the rest. Throws
// std::runtime_error when fewer than 2 CPUs are given: no core can be kept free for the driver.
Placement default_split(const std::vector<int>& allowed);

// "0-14", "3", "0,2,4-7": the kernel's cpu-list notation (Cpus_allowed_list), for messages.
std::string cpu_list(const std::vector<int>& cpus);

}  // namespace cuzk::placement
