#include "prover/engine/fault.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace cuzk::fault {

namespace {

struct KindName {
  Kind kind;
  const char* name;
  bool count;  // the argument is a line count (else a phase)
};
constexpr KindName kKinds[] = {
    {Kind::kWriteEnospcAfter, "write_enospc_after", true}, {Kind::kWriteShortAfter, "write_short_after", true},
    {Kind::kWriteTornAfter, "write_torn_after", true},     {Kind::kHangIn, "hang_in", false},
    {Kind::kFailAt, "fail_at", false},                     {Kind::kCudaOomAt, "cuda_oom_at", false},
    {Kind::kCudaErrorAt, "cuda_error_at", false},
};
// Where the once-only failures can fire: the engine's stages, the CUDA backend's GPU phases
// (msm_b_g2 is one in CUZK_GPU_G2 builds only; elsewhere it runs on CPU threads and never fires).
constexpr const char* kStages[] = {"proof/synth", "proof/prove"};
constexpr const char* kCudaPhases[] = {"h2d", "ntt_h", "msm_h", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2"};

const char* name_of(Kind k) {
  for (const auto& n : kKinds)
    if (n.kind == k) return n.name;
  return "?";
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// "msm_h" matches "proof/prove/msm_h"; "proof/prove/msm_h" matches itself.
bool matches(const std::string& pattern, const std::string& path) {
  if (pattern == path) return true;
  return path.size() > pattern.size() && path.compare(path.size() - pattern.size(), pattern.size(), pattern) == 0 &&
         path[path.size() - pattern.size() - 1] == '/';
}

struct State {
  std::mutex mu;
  std::vector<Entry> entries;
  std::vector<bool> fired;  // per entry (once-only kinds)
  std::string error;        // non-empty when the variable is malformed
  std::atomic<bool> any{false}, hang{false};
  std::once_flag notice;

  void set(std::vector<Entry> e) {
    entries = std::move(e);
    fired.assign(entries.size(), false);
    bool h = false;
    for (const auto& x : entries) h |= x.kind == Kind::kHangIn;
    any = !entries.empty();
    hang = h;
  }
};

State& state() {
  static State* s = [] {
    auto* st = new State;  // never destroyed: hooks may run on threads during exit
    const char* v = std::getenv(kEnvVar);
    try {
      st->set(parse_spec(v ? v : ""));
    } catch (const FaultError& e) {
      st->error = e.what();
    }
    return st;
  }();
  return *s;
}

void notice() {
  State& st = state();
  std::call_once(st.notice, [&] {
    if (st.any)
      std::fprintf(stderr, "cuzk-bench: note: %s=%s is active: test-only fault injection\n", kEnvVar,
                   format_spec(st.entries).c_str());
  });
}

}  // namespace

std::vector<Entry> parse_spec(const std::string& spec) {
  std::vector<Entry> out;
  if (trim(spec).empty()) return out;
  size_t start = 0;
  for (;;) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    const std::string entry = trim(spec.substr(start, comma - start));
    auto bad = [&](const std::string& why) {
      return FaultError(fmt::format("{}: entry \"{}\": {} (expected e.g. write_enospc_after:3, hang_in:proof/synth, "
                                    "fail_at:proof/prove, cuda_oom_at:msm_h; docs/reliability.md)",
                                    kEnvVar, entry, why));
    };
    if (entry.empty()) throw bad("empty entry");
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) throw bad("no ':'");
    const std::string kind = trim(entry.substr(0, colon)), arg = trim(entry.substr(colon + 1));
    const KindName* k = nullptr;
    for (const auto& n : kKinds)
      if (kind == n.name) k = &n;
    if (!k) throw bad(fmt::format("unknown kind '{}'", kind));
    for (const auto& e : out)
      if (e.kind == k->kind) throw bad("kind named twice");
    Entry e{k->kind, "", 0};
    if (k->count) {
      errno = 0;
      char* end = nullptr;
      const unsigned long long n = std::strtoull(arg.c_str(), &end, 10);
      if (arg.empty() || arg[0] == '-' || errno != 0 || *end != '\0') throw bad("expected a line count (0 or more)");
      e.after = static_cast<size_t>(n);
    } else {
      if (arg.empty() || arg.front() == '/' || arg.back() == '/' || arg.find("//") != std::string::npos ||
          arg.find_first_of(" \t=:,") != std::string::npos)
        throw bad("expected a phase path");
      auto one_of = [&](auto& list) {
        for (const char* p : list)
          if (arg == p) return true;
        return false;
      };
      if (e.kind == Kind::kFailAt && !one_of(kStages)) throw bad("fail_at takes an engine stage: proof/synth or proof/prove");
      const bool cuda = e.kind == Kind::kCudaOomAt || e.kind == Kind::kCudaErrorAt;
      const std::string tail = arg.rfind("proof/prove/", 0) == 0 ? arg.substr(12) : arg;
      bool known = false;
      for (const char* c : kCudaPhases) known |= tail == c;
      if (cuda && !known) throw bad(fmt::format("a CUDA phase is one of {}", fmt::join(kCudaPhases, ", ")));
      e.phase = arg;
    }
    out.push_back(e);
    if (comma == spec.size()) break;
    start = comma + 1;
  }
  return out;
}

