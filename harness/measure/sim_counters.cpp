#include "harness/measure/sim_counters.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

// Valgrind's client-request headers (Debian: the valgrind package). Without them no process can
// tell it runs under Valgrind, so every sim counter is unavailable with that reason.
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>
#define CUZK_HAVE_VALGRIND_H 1
#else
#define CUZK_HAVE_VALGRIND_H 0
#endif

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "prover/ff/fp_ifma.hpp"
#include "prover/ff/mont.hpp"

namespace cuzk::sim {

const std::vector<Info>& all() {
  static const std::vector<Info> v = {
      {"sim::instructions", "instructions", "Ir", false, "instructions executed (all threads)"},
      {"sim::l1_misses", "misses", "I1mr+D1mr+D1mw", true, "first-level instruction and data cache misses (reads and writes)"},
      {"sim::ll_misses", "misses", "ILmr+DLmr+DLmw", true, "last-level cache misses (instruction fetches, data reads and writes)"},
      {"sim::branch_mispredicts", "mispredicts", "Bcm+Bim", true, "conditional and indirect branch mispredictions"},
  };
  return v;
}

bool is_sim_name(const std::string& name) { return name.rfind(kPrefix, 0) == 0; }

const Info* find(const std::string& name) {
  for (const auto& i : all())
    if (name == i.name) return &i;
  return nullptr;
}

std::vector<std::string> keyword_names(bool cache_sim) {
  std::vector<std::string> v;
  for (const auto& i : all())
    if (cache_sim || !i.needs_cache_sim) v.push_back(i.name);
  return v;
}

std::vector<std::string> expand_keyword(const std::vector<std::string>& names, bool cache_sim) {
  std::vector<std::string> out;
  auto add = [&](const std::string& n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (const auto& n : names) {
    if (n == kKeyword) {
      for (const auto& k : keyword_names(cache_sim)) add(k);
    } else {
      add(n);
    }
  }
  return out;
}

bool any_sim(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const std::string& n) { return n == kKeyword || is_sim_name(n); });
}

bool under_valgrind() {
#if CUZK_HAVE_VALGRIND_H
  return RUNNING_ON_VALGRIND != 0;
#else
  return false;
#endif
}

std::string arithmetic_path() {
#if CUZK_USE_ADX
  std::string s = cpu_has_adx() ? "Fp/Fr: BMI2+ADX assembly" : "Fp/Fr: portable C++ (CPUID: no BMI2+ADX)";
#else
  std::string s = "Fp/Fr: portable C++ (built without the ADX path)";
#endif
  s += cpu_has_ifma() ? "; MSM batch additions: AVX-512 IFMA" : "; MSM batch additions: scalar (no AVX-512 IFMA)";
  return s;
}

