// `cuzk-bench selfmeasure`: the harness measuring itself on a synthetic phased workload with
// known durations, until the prover exists. It records through the Recorder (wall clock,
// counters, NVTX, spans) and writes a results file: header, one sample per repetition,
// summary. Then it prints a per-phase table.
//
// Workload of one repetition (phase paths as in docs/architecture.md):
//   proof/srs_load        sleep 2 ms
//   proof/synth           CPU work on the thread pool, one proof/synth/partition phase per chunk
//   proof/prove/h2d       touch --touch-mib MiB of fresh pages (mmap, write each page, munmap)
//   proof/prove/ntt_h     sleep 10 ms
//   proof/prove/msm_b_g2  sleep 8 ms on a pool worker, concurrently with msm_h and msm_l
//   proof/prove/msm_h     sleep 4 ms
//   proof/prove/msm_l     sleep 3 ms
//   proof/prove/assemble  sleep 1 ms
#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/cli/commands.hpp"
#include "harness/measure/clock.hpp"
#include "harness/measure/counters.hpp"
#include "harness/measure/recorder.hpp"
#include "harness/measure/results.hpp"
#include "harness/measure/session.hpp"
#include "prover/instr/phase.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk::cli {
namespace {

using instr::Phase;
using nlohmann::json;

struct Options {
  int reps = 5;
  int warmup_runs = 1;
  std::string out;
  bool force = false;
  std::optional<std::string> counters;
  int touch_mib = 64;
  uint64_t synth_iters = 4'000'000;  // multiply-xorshift steps per partition chunk
  bool spans = true;
};

const std::vector<std::string> kDefaultCounters = {"perf::PAGE-FAULTS", "perf::TASK-CLOCK", "PAPI_TOT_INS",
                                                   "PAPI_TOT_CYC"};

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Keeps the CPU busy for a predictable amount of work; the result is returned so the loop is kept.
uint64_t cpu_work(uint64_t iters, uint64_t seed) {
  uint64_t x = seed | 1;
  for (uint64_t i = 0; i < iters; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x *= 0x9E3779B97F4A7C15ull;
  }
  return x;
}

void touch_fresh_pages(size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw Error(fmt::format("mmap of {} MiB failed", bytes >> 20), kExitInternal);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Base pages, so that the phase faults once per page whatever the transparent-huge-page policy.
  ::madvise(p, bytes, MADV_NOHUGEPAGE);
  auto* c = static_cast<volatile char*>(p);
  for (size_t off = 0; off < bytes; off += page) c[off] = 1;
  ::munmap(p, bytes);
}

std::atomic<uint64_t> g_sink_value{0};

void one_proof(const Options& o, ThreadPool& pool) {
  Phase proof("proof");
  {
    Phase p("srs_load");
    sleep_ms(2);
  }
  {
    Phase synth("synth");
    const std::string parent = instr::current_path();
    const size_t parts = pool.size() * 2;
    pool.parallel_for(
        parts,
        [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) {
            Phase part("partition", parent);
            g_sink_value += cpu_work(o.synth_iters, i + 1);
          }
        },
        parts);
  }
  {
    Phase prove("prove");
    {
      Phase h2d("h2d");
      touch_fresh_pages(static_cast<size_t>(o.touch_mib) << 20);
    }
    {
      Phase ntt("ntt_h");
      sleep_ms(10);
    }
    const std::string parent = instr::current_path();
    auto g2_work = [parent] {
      Phase g2("msm_b_g2", parent);
      sleep_ms(8);
    };
    // A pool of one thread has no worker to run it concurrently: run it first, inline.
    std::future<void> g2;
    if (pool.size() > 1)
      g2 = pool.submit(g2_work);
    else
      g2_work();
    {
      Phase m("msm_h");
      sleep_ms(4);
    }
    {
      Phase m("msm_l");
      sleep_ms(3);
    }
    if (g2.valid()) g2.get();
    {
      Phase a("assemble");
      sleep_ms(1);
    }
  }
}

int run_selfmeasure(const Options& o) {
  if (o.reps < 1) throw Error(fmt::format("--reps must be at least 1 (got {})", o.reps));
  if (o.warmup_runs < 0) throw Error(fmt::format("--warmup must be 0 or more (got {})", o.warmup_runs));
  if (o.touch_mib < 1 || o.touch_mib > 4096) throw Error(fmt::format("--touch-mib must be 1..4096 (got {})", o.touch_mib));

  // Everything that can be wrong with the input fails here, before any work or output.
  SessionOptions so;
  so.suite = "selfmeasure";
  so.out = o.out;
  so.overwrite = o.force;
  so.counters = o.counters;
  so.default_counters = with_os_defaults(kDefaultCounters);
  so.spans = o.spans;
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(so);
  } catch (const CounterError& e) {
    throw Error(e.what());
  } catch (const ResultsError& e) {
    throw Error(e.what());
  }
  ThreadPool& pool = ThreadPool::global();
  json params = {{"touch_mib", o.touch_mib}, {"synth_iters", o.synth_iters}, {"threads", pool.size()}};
  for (int i = 0; i < o.warmup_runs + o.reps; ++i) {
    const bool warm = i < o.warmup_runs;
    session->measure({.suite = "selfmeasure",
                      .case_name = "synthetic",
                      .parameters = params,
                      .repetition = warm ? i : i - o.warmup_runs,
                      .warm = warm},
                     [&] { one_proof(o, pool); });
  }
  json summary = session->finish();
  fmt::print("selfmeasure: {} repetition(s) + {} warm-up, {} pool threads -> {}\n", o.reps, o.warmup_runs, pool.size(),
             session->path());
  print_summary_table(summary, session->counter_status());
  return kExitOk;
}

Registrar reg_selfmeasure("selfmeasure", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("selfmeasure",
                                 "measure the harness itself on a synthetic phased workload and write a results file");
  auto o = std::make_shared<Options>();
  auto counters = std::make_shared<std::string>();
  auto no_spans = std::make_shared<bool>(false);
  sub->add_option("--reps", o->reps, "measured repetitions (default 5)");
  sub->add_option("--warmup", o->warmup_runs, "warm-up repetitions, recorded with warmup=true (default 1)");
  sub->add_option("--out", o->out, "results file (default results/local/selfmeasure-<UTC time>-<pid>.jsonl)");
  sub->add_flag("--force", o->force, "overwrite --out if it exists");
  auto* copt = sub->add_option("--counters", *counters,
                               "comma-separated PAPI events and os:: counters (default $CUZK_COUNTERS, else "
                               "perf::PAGE-FAULTS,perf::TASK-CLOCK,PAPI_TOT_INS,PAPI_TOT_CYC and the default os:: counters; \"\" for none)");
  sub->add_option("--touch-mib", o->touch_mib, "fresh memory touched in proof/prove/h2d (default 64)");
  sub->add_flag("--no-spans", *no_spans, "do not record spans (no trace possible)");
  return [=] {
    Options opt = *o;
    if (copt->count() > 0) opt.counters = *counters;
    opt.spans = !*no_spans;
    return run_selfmeasure(opt);
  };
});

}  // namespace
}  // namespace cuzk::cli