std::string format_spec(const std::vector<Entry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    if (!out.empty()) out += ',';
    out += std::string(name_of(e.kind)) + ":" + (e.phase.empty() ? std::to_string(e.after) : e.phase);
  }
  return out;
}

const std::vector<Entry>& from_env() {
  State& st = state();
  if (!st.error.empty()) throw FaultError(st.error);
  return st.entries;
}

void check_env() {
  from_env();
  notice();
}

bool active() { return state().any; }

nlohmann::json describe() {
  State& st = state();
  if (!st.any) return nullptr;
  std::lock_guard lk(st.mu);
  return {{"spec", format_spec(st.entries)}};
}

void set_for_testing(const std::string& spec) {
  auto parsed = parse_spec(spec);
  State& st = state();
  std::lock_guard lk(st.mu);
  st.error.clear();
  st.set(std::move(parsed));
}

WriteFault on_write(size_t lines_written) {
  State& st = state();
  if (!st.any) return WriteFault::kNone;
  std::lock_guard lk(st.mu);
  for (const auto& e : st.entries) {
    if (lines_written != e.after) continue;
    if (e.kind == Kind::kWriteEnospcAfter) return WriteFault::kEnospc;
    if (e.kind == Kind::kWriteShortAfter) return WriteFault::kShort;
    if (e.kind == Kind::kWriteTornAfter) return WriteFault::kTorn;
  }
  return WriteFault::kNone;
}

void hang_point(const std::string& path) {
  State& st = state();
  if (!st.hang) return;
  {
    std::lock_guard lk(st.mu);
    bool hit = false;
    for (const auto& e : st.entries) hit |= e.kind == Kind::kHangIn && matches(e.phase, path);
    if (!hit) return;
  }
  std::fprintf(stderr, "cuzk-bench: injected hang in %s (pid %d)\n", path.c_str(), int(::getpid()));
  std::fflush(stderr);
  for (;;) ::pause();  // only a signal (and its handler's exit) ends this
}

std::optional<Kind> fire(const std::string& path) {
  State& st = state();
  if (!st.any) return std::nullopt;
  std::lock_guard lk(st.mu);
  for (size_t i = 0; i < st.entries.size(); ++i) {
    const Entry& e = st.entries[i];
    if (e.kind != Kind::kFailAt && e.kind != Kind::kCudaOomAt && e.kind != Kind::kCudaErrorAt) continue;
    if (st.fired[i] || !matches(e.phase, path)) continue;
    st.fired[i] = true;
    return e.kind;
  }
  return std::nullopt;
}

void fail_point(const std::string& stage) {
  if (auto k = fire(stage); k && *k == Kind::kFailAt)
    throw InjectedFault(fmt::format("injected fault ({}=fail_at:{}): stage {} failed", kEnvVar, stage, stage));
}

}  // namespace cuzk::fault
