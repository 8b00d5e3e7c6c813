#include "harness/measure/inject.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

#include "harness/measure/clock.hpp"
#include "harness/measure/sim_counters.hpp"

namespace cuzk::inject {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

struct EnvState {
  std::vector<Slowdown> entries;
  std::string error;  // non-empty when the variable is malformed
  std::string raw;
};

const EnvState& env_state() {
  static const EnvState st = [] {
    EnvState s;
    const char* v = std::getenv(kEnvVar);
    s.raw = v ? v : "";
    try {
      s.entries = parse_spec(s.raw);
    } catch (const InjectError& e) {
      s.error = e.what();
      s.entries.clear();
    }
    return s;
  }();
  return st;
}

std::once_flag g_notice;

void notice() {
  std::call_once(g_notice, [] {
    const auto& st = env_state();
    if (!st.entries.empty())
      std::fprintf(stderr, "cuzk-bench: note: %s=%s is active: calibration-only injected slowdown, not a real measurement\n",
                   kEnvVar, format_spec(st.entries).c_str());
  });
}

}  // namespace

std::vector<Slowdown> parse_spec(const std::string& spec) {
  std::vector<Slowdown> out;
  if (trim(spec).empty()) return out;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    const std::string entry = trim(spec.substr(start, comma - start));
    start = comma + 1;
    auto bad = [&](const std::string& why) {
      return InjectError(fmt::format("{}: entry \"{}\": {} (expected PHASE=PCT%[:gpu|:work], e.g. proof/prove/msm_h=20%)",
                                     kEnvVar, entry, why));
    };
    if (entry.empty()) throw bad("empty entry");
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) throw bad("no '='");
    Slowdown s;
    s.phase = trim(entry.substr(0, eq));
    std::string num = trim(entry.substr(eq + 1));
    if (s.phase.empty()) throw bad("empty phase path");
    if (s.phase.front() == '/' || s.phase.back() == '/' || s.phase.find("//") != std::string::npos ||
        s.phase.find_first_of(" \t=%") != std::string::npos)
      throw bad("malformed phase path");
    constexpr const char* kGpuSuffix = ":gpu";
    constexpr const char* kWorkSuffix = ":work";
    if (num.size() >= 4 && num.compare(num.size() - 4, 4, kGpuSuffix) == 0) {
      s.gpu = true;
      num = trim(num.substr(0, num.size() - 4));
    } else if (num.size() >= 5 && num.compare(num.size() - 5, 5, kWorkSuffix) == 0) {
      s.work = true;
      num = trim(num.substr(0, num.size() - 5));
    }
    if (num.find(':') != std::string::npos) throw bad("unknown suffix (known: :gpu, :work)");
    if (!num.empty() && num.back() == '%') num.pop_back();
    num = trim(num);
    if (num.empty()) throw bad("no percentage");
    errno = 0;
    char* end = nullptr;
    s.pct = std::strtod(num.c_str(), &end);
    if (errno != 0 || end == num.c_str() || *end != '\0' || !std::isfinite(s.pct)) throw bad("not a number");
    if (!(s.pct > 0) || s.pct > 1000) throw bad("percentage must be in (0, 1000]");
    if (!seen.insert(s.phase).second) throw bad("phase named twice");
    out.push_back(s);
    if (comma == spec.size()) break;
  }
  return out;
}

std::string format_spec(const std::vector<Slowdown>& s) {
  std::string out;
  for (const auto& e : s) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}={:g}%{}", e.phase, e.pct, e.gpu ? ":gpu" : e.work ? ":work" : "");
  }
  return out;
}

const std::vector<Slowdown>& from_env() {
  const auto& st = env_state();
  if (!st.error.empty()) throw InjectError(st.error);
  return st.entries;
}

void check_env() {
  from_env();
  notice();
}

bool active() {
  const auto& st = env_state();
  return st.error.empty() && !st.entries.empty();
}

nlohmann::json describe() {
  if (!active()) return nullptr;
  nlohmann::json j = {{"spec", format_spec(env_state().entries)}, {"slowdowns", nlohmann::json::array()}};
  for (const auto& e : env_state().entries) {
    nlohmann::json d = {{"phase", e.phase}, {"pct", e.pct}, {"metric", e.gpu ? "gpu_ns" : "wall_ns"}};
    // Planted work: pct % of the phase's simulated instructions under sim counters, else of its time.
    if (e.work) d["work"] = true;
    j["slowdowns"].push_back(d);
  }
  return j;
}

uint64_t spin_until(uint64_t until_ns) {
  uint64_t spins = 0;
  while (now_ns() < until_ns) ++spins;
  return spins;
}

uint64_t work_iterations_for_ns(uint64_t ns) {
  // Iterations per ns, from a run long enough (about a millisecond natively) to swamp the clock reads.
  static const double per_ns = [] {
    constexpr uint64_t kProbe = uint64_t(1) << 20;
    const uint64_t t0 = now_ns();
    static volatile uint64_t keep = 0;
    keep = keep + sim::planted_work(kProbe);
    const uint64_t dt = std::max<uint64_t>(now_ns() - t0, 1);
    return static_cast<double>(kProbe) / static_cast<double>(dt);
  }();
  return static_cast<uint64_t>(std::llround(static_cast<double>(ns) * per_ns));
}

uint64_t on_phase_end(const std::string& path, uint64_t t0_ns, InstructionsSoFar so_far, const void* ctx) {
  const auto& st = env_state();
  if (st.entries.empty()) return 0;  // the common case: one load and a branch
  for (const auto& e : st.entries) {
    if (e.phase != path || e.gpu) continue;
    notice();
    static volatile uint64_t sink = 0;
    if (e.work) {
      const int64_t instr = so_far ? so_far(ctx) : -1;
      uint64_t iterations = 0;
      if (instr >= 0) {
        const double planted = static_cast<double>(instr) * e.pct / 100.0;
        iterations = static_cast<uint64_t>(std::llround(planted / sim::kWorkInstructionsPerIteration));
      } else {
        const uint64_t t = now_ns();
        iterations = work_iterations_for_ns(static_cast<uint64_t>(
            std::llround(static_cast<double>(t > t0_ns ? t - t0_ns : 0) * e.pct / 100.0)));
      }
      sink = sink + sim::planted_work(iterations);
      return iterations * sim::kWorkInstructionsPerIteration;
    }
    const uint64_t t = now_ns();
    const uint64_t dur = t > t0_ns ? t - t0_ns : 0;
    const uint64_t extra = static_cast<uint64_t>(std::llround(static_cast<double>(dur) * e.pct / 100.0));
    sink = sink + spin_until(t + extra);
    return extra;
  }
  return 0;
}

uint64_t scale_gpu_time(const std::string& path, uint64_t gpu_ns) {
  const auto& st = env_state();
  if (st.entries.empty()) return gpu_ns;
  for (const auto& e : st.entries)
    if (e.gpu && e.phase == path) {
      notice();
      return static_cast<uint64_t>(std::llround(static_cast<double>(gpu_ns) * (1 + e.pct / 100.0)));
    }
  return gpu_ns;
}

}  // namespace cuzk::inject
