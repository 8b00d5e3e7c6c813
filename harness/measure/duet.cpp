// Duet runs: CPU halves, the member's barrier and the driver's pair of processes (duet.hpp).
#include "harness/measure/duet.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

#include "harness/measure/clock.hpp"
#include "harness/measure/interrupt.hpp"
#include "prover/util/cpu_placement.hpp"

namespace cuzk::duet {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// How often a waiting member or the driver looks at the barrier folder: the two sides' release
// differs by about this much, small beside any measured sample.
constexpr auto kDuetPoll = std::chrono::microseconds(200);

// (package, core) of a CPU from sysfs; nullopt where the topology is not readable.
std::optional<std::pair<int, int>> core_of(int cpu) {
  const std::string base = fmt::format("/sys/devices/system/cpu/cpu{}/topology/", cpu);
  std::ifstream pk(base + "physical_package_id"), co(base + "core_id");
  int p = 0, c = 0;
  if (!(pk >> p) || !(co >> c)) return std::nullopt;
  return std::make_pair(p, c);
}

bool file_exists(const std::string& p) { return ::access(p.c_str(), F_OK) == 0; }

void touch(const std::string& p, const std::string& text = "") {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("duet barrier: cannot create {}", p));
  if (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    (void)n;
  }
  ::close(fd);
}

std::string slurp_file(const std::string& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::vector<int> parse_cpu_list(const std::string& s) {
  std::vector<int> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    const std::string item = s.substr(i, j - i);
    const size_t dash = item.find('-');
    const int lo = std::stoi(item.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(item.substr(dash + 1));
    for (int c = lo; c <= hi; ++c) out.push_back(c);
    i = j + 1;
  }
  return out;
}

}  // namespace

Halves split_halves(const std::vector<int>& allowed) {
  if (allowed.size() < 2)
    throw std::invalid_argument(fmt::format(
        "--duet needs at least 2 CPUs (one per side); this process may run on {} only ({})", allowed.size(),
        allowed.empty() ? std::string("none") : placement::cpu_list(allowed)));
  // CPUs grouped by core, cores in the order of their lowest CPU.
  std::map<std::pair<int, int>, std::vector<int>> cores;
  bool topology = true;
  for (int c : allowed) {
    auto k = core_of(c);
    if (!k) {
      topology = false;
      break;
    }
    cores[*k].push_back(c);
  }
  std::vector<std::vector<int>> groups;
  if (topology && cores.size() >= 2) {
    for (auto& [k, v] : cores) groups.push_back(v);
    std::sort(groups.begin(), groups.end(), [](auto& x, auto& y) { return x.front() < y.front(); });
  } else {
    for (int c : allowed) groups.push_back({c});
  }
  Halves h;
  h.by_core = topology && cores.size() >= 2;
  const size_t half = groups.size() / 2;
  for (size_t i = 0; i < groups.size(); ++i) {
    auto& dst = i < half ? h.first : i < 2 * half ? h.second : h.unused;
    dst.insert(dst.end(), groups[i].begin(), groups[i].end());
  }
  // Cores of unequal sizes (a core with one CPU allowed): equal CPU counts matter more than
  // whole cores, so trim the larger half.
  while (h.first.size() > h.second.size()) h.unused.push_back(h.first.back()), h.first.pop_back();
  while (h.second.size() > h.first.size()) h.unused.push_back(h.second.back()), h.second.pop_back();
  std::sort(h.unused.begin(), h.unused.end());
  return h;
}

const std::vector<int>& side_cpus(const Halves& h, int round, int side) {
  const bool a_first = round % 2 == 0;
  return (side == 0) == a_first ? h.first : h.second;
}

json describe(const Halves& h) {
  std::vector<int> all = h.first;
  all.insert(all.end(), h.second.begin(), h.second.end());
  all.insert(all.end(), h.unused.begin(), h.unused.end());
  std::sort(all.begin(), all.end());
  return {{"cpus", all}, {"first", h.first}, {"second", h.second}, {"unused", h.unused}, {"by_core", h.by_core},
          {"swap", "A on the first half in even rounds, on the second in odd rounds"},
          {"note", relative_note(h)}};
}

std::string relative_note(const Halves& h) {
  return fmt::format(
      "duet: A and B ran at the same time, each on {} of the {} CPUs ({} / {}, swapped every round); the ratio answers "
      "a relative question at half the cores per side, not either variant's time on the whole machine",
      h.first.size(), h.first.size() + h.second.size() + h.unused.size(), placement::cpu_list(h.first),
      placement::cpu_list(h.second));
}

// ---- member ----

std::unique_ptr<Member> Member::from_env() {
  const char* dir = std::getenv(kBarrierEnv);
  if (!dir || !*dir) return nullptr;
  auto m = std::make_unique<Member>();
  m->dir_ = dir;
  const char* side = std::getenv(kSideEnv);
  m->side_ = side ? side : "";
  if (m->side_ != "a" && m->side_ != "b")
    throw std::invalid_argument(fmt::format("{} must be a or b (got \"{}\")", kSideEnv, m->side_));
  if (!fs::is_directory(m->dir_))
    throw std::invalid_argument(fmt::format("{}={}: not a folder", kBarrierEnv, m->dir_));
  auto num = [](const char* name, double fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    try {
      size_t used = 0;
      const double d = std::stod(v, &used);
      if (used == std::string(v).size() && d >= 0) return d;
    } catch (const std::exception&) {
    }
    throw std::invalid_argument(fmt::format("{}={}: expected a number, 0 or more", name, v));
  };
  m->round_ = static_cast<int>(num(kRoundEnv, -1));
  m->parent_ = static_cast<long>(num(kParentEnv, 0));
  m->timeout_s_ = num(kTimeoutEnv, 0);
  const char* cpus = std::getenv(kCpusEnv);
  m->cpus_assigned_ = cpus ? cpus : "";
  return m;
}

