// Phase scopes through the Recorder: nesting, wall-clock timing against known sleeps,
// worker-thread phases under a parent path, GPU time, sample boundaries.
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "catch.hpp"
#include "harness/measure/recorder.hpp"
#include "prover/instr/phase.hpp"
#include "prover/util/thread_pool.hpp"

using cuzk::Recorder;
using cuzk::RecorderOptions;
using cuzk::instr::Phase;

namespace {
constexpr uint64_t kMs = 1'000'000;
// A sleep of S ms must measure within [S ms, S ms + kSlackMs]: sleeps never end early, and
// 15 ms covers scheduler wake-up latency on a loaded 2-core VM.
constexpr uint64_t kSlackMs = 15;

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

RecorderOptions plain() {
  RecorderOptions o;
  o.counters = {};
  o.enlist_global_pool = false;
  return o;
}
}  // namespace

TEST_CASE("nested phases compose slash paths and measure known sleeps within tolerance", "[phases]") {
  Recorder rec(plain());
  rec.install();
  {
    Phase proof("proof");
    CHECK(cuzk::instr::current_path() == "proof");
    {
      Phase synth("synth");
      CHECK(synth.path() == "proof/synth");
      sleep_ms(20);
    }
    {
      Phase prove("prove");
      {
        Phase msm("msm_h");
        CHECK(msm.path() == "proof/prove/msm_h");
        sleep_ms(10);
      }
      {
        Phase msm("msm_h");  // a second occurrence in the same sample
        sleep_ms(10);
      }
    }
    CHECK(cuzk::instr::current_path() == "proof");
  }
  CHECK(cuzk::instr::current_path().empty());
  auto s = rec.take_sample();
  rec.uninstall();

  REQUIRE(s.phases.count("proof") == 1);
  REQUIRE(s.phases.count("proof/synth") == 1);
  REQUIRE(s.phases.count("proof/prove") == 1);
  REQUIRE(s.phases.count("proof/prove/msm_h") == 1);
  CHECK(s.phases.size() == 4);

  const auto& synth = s.phases["proof/synth"];
  INFO("proof/synth wall_ns = " << synth.wall_ns);
  CHECK(synth.count == 1);
  CHECK(synth.wall_ns >= 20 * kMs);
  CHECK(synth.wall_ns <= (20 + kSlackMs) * kMs);

  const auto& msm = s.phases["proof/prove/msm_h"];
  INFO("proof/prove/msm_h wall_ns = " << msm.wall_ns);
  CHECK(msm.count == 2);  // wall_ns is the sum of both occurrences
  CHECK(msm.wall_ns >= 20 * kMs);
  CHECK(msm.wall_ns <= (20 + 2 * kSlackMs) * kMs);

  // A parent covers its children.
  CHECK(s.phases["proof/prove"].wall_ns >= msm.wall_ns);
  CHECK(s.phases["proof"].wall_ns >= synth.wall_ns + s.phases["proof/prove"].wall_ns);
  CHECK(s.phases["proof"].wall_ns <= (40 + 3 * kSlackMs) * kMs);
  CHECK_FALSE(s.phases["proof"].gpu_ns.has_value());
  CHECK(s.phases["proof"].counters.empty());

  // Spans nest in time: each child span lies inside its parent's span.
  REQUIRE(s.spans.size() == 5);
  const cuzk::Span* proof = nullptr;
  for (const auto& sp : s.spans)
    if (sp.path == "proof") proof = &sp;
  REQUIRE(proof != nullptr);
  for (const auto& sp : s.spans) {
    INFO(sp.path);
    CHECK(sp.start_ns >= proof->start_ns);
    CHECK(sp.start_ns + int64_t(sp.dur_ns) <= proof->start_ns + int64_t(proof->dur_ns));
  }
}

TEST_CASE("absolute names and phases without a sink", "[phases]") {
  REQUIRE(cuzk::instr::sink() == nullptr);
  Phase a("proof");
  Phase b("/other/x");
  CHECK(b.path() == "other/x");
  CHECK(cuzk::instr::current_path() == "other/x");
}

TEST_CASE("worker-thread phases nest under the parent path and are counted per occurrence", "[phases]") {
  cuzk::ThreadPool pool(3);
  Recorder rec(plain());
  rec.install();
  {
    Phase proof("proof");
    Phase synth("synth");
    const std::string parent = cuzk::instr::current_path();
    std::atomic<int> started{0};
    // Catch2's assertions are not thread-safe (ThreadSanitizer reported a CHECK on a worker
    // racing with the main thread's): workers count, the main thread checks.
    std::atomic<int> nested_in_own_phase{0};
    pool.parallel_for(
        6,
        [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) {
            if (cuzk::instr::current_path() == "proof/synth/partition") ++nested_in_own_phase;
            Phase part("partition", parent);
            // No chunk finishes before two have started: at least two threads take part,
            // however busy the machine is.
            started++;
            auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
            sleep_ms(5);
          }
        },
        6);
    CHECK(nested_in_own_phase.load() == 0);  // a worker starts outside any partition of its own
  }
  auto s = rec.take_sample();
  rec.uninstall();
  REQUIRE(s.phases.count("proof/synth/partition") == 1);
  const auto& part = s.phases["proof/synth/partition"];
  CHECK(part.count == 6);
  CHECK(part.wall_ns >= 6 * 5 * kMs);
  std::set<uint64_t> tids;
  for (const auto& sp : s.spans)
    if (sp.path == "proof/synth/partition") tids.insert(sp.tid);
  INFO("distinct threads running partitions: " << tids.size());
  CHECK(tids.size() >= 2);  // the pool's workers took part
}

TEST_CASE("GPU time is attached to the phase it names", "[phases]") {
  Recorder rec(plain());
  rec.install();
  {
    Phase proof("proof");
    Phase prove("prove");
  }
  cuzk::instr::report_gpu_time("proof/prove", 1234);
  cuzk::instr::report_gpu_time("proof/prove", 1000);
  auto s = rec.take_sample();
  rec.uninstall();
  REQUIRE(s.phases["proof/prove"].gpu_ns.has_value());
  CHECK(*s.phases["proof/prove"].gpu_ns == 2234);
  CHECK_FALSE(s.phases["proof"].gpu_ns.has_value());
}

TEST_CASE("take_sample starts a new sample", "[phases]") {
  Recorder rec(plain());
  rec.install();
  { Phase p("first"); }
  auto a = rec.take_sample();
  { Phase p("second"); }
  auto b = rec.take_sample();
  rec.uninstall();
  CHECK(a.phases.count("first") == 1);
  CHECK(a.phases.count("second") == 0);
  CHECK(b.phases.count("first") == 0);
  CHECK(b.phases.count("second") == 1);
  CHECK(cuzk::instr::sink() == nullptr);
}

TEST_CASE("spans beyond max_spans are dropped and counted", "[phases]") {
  RecorderOptions o = plain();
  o.max_spans = 3;
  Recorder rec(o);
  rec.install();
  for (int i = 0; i < 5; ++i) Phase p("x");
  auto s = rec.take_sample();
  rec.uninstall();
  CHECK(s.phases["x"].count == 5);
  CHECK(s.spans.size() == 3);
  CHECK(s.spans_dropped == 2);
}
