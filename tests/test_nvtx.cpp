// NVTX ranges are really emitted: a test injection library (tests/nvtx_inject) records the
// NVTX calls; a phased workload runs through the Recorder; names, domain and nesting are
// checked. NVTX reads NVTX_INJECTION64_PATH at the first NVTX call of the process, so this
// binary sets it (ctest sets it too) before any phase runs.
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/measure/nvtx.hpp"
#include "harness/measure/recorder.hpp"
#include "prover/instr/phase.hpp"
#include "prover/util/thread_pool.hpp"

using cuzk::instr::Phase;

#if CUZK_HAVE_NVTX

namespace {

struct Event {
  std::string kind, domain, tid, rest;
};

std::vector<Event> injected_events() {
  const char* lib = std::getenv("NVTX_INJECTION64_PATH");
  REQUIRE(lib != nullptr);
  void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  INFO("injection library " << lib << " is not loaded: NVTX did not inject it (" << (dlerror() ? "" : "") << ")");
  REQUIRE(h != nullptr);
  using Fn = char* (*)();
  auto fn = reinterpret_cast<Fn>(dlsym(h, "cuzk_nvtx_inject_events"));
  REQUIRE(fn != nullptr);
  char* text = fn();
  REQUIRE(text != nullptr);
  std::vector<Event> out;
  std::istringstream in(text);
  std::free(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    Event e;
    ls >> e.kind;
    if (e.kind == "push" || e.kind == "pop") {
      ls >> e.domain >> e.tid;
      std::getline(ls, e.rest);
      if (!e.rest.empty() && e.rest[0] == ' ') e.rest.erase(0, 1);
    } else {
      std::getline(ls, e.rest);
      if (!e.rest.empty() && e.rest[0] == ' ') e.rest.erase(0, 1);
    }
    out.push_back(e);
  }
  dlclose(h);
  return out;
}

// Per thread, replays push/pop of domain "cuzk" and returns the nesting seen at each push:
// "parent > child". Fails on a pop without a push or a range left open.
std::vector<std::string> nesting(const std::vector<Event>& ev, std::map<std::string, int>* pushes_per_thread) {
  std::map<std::string, std::vector<std::string>> stacks;
  std::vector<std::string> seen;
  for (const auto& e : ev) {
    if (e.domain != "cuzk") continue;
    auto& st = stacks[e.tid];
    if (e.kind == "push") {
      seen.push_back((st.empty() ? std::string("(top)") : st.back()) + " > " + e.rest);
      st.push_back(e.rest);
      if (pushes_per_thread) (*pushes_per_thread)[e.tid]++;
    } else if (e.kind == "pop") {
      INFO("pop without push on thread " << e.tid);
      REQUIRE_FALSE(st.empty());
      st.pop_back();
    }
  }
  for (auto& [tid, st] : stacks) {
    INFO("thread " << tid << " left " << st.size() << " range(s) open");
    CHECK(st.empty());
  }
  return seen;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

// Runs before main's first NVTX call (static initialization of this test binary).
const bool g_env_set = [] {
#ifdef CUZK_NVTX_INJECT_LIB
  setenv("NVTX_INJECTION64_PATH", CUZK_NVTX_INJECT_LIB, 0);
#endif
  return true;
}();

}  // namespace

TEST_CASE("phases emit NVTX push/pop ranges in domain cuzk with the phase path, nested", "[nvtx]") {
  REQUIRE(g_env_set);
  cuzk::ThreadPool pool(2);
  cuzk::RecorderOptions o;
  o.enlist_global_pool = false;
  cuzk::Recorder rec(o);
  rec.install();
  {
    Phase proof("proof");
    { Phase synth("synth"); }
    {
      Phase prove("prove");
      { Phase msm("msm_h"); }
      const std::string parent = cuzk::instr::current_path();
      pool.submit([parent] { Phase g2("msm_b_g2", parent); }).get();
    }
  }
  rec.take_sample();
  rec.uninstall();

  auto ev = injected_events();
  REQUIRE_FALSE(ev.empty());
  CHECK(ev.front().kind == "initialized");
  bool created = false;
  for (const auto& e : ev)
    if (e.kind == "create" && e.rest == "cuzk") created = true;
  CHECK(created);

  std::map<std::string, int> per_thread;
  auto seen = nesting(ev, &per_thread);
  for (const auto& s : seen) INFO(s);
  CHECK(contains(seen, "(top) > proof"));
  CHECK(contains(seen, "proof > proof/synth"));
  CHECK(contains(seen, "proof > proof/prove"));
  CHECK(contains(seen, "proof/prove > proof/prove/msm_h"));
  // The worker's phase is its own thread's top-level range, named with the full path.
  CHECK(contains(seen, "(top) > proof/prove/msm_b_g2"));
  CHECK(per_thread.size() == 2);
  CHECK(seen.size() == 5);
}

TEST_CASE("a Recorder with nvtx disabled emits no ranges", "[nvtx]") {
  size_t before = 0;
  for (const auto& e : injected_events())
    if (e.kind == "push") ++before;
  cuzk::RecorderOptions o;
  o.enlist_global_pool = false;
  o.nvtx = false;
  cuzk::Recorder rec(o);
  rec.install();
  { Phase p("quiet"); }
  rec.uninstall();
  size_t after = 0;
  for (const auto& e : injected_events())
    if (e.kind == "push") ++after;
  CHECK(after == before);
}

TEST_CASE("start/end ranges can close on another thread", "[nvtx]") {
  uint64_t id = cuzk::nvtx::start("cross/thread");
  std::thread([id] { cuzk::nvtx::end(id); }).join();
  bool started = false, ended = false;
  std::string start_tid, end_tid;
  for (const auto& e : injected_events()) {
    if (e.kind == "start" && e.rest.find("cross/thread") != std::string::npos) started = true;
    if (e.kind == "end" && e.rest.size() >= std::to_string(id).size() &&
        e.rest.compare(e.rest.size() - std::to_string(id).size(), std::string::npos, std::to_string(id)) == 0)
      ended = true;
  }
  CHECK(started);
  CHECK(ended);
}

#else

TEST_CASE("NVTX compiled out", "[nvtx]") {
  WARN("SKIPPED: built with CUZK_NVTX=OFF (or without NVTX3 headers): no ranges to check");
  // The compiled-out functions still exist and do nothing.
  cuzk::nvtx::push("x");
  cuzk::nvtx::pop();
  CHECK(cuzk::nvtx::start("x") == 0);
  CHECK_FALSE(cuzk::nvtx::kCompiledIn);
}

#endif