json Member::header() const {
  json assigned = json::array();
  try {
    assigned = parse_cpu_list(cpus_assigned_);
  } catch (const std::exception&) {
    assigned = cpus_assigned_;  // recorded as given
  }
  const char* threads = std::getenv("CUZK_THREADS");
  return {{"side", side_},
          {"round", round_ < 0 ? json(nullptr) : json(round_)},
          {"cpus_assigned", assigned},
          {"cpus", placement::allowed_cpus()},
          {"threads", threads ? json(std::string(threads)) : json(nullptr)},
          {"barrier", "every measured sample, warm-ups included"},
          {"clock", "CLOCK_MONOTONIC"}};
}

void Member::arrive_and_wait() {
  const int n = seq_++;
  touch(fmt::format("{}/ready-{}-{}", dir_, n, side_));
  const std::string go = fmt::format("{}/go-{}", dir_, n), abort_file = dir_ + "/abort";
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    if (file_exists(go)) return;
    if (file_exists(abort_file))
      throw std::runtime_error(fmt::format("duet: side {} stopped at sample {}: {}", side_, n, slurp_file(abort_file)));
    interrupt::check();
    if (parent_ > 0 && ::kill(static_cast<pid_t>(parent_), 0) != 0 && errno == ESRCH)
      throw std::runtime_error(fmt::format("duet: side {} stopped at sample {}: its driver (pid {}) is gone", side_, n,
                                           parent_));
    if (timeout_s_ > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s_)
      throw std::runtime_error(fmt::format("duet: side {} waited {:g} s at sample {} for its partner: gave up", side_,
                                           timeout_s_, n));
    std::this_thread::sleep_for(kDuetPoll);
  }
}

json Member::sample_fields(uint64_t start_ns, uint64_t end_ns) const {
  return {{"side", side_},
          {"round", round_ < 0 ? json(nullptr) : json(round_)},
          {"sequence", seq_ - 1},
          {"start_ns", start_ns},
          {"end_ns", end_ns}};
}

// ---- driver ----

PairResult run_pair(const std::string& barrier_dir, const std::array<PairSide, 2>& sides, int round, double timeout_s) {
  fs::remove_all(barrier_dir);
  fs::create_directories(barrier_dir);
  PairResult r;
  std::array<std::atomic<bool>, 2> done{};
  std::array<std::thread, 2> threads;
  for (int v = 0; v < 2; ++v) {
    const char* side = v == 0 ? "a" : "b";
    std::string cmd = fmt::format("{}={} {}={} {}={} {}={} CUZK_THREADS={} {}={} ", kBarrierEnv, shell_quote(barrier_dir),
                                  kSideEnv, side, kCpusEnv, placement::cpu_list(sides[v].cpus), kRoundEnv, round,
                                  sides[v].cpus.size(), kParentEnv, ::getpid());
    if (timeout_s > 0) cmd += fmt::format("{}={:g} ", kTimeoutEnv, timeout_s);
    cmd += sides[v].command;
    ChildOptions co;
    co.timeout_s = timeout_s;
    co.cpus = sides[v].cpus;
    threads[v] = std::thread([&r, &done, v, cmd, co] {
      r.child[v] = run_child(cmd, co);
      done[v].store(true, std::memory_order_release);
    });
  }
  int n = 0;
  bool aborted = false;
  while (!(done[0].load(std::memory_order_acquire) && done[1].load(std::memory_order_acquire))) {
    if (!aborted && (done[0].load(std::memory_order_acquire) || done[1].load(std::memory_order_acquire))) {
      const int gone = done[0].load(std::memory_order_acquire) ? 0 : 1;
      const std::string why = r.child[gone].failure();
      r.abort_reason = fmt::format("its partner (side {}) ended{}", gone == 0 ? "a" : "b", why.empty() ? "" : " (" + why + ")");
      touch(barrier_dir + "/abort", r.abort_reason);
      aborted = true;
      continue;
    }
    if (!aborted && file_exists(fmt::format("{}/ready-{}-a", barrier_dir, n)) &&
        file_exists(fmt::format("{}/ready-{}-b", barrier_dir, n))) {
      touch(fmt::format("{}/go-{}", barrier_dir, n));
      ++n;
      continue;
    }
    std::this_thread::sleep_for(kDuetPoll);
  }
  for (auto& t : threads) t.join();
  r.released = n;
  std::error_code ec;
  fs::remove_all(barrier_dir, ec);
  // An abort the survivor never reached (it had finished its last sample) is no failure.
  if (r.child[0].code == 0 && r.child[1].code == 0) r.abort_reason.clear();
  return r;
}

}  // namespace cuzk::duet
