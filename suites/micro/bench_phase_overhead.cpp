// Cost of one phase scope (open + close) as the prover pays it, in four configurations:
//   NoSink                 no sink installed: the scope only maintains the thread's path
//   Recorder               Recorder sink, NVTX off, spans on
//   RecorderNvtx           Recorder sink + NVTX ranges (no tool attached: NVTX's no-op path)
//   RecorderNvtxNoSpans    as above without spans (aggregates only)
//   RecorderPageFaults     Recorder + NVTX + 1 software counter (perf::PAGE-FAULTS)
//   RecorderOsCounters     Recorder + NVTX + the default OS counters (getrusage; required: under 2 us)
//   RecorderOsCountersIo   as above plus the /proc/self/io counters (not in the default set)
// The requirement: a scope with NVTX and without PAPI costs under 1 microsecond.
// Spans are cleared every kBatch scopes outside the timed region so memory stays bounded.
#include <benchmark/benchmark.h>

#include "harness/measure/counters.hpp"
#include "harness/measure/nvtx.hpp"
#include "harness/measure/recorder.hpp"
#include "prover/instr/phase.hpp"

namespace {

constexpr int kBatch = 1 << 16;

void run_scopes(benchmark::State& state, cuzk::Recorder* rec) {
  if (rec) rec->install();
  cuzk::instr::Phase outer("proof");
  int n = 0;
  for (auto _ : state) {
    cuzk::instr::Phase p("synth");
    benchmark::DoNotOptimize(p.path().data());
    if (rec && ++n == kBatch) {
      state.PauseTiming();
      rec->take_sample();
      n = 0;
      state.ResumeTiming();
    }
  }
  if (rec) rec->uninstall();
  state.SetItemsProcessed(state.iterations());
}

void BM_PhaseNoSink(benchmark::State& state) { run_scopes(state, nullptr); }

void BM_PhaseRecorder(benchmark::State& state) {
  cuzk::RecorderOptions o;
  o.nvtx = false;
  o.enlist_global_pool = false;
  cuzk::Recorder rec(o);
  run_scopes(state, &rec);
}

void BM_PhaseRecorderNvtx(benchmark::State& state) {
  cuzk::RecorderOptions o;
  o.nvtx = true;
  o.enlist_global_pool = false;
  cuzk::Recorder rec(o);
  run_scopes(state, &rec);
  state.SetLabel(cuzk::nvtx::compiled_in() ? "nvtx on" : "nvtx compiled out");
}

void BM_PhaseRecorderNvtxNoSpans(benchmark::State& state) {
  cuzk::RecorderOptions o;
  o.nvtx = true;
  o.spans = false;
  o.enlist_global_pool = false;
  cuzk::Recorder rec(o);
  run_scopes(state, &rec);
}

void BM_PhaseRecorderPageFaults(benchmark::State& state) {
  cuzk::RecorderOptions o;
  o.nvtx = true;
  o.counters = {"perf::PAGE-FAULTS"};
  o.enlist_global_pool = false;
  cuzk::Recorder rec(o);
  if (rec.counter_status()[0].available) {
    state.SetLabel("1 counter, 1 thread counted");
  } else {
    state.SetLabel("counter unavailable: " + rec.counter_status()[0].reason);
  }
  run_scopes(state, &rec);
}

void os_counters_case(benchmark::State& state, std::vector<std::string> names) {
  cuzk::RecorderOptions o;
  o.nvtx = true;
  o.counters = std::move(names);
  o.enlist_global_pool = false;
  cuzk::Recorder rec(o);
  state.SetLabel(std::to_string(o.counters.size()) + " OS counters");
  run_scopes(state, &rec);
}

void BM_PhaseRecorderOsCounters(benchmark::State& state) { os_counters_case(state, cuzk::os_counters::defaults()); }

void BM_PhaseRecorderOsCountersIo(benchmark::State& state) {
  std::vector<std::string> names;
  for (const auto& i : cuzk::os_counters::all()) names.push_back(i.name);
  os_counters_case(state, names);
}

}  // namespace

BENCHMARK(BM_PhaseNoSink);
BENCHMARK(BM_PhaseRecorder);
BENCHMARK(BM_PhaseRecorderNvtx);
BENCHMARK(BM_PhaseRecorderNvtxNoSpans);
BENCHMARK(BM_PhaseRecorderPageFaults);
BENCHMARK(BM_PhaseRecorderOsCounters);
BENCHMARK(BM_PhaseRecorderOsCountersIo);
BENCHMARK_MAIN();
