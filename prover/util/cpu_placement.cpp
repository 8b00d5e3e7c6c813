#include "prover/util/cpu_placement.hpp"

#include <fmt/core.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <set>
#include <stdexcept>
#include <system_error>

#include "prover/util/thread_pool.hpp"

namespace cuzk::placement {
namespace {

std::mutex g_mu;
std::optional<Placement> g_placement;

void check_cpus(const std::vector<int>& cpus, const char* which) {
  if (cpus.empty()) throw std::invalid_argument(fmt::format("cpu placement: the {} CPU set is empty", which));
  for (int c : cpus)
    if (c < 0 || c >= CPU_SETSIZE)
      throw std::invalid_argument(
          fmt::format("cpu placement: {} CPU {} is out of range [0, {})", which, c, int(CPU_SETSIZE)));
}

void pin_to(const std::vector<int>& cpus, const char* which) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("cpu placement: cannot pin this thread to the {} CPUs {}", which, cpu_list(cpus)));
}

}  // namespace

void set(const Placement& p) {
  check_cpus(p.driver_cpus, "driver");
  check_cpus(p.worker_cpus, "worker");
  for (int c : p.driver_cpus)
    if (std::find(p.worker_cpus.begin(), p.worker_cpus.end(), c) != p.worker_cpus.end())
      throw std::invalid_argument(fmt::format("cpu placement: CPU {} is in both the driver set ({}) and the worker set ({})",
                                              c, cpu_list(p.driver_cpus), cpu_list(p.worker_cpus)));
  if (ThreadPool::global_exists())
    throw std::logic_error("cpu placement: set after ThreadPool::global() was created; its workers would stay "
                           "unplaced (set the placement before any work runs)");
  std::lock_guard<std::mutex> lk(g_mu);
  g_placement = p;
}

std::optional<Placement> current() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_placement;
}

void pin_current_thread_to_workers() {
  if (auto p = current()) pin_to(p->worker_cpus, "worker");
}

void pin_current_thread_to_driver() {
  if (auto p = current()) pin_to(p->driver_cpus, "driver");
}

void pin_current_thread_to_all() {
  if (auto p = current()) {
    std::vector<int> all = p->driver_cpus;
    all.insert(all.end(), p->worker_cpus.begin(), p->worker_cpus.end());
    pin_to(all, "driver and worker");
  }
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    throw std::system_error(errno, std::generic_category(), "cpu placement: cannot read this thread's CPU set");
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

Placement default_split(const std::vector<int>& allowed) {
  std::set<int> cpus(allowed.begin(), allowed.end());
  if (cpus.size() < 2)
    throw std::runtime_error(fmt::format(
        "cpu placement: this process may run on {} CPU{} ({}), so no core can be kept free for the GPU-driving thread",
        cpus.size(), cpus.size() == 1 ? "" : "s", cpus.empty() ? "none" : cpu_list({cpus.begin(), cpus.end()})));
  Placement p;
  p.driver_cpus = {*cpus.rbegin()};
  p.worker_cpus.assign(cpus.begin(), std::prev(cpus.end()));
  return p;
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::set<int> s(cpus.begin(), cpus.end());
  std::string out;
  for (auto it = s.begin(); it != s.end();) {
    const int first = *it;
    int last = first;
    while (++it != s.end() && *it == last + 1) ++last;
    if (!out.empty()) out += ',';
    out += last == first ? std::to_string(first) : fmt::format("{}-{}", first, last);
  }
  return out;
}

}  // namespace cuzk::placement
