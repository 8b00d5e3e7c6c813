#include "prover/util/process_limits.hpp"

#include <dirent.h>
#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace cuzk::limits {
namespace {

// Limits at or above this are "none" (cgroup v1 writes 2^63 rounded to a page for no limit).
constexpr uint64_t kNoLimit = uint64_t(1) << 60;

std::optional<uint64_t> read_number(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  if (!(f >> s) || s.empty() || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;  // missing, unreadable, or "max"
  const uint64_t v = std::strtoull(s.c_str(), nullptr, 10);
  return v >= kNoLimit ? std::nullopt : std::optional<uint64_t>(v);
}

// The value of "Key:" in a /proc status-like file, as text.
std::optional<std::string> field(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream in(line.substr(key.size() + 1));
      std::string v;
      if (in >> v) return v;
    }
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> memory_stat_field(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string k;
  uint64_t v = 0;
  while (f >> k >> v)
    if (k == key) return v;
  return std::nullopt;
}

namespace {

std::optional<uint64_t> kib_field(const std::string& path, const std::string& key) {
  auto v = field(path, key);
  if (!v) return std::nullopt;
  return std::strtoull(v->c_str(), nullptr, 10) * 1024;
}

// The cgroup folders of this process for `controller` ("" for the unified hierarchy), from the
// process's own cgroup up to the root: every level's limit applies.
std::vector<std::string> cgroup_levels(const std::string& controller) {
  std::ifstream f("/proc/self/cgroup");
  std::string line, path, base;
  while (std::getline(f, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string ctrls = line.substr(a + 1, b - a - 1);
    if (ctrls.empty() && line.substr(0, a) == "0") {  // cgroup v2
      if (base.empty()) base = "/sys/fs/cgroup", path = line.substr(b + 1);
      continue;
    }
    std::stringstream ss(ctrls);
    for (std::string c; std::getline(ss, c, ',');)
      if (c == controller) base = "/sys/fs/cgroup/" + controller, path = line.substr(b + 1);
  }
  std::vector<std::string> out;
  if (base.empty()) return out;
  for (;;) {
    out.push_back(base + (path == "/" ? "" : path));
    if (path.empty() || path == "/") break;
    const auto slash = path.rfind('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
  return out;
}

// Tasks (threads) of real user `uid` that /proc shows.
uint64_t tasks_of(uid_t uid) {
  uint64_t n = 0;
  DIR* d = ::opendir("/proc");
  if (!d) return 0;
  while (const dirent* e = ::readdir(d)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    const std::string status = std::string("/proc/") + e->d_name + "/status";
    std::ifstream f(status);
    std::string line;
    bool mine = false;
    while (std::getline(f, line)) {
      if (line.rfind("Uid:", 0) == 0) {
        std::istringstream in(line.substr(4));
        unsigned long u = 0;
        mine = (in >> u) && u == uid;
        if (!mine) break;
      } else if (mine && line.rfind("Threads:", 0) == 0) {
        n += std::strtoull(line.c_str() + 8, nullptr, 10);
        break;
      }
    }
  }
  ::closedir(d);
  return n;
}

bool has_capability(int bit) {
  auto v = field("/proc/self/status", "CapEff");
  if (!v) return false;
  const uint64_t caps = std::strtoull(v->c_str(), nullptr, 16);
  return (caps >> bit) & 1;
}

}  // namespace

std::string format_bytes(uint64_t b) {
  const double v = double(b);
  if (v >= double(uint64_t(1) << 40)) return fmt::format("{:.1f} TiB", v / double(uint64_t(1) << 40));
  if (v >= double(uint64_t(1) << 30)) return fmt::format("{:.1f} GiB", v / double(uint64_t(1) << 30));
  return fmt::format("{:.1f} MiB", v / double(uint64_t(1) << 20));
}

ThreadLimits read_thread_limits() {
  ThreadLimits l;
  l.uid = ::getuid();
  rlimit r{};
  if (::getrlimit(RLIMIT_NPROC, &r) == 0 && r.rlim_cur != RLIM_INFINITY) l.nproc = uint64_t(r.rlim_cur);
  constexpr int kCapSysAdmin = 21, kCapSysResource = 24;
  l.nproc_enforced = l.uid != 0 && !has_capability(kCapSysResource) && !has_capability(kCapSysAdmin);
  if (l.nproc && l.nproc_enforced) l.user_tasks = tasks_of(l.uid);
  for (const std::string& dir : cgroup_levels("pids")) {
    const auto max = read_number(dir + "/pids.max");
    if (!max) continue;
    const uint64_t cur = read_number(dir + "/pids.current").value_or(0);
    if (!l.pids_max || *max - std::min(*max, cur) < *l.pids_max - std::min(*l.pids_max, l.pids_current)) {
      l.pids_max = max;
      l.pids_current = cur;
      l.pids_file = dir + "/pids.max";
    }
  }
  return l;
}

std::optional<uint64_t> thread_headroom(const ThreadLimits& l) {
  std::optional<uint64_t> h;
  if (l.nproc && l.nproc_enforced) h = *l.nproc - std::min(*l.nproc, l.user_tasks);
  if (l.pids_max) {
    const uint64_t p = *l.pids_max - std::min(*l.pids_max, l.pids_current);
    h = h ? std::min(*h, p) : p;
  }
  return h;
}

std::string describe(const ThreadLimits& l) {
  std::string s;
  if (l.nproc && l.nproc_enforced)
    s = fmt::format("ulimit -u {} with {} tasks of uid {} running", *l.nproc, l.user_tasks, l.uid);
  if (l.pids_max)
    s += fmt::format("{}pids.max {} ({}) with {} in use", s.empty() ? "" : "; ", *l.pids_max, l.pids_file,
                     l.pids_current);
  return s.empty() ? "no limit" : s;
}

std::string check_thread_request(unsigned pool_size, const std::string& source, const ThreadLimits& l) {
  const auto headroom = thread_headroom(l);
  const uint64_t needed = uint64_t(pool_size > 0 ? pool_size - 1 : 0) + kSpareThreads;
  if (!headroom || needed <= *headroom) return {};
  const uint64_t largest = *headroom >= kSpareThreads ? *headroom - kSpareThreads + 1 : 0;
  return fmt::format(
      "{} asks for a pool of {} threads: with the harness's own that is {} more tasks, but this process may start only "
      "{} ({}); {}",
      source, pool_size, needed, *headroom, describe(l),
      largest ? fmt::format("set CUZK_THREADS={} or less", largest) : std::string("raise the limit"));
}

uint64_t reclaimable_file_bytes(const std::string& path, bool v1) {
  const std::string p = v1 ? "total_" : "";
  const uint64_t lru = memory_stat_field(path, p + "inactive_file").value_or(0) + memory_stat_field(path, p + "active_file").value_or(0);
  const uint64_t unclean = memory_stat_field(path, v1 ? "total_dirty" : "file_dirty").value_or(0) +
                           memory_stat_field(path, v1 ? "total_writeback" : "file_writeback").value_or(0);
  return lru - std::min(lru, unclean);
}

MemoryLimits read_memory_limits() {
  MemoryLimits l;
  l.mem_available = kib_field("/proc/meminfo", "MemAvailable");
  for (const std::string& dir : cgroup_levels("memory")) {
    // cgroup v2 names them memory.max / memory.current, v1 memory.limit_in_bytes / memory.usage_in_bytes.
    std::string file = dir + "/memory.max";
    auto max = read_number(file);
    auto cur = read_number(dir + "/memory.current");
    // Clean page cache is reclaimed before the cgroup runs out: a file just written (generated
    // parameters) on the inactive list, and one read since (the parameters each process of a
    // matrix loads) on the active list, which otherwise cut the next process's default budget by
    // the file's size. What remains is the working set.
    bool v1 = false;
    if (!max) {
      file = dir + "/memory.limit_in_bytes";
      max = read_number(file);
      cur = read_number(dir + "/memory.usage_in_bytes");
      v1 = true;
    }
    if (!max) continue;
    const uint64_t cache = reclaimable_file_bytes(dir + "/memory.stat", v1);
    const uint64_t used = cur.value_or(0) - std::min(cur.value_or(0), cache);
    if (!l.cgroup_limit ||
        *max - std::min(*max, used) < *l.cgroup_limit - std::min(*l.cgroup_limit, l.cgroup_usage)) {
      l.cgroup_limit = max;
      l.cgroup_usage = used;
      l.cgroup_file = file;
    }
  }
  rlimit r{};
  if (::getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) l.address_space = uint64_t(r.rlim_cur);
  l.vm_size = kib_field("/proc/self/status", "VmSize").value_or(0);
  return l;
}

std::optional<uint64_t> memory_headroom(const MemoryLimits& l) {
  std::optional<uint64_t> h = l.mem_available;
  auto take = [&](uint64_t v) { h = h ? std::min(*h, v) : v; };
  if (l.cgroup_limit) take(*l.cgroup_limit - std::min(*l.cgroup_limit, l.cgroup_usage));
  if (l.address_space) take(*l.address_space - std::min(*l.address_space, l.vm_size));
  return h;
}

std::string describe(const MemoryLimits& l) {
  std::vector<std::string> parts;
  if (l.mem_available) parts.push_back("MemAvailable " + format_bytes(*l.mem_available));
  if (l.cgroup_limit)
    parts.push_back(fmt::format("{} {} with {} in use", l.cgroup_file, format_bytes(*l.cgroup_limit),
                                format_bytes(l.cgroup_usage)));
  if (l.address_space)
    parts.push_back(fmt::format("ulimit -v {} with {} in use", format_bytes(*l.address_space), format_bytes(l.vm_size)));
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s.empty() ? "no limit known" : s;
}

std::string check_memory_request(uint64_t need, const std::string& what, const MemoryLimits& l) {
  const auto headroom = memory_headroom(l);
  if (!headroom || need <= *headroom) return {};
  return fmt::format("{} needs about {} (an estimate from the circuit's shape), more than this process may use: {} ({})",
                     what, format_bytes(need), format_bytes(*headroom), describe(l));
}

}  // namespace cuzk::limits