namespace {

std::string trim_dump_field(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool dump_key(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

bool parse_dump(const std::string& text, Dump& out, std::string& error) {
  std::istringstream in(text);
  std::string line, summary, totals;
  while (std::getline(in, line)) {
    if (dump_key(line, "events:")) {
      std::istringstream ev(line.substr(7));
      out.events.clear();
      for (std::string e; ev >> e;) out.events.push_back(e);
    } else if (dump_key(line, "summary:")) {
      summary = line.substr(8);
    } else if (dump_key(line, "totals:")) {
      totals = line.substr(7);
    } else if (dump_key(line, "creator:")) {
      const std::string c = trim_dump_field(line.substr(8));
      const size_t dash = c.rfind('-');
      out.version = dash == std::string::npos ? c : c.substr(dash + 1);
    } else if (dump_key(line, "desc: I1 cache:")) {
      out.i1 = trim_dump_field(line.substr(15));
    } else if (dump_key(line, "desc: D1 cache:")) {
      out.d1 = trim_dump_field(line.substr(15));
    } else if (dump_key(line, "desc: LL cache:")) {
      out.ll = trim_dump_field(line.substr(15));
    }
    if (!out.events.empty() && !summary.empty()) break;  // the header is all the reader needs
  }
  if (out.events.empty()) {
    error = "no 'events:' line";
    return false;
  }
  const std::string& costs = summary.empty() ? totals : summary;
  if (costs.empty()) {
    error = "no 'summary:' or 'totals:' line";
    return false;
  }
  std::istringstream cs(costs);
  out.costs.clear();
  for (long long v; cs >> v;) out.costs.push_back(v);
  // Callgrind omits trailing zero costs; a line with more values than events is malformed.
  if (out.costs.size() > out.events.size()) {
    error = fmt::format("{} costs for {} events", out.costs.size(), out.events.size());
    return false;
  }
  out.costs.resize(out.events.size(), 0);
  return true;
}

uint64_t planted_work(uint64_t iterations) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  if (iterations == 0) return x;
#if defined(__x86_64__)
  // Exactly kWorkInstructionsPerIteration instructions per iteration (imul, add, dec, jnz), a
  // serial chain through x, so neither the compiler nor the CPU can skip or overlap it away.
  uint64_t n = iterations;
  asm volatile(
      "1:\n\t"
      "imulq %[x], %[x]\n\t"
      "addq $0x2b, %[x]\n\t"
      "decq %[n]\n\t"
      "jnz 1b"
      : [x] "+r"(x), [n] "+r"(n)
      :
      : "cc");
#else
  for (uint64_t i = 0; i < iterations; ++i) {
    x = x * x + 0x2b;
    asm volatile("" : "+r"(x));
  }
#endif
  return x;
}

struct Reader::State {
  std::string out;       // callgrind's --callgrind-out-file
  bool cache_sim = false;
  std::mutex mu;
  uint64_t part = 0;     // dumps requested so far
  std::map<std::string, int64_t> totals;  // per callgrind event, over every dump read
  Dump first;            // the first dump's header (version, caches)
  bool have_first = false;
};

Reader::Reader(const std::vector<std::string>& names) : names_(names), st_(std::make_unique<State>()) {
  error_.resize(names.size());
  std::string why;
  const char* out = std::getenv(kOutEnv);
  const char* cache = std::getenv(kCacheSimEnv);
  st_->cache_sim = cache && std::string(cache) == "1";
  if (!under_valgrind()) {
    why = "not running under Valgrind (--counters sim runs cuzk-bench under valgrind --tool=callgrind; docs/counters.md)";
  } else if (!out || !*out) {
    why = fmt::format("${} is not set: run through cuzk-bench --counters sim, which starts callgrind and names its dumps",
                      kOutEnv);
  } else {
    st_->out = out;
  }
  for (size_t i = 0; i < names_.size(); ++i) {
    const Info* info = find(names_[i]);
    if (!info) error_[i] = "not a sim counter name";
    else if (!why.empty()) error_[i] = why;
    else if (info->needs_cache_sim && !st_->cache_sim)
      error_[i] = "needs Valgrind's cache and branch simulation: add --cache-sim";
  }
  if (std::any_of(error_.begin(), error_.end(), [](const std::string& e) { return e.empty(); })) {
    std::vector<int64_t> v;
    std::string err;
    if (!read(v, err)) {
      for (auto& e : error_)
        if (e.empty()) e = "callgrind dump unreadable: " + err;
    }
  }
}

Reader::~Reader() = default;

namespace {

// The dump callgrind wrote for request number `part`: `<out>.<part>`; read and removed.
bool take_dump(const std::string& out, uint64_t part, std::string& text, std::string& error) {
  const std::string path = fmt::format("{}.{}", out, part);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = fmt::format("{}: no callgrind dump after the request (was --callgrind-out-file changed?)", path);
    return false;
  }
  // The header holds every line the reader needs; its cost lines follow and are skipped.
  text.assign(8192, '\0');
  ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  ::close(fd);
  ::unlink(path.c_str());
  if (n < 0) {
    error = fmt::format("{}: read failed", path);
    return false;
  }
  text.resize(static_cast<size_t>(n));
  return true;
}

}  // namespace

bool Reader::read(std::vector<int64_t>& out, std::string& error) {
  out.clear();
  if (st_->out.empty()) return true;
  std::lock_guard lk(st_->mu);
#if CUZK_HAVE_VALGRIND_H
  CALLGRIND_DUMP_STATS_AT("cuzk phase boundary");
#endif
  const uint64_t part = ++st_->part;
  std::string text;
  Dump d;
  if (!take_dump(st_->out, part, text, error)) return false;
  if (!parse_dump(text, d, error)) {
    error = fmt::format("{}.{}: {}", st_->out, part, error);
    return false;
  }
  for (size_t i = 0; i < d.events.size(); ++i) st_->totals[d.events[i]] += d.costs[i];
  if (!st_->have_first) {
    st_->first = d;
    st_->have_first = true;
  }
  auto ev = [&](const char* e) {
    auto it = st_->totals.find(e);
    return it == st_->totals.end() ? int64_t(0) : it->second;
  };
  for (size_t i = 0; i < names_.size(); ++i) {
    if (!available(i)) continue;
    const std::string sum = find(names_[i])->events;
    int64_t v = 0;
    size_t pos = 0;
    for (;;) {
      const size_t plus = sum.find('+', pos);
      v += ev(sum.substr(pos, plus == std::string::npos ? std::string::npos : plus - pos).c_str());
      if (plus == std::string::npos) break;
      pos = plus + 1;
    }
    out.push_back(v);
  }
  return true;
}

nlohmann::json Reader::header() const {
  nlohmann::json caches = nullptr;
  if (st_->have_first && !st_->first.i1.empty())
    caches = {{"I1", st_->first.i1}, {"D1", st_->first.d1}, {"LL", st_->first.ll}};
  const char* native = std::getenv(kNativePathEnv);
  nlohmann::json j = {
      {"tool", "callgrind"},
      {"valgrind", st_->have_first ? nlohmann::json(st_->first.version) : nlohmann::json(nullptr)},
      {"cache_sim", st_->cache_sim},
      {"caches", caches},
      {"arithmetic_path", arithmetic_path()},
      {"native_arithmetic_path", native && *native ? nlohmann::json(native) : nlohmann::json(nullptr)},
      {"wall_times", "simulated: measured under Valgrind, not comparable with native runs"},
  };
  const char* threads = std::getenv("CUZK_THREADS");
  const char* set = std::getenv(kThreadsSetEnv);
  j["cuzk_threads"] = threads ? nlohmann::json(threads) : nlohmann::json(nullptr);
  j["cuzk_threads_set_by"] = set && std::string(set) == "1" ? "cuzk-bench --counters sim (reproducible counts)"
                             : threads                      ? "user"
                                                            : "nobody (the pool has one thread per core)";
  if (!native || !*native)
    j["note"] = "native arithmetic path unknown (set by cuzk-bench --counters sim when it starts Valgrind)";
  else if (arithmetic_path() != native)
    j["note"] = "Valgrind's CPUID hides ISA extensions it cannot run: the field arithmetic took another path than a "
                "native run would; synthesis and harness code run the same instructions (docs/counters.md)";
  return j;
}

}  // namespace cuzk::sim
