// Synthesis throughput of the PoRep-shaped circuit (constraints per second), single-threaded at
// several sizes, under each variant's policy in one binary (the serial synthesis of a real 32 GiB
// partition among them), multi-threaded (N partitions on the thread pool) and sliced (one partition's
// challenges on T threads, prover/synth/sliced.hpp), with page faults and peak memory as
// counters. Except in BM_SynthesisPolicy, the variant (CUZK_SMALLVEC / CUZK_PRESIZE) is the
// build's: run this binary from build/baseline, build/smallvec and build/presize to compare
// (docs/synthesis.md).
//
// Counters per benchmark:
//   constraints         constraints per synthesis (all partitions)
//   constraints_per_s   throughput over wall time
//   per_core            constraints_per_s / threads used
//   per_cpu_s           constraints per second of process CPU time (all threads) spent in
//                       synthesis: the per-core rate, robust to a loaded machine
//   minor_faults, major_faults   page faults per synthesis (getrusage, whole process)
//   peak_rss_mb         peak resident set during the benchmark: /proc/self/clear_refs is reset
//                       ("5") before it and VmHWM read after; ru_maxrss where that is unavailable
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <time.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "prover/circuits/porep.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/synth/sliced.hpp"
#include "prover/synth/synth.hpp"

using namespace cuzk;
using circuits::PorepCircuit;
using circuits::PorepParams;

namespace {

// Size classes (challenges, layers, parents, depth); constraints from `cuzk-bench circuit --describe`.
const PorepParams kSizes[] = {
    {1, 0, 0, 10},  // S: ~8.2 thousand constraints (Poseidon only)
    {4, 1, 2, 6},   // M: ~1.41 million
    {8, 2, 4, 8},   // L: ~4.58 million
    {33, 11, 14, 30},  // 32g: one partition of the 32 GiB sector, 130,953,556 constraints (the engine's sector "32g")
};
const char* kSizeNames[] = {"S", "M", "L", "32g"};

bool reset_peak_rss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

// VmHWM in kB (peak RSS since start or since the last reset), or -1.
long vm_hwm_kb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

struct Usage {
  rusage ru{};
  static Usage now() {
    Usage u;
    getrusage(RUSAGE_SELF, &u.ru);
    return u;
  }
};

double process_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

void report(benchmark::State& state, uint64_t constraints, unsigned threads, const Usage& before, const Usage& after,
            bool hwm_reset, double cpu_s, const std::string& what = "") {
  const double iters = double(state.iterations());
  state.counters["per_cpu_s"] = cpu_s > 0 ? double(constraints) * iters / cpu_s : 0.0;
  state.counters["constraints"] = double(constraints);
  state.counters["constraints_per_s"] = benchmark::Counter(double(constraints) * iters, benchmark::Counter::kIsRate);
  state.counters["per_core"] =
      benchmark::Counter(double(constraints) * iters / threads, benchmark::Counter::kIsRate);
  state.counters["threads"] = threads;
  state.counters["minor_faults"] = double(after.ru.ru_minflt - before.ru.ru_minflt) / iters;
  state.counters["major_faults"] = double(after.ru.ru_majflt - before.ru.ru_majflt) / iters;
  long hwm = hwm_reset ? vm_hwm_kb() : -1;
  state.counters["peak_rss_mb"] = double(hwm >= 0 ? hwm : after.ru.ru_maxrss) / 1024.0;
  state.SetLabel(std::string(kSizeNames[state.range(0)]) + what + (hwm >= 0 ? "" : " (peak: ru_maxrss)"));
}

const char* kPolicyNames[] = {"baseline", "smallvec", "presize"};

// Times the serial synthesis of `c` under Policy, one synthesis an iteration; `what` follows the
// size in the label.
template <class Policy>
void time_serial_synthesis(benchmark::State& state, const PorepCircuit& c, const std::string& what = "") {
  const uint64_t constraints = c.size_hint().constraints;  // shape pass, cached, outside timing
  const bool hwm = reset_peak_rss();
  const Usage before = Usage::now();
  double cpu_s = 0;
  for (auto _ : state) {
    const double t0 = process_cpu_s();
    auto pa = synth::prove_assignment<Policy>(c);
    cpu_s += process_cpu_s() - t0;
    benchmark::DoNotOptimize(pa.c().data());
    state.PauseTiming();
    { auto drop = std::move(pa); }
    state.ResumeTiming();
  }
  report(state, constraints, 1, before, Usage::now(), hwm, cpu_s, what);
}

void BM_SynthesisSingle(benchmark::State& state) {
  const PorepCircuit c = PorepCircuit::generate(kSizes[state.range(0)], 1);
  time_serial_synthesis<r1cs::DefaultPolicy>(state, c);
}

// One partition's serial synthesis under policy 0 (baseline), 1 (small vectors) or 2 (pre-sized),
// the policies the CUZK_SMALLVEC and CUZK_PRESIZE builds select, all three in this one binary:
// with --benchmark_repetitions and --benchmark_enable_random_interleaving their runs alternate in
// one process, so a drift of the machine falls on all three alike. At size 3 (a 32g partition)
// a run holds about 16 GiB at its peak; its circuit is generated once and kept for the three.
void BM_SynthesisPolicy(benchmark::State& state) {
  const size_t size = size_t(state.range(0));
  static std::vector<std::unique_ptr<PorepCircuit>> circuits(std::size(kSizes));
  if (!circuits[size]) circuits[size] = std::make_unique<PorepCircuit>(PorepCircuit::generate(kSizes[size], 1));
  const PorepCircuit& c = *circuits[size];
  const std::string what = std::string(" ") + kPolicyNames[state.range(1)];
  switch (state.range(1)) {
    case 0: time_serial_synthesis<r1cs::BaselinePolicy>(state, c, what); break;
    case 1: time_serial_synthesis<r1cs::SmallvecPolicy>(state, c, what); break;
    default: time_serial_synthesis<r1cs::PresizePolicy>(state, c, what); break;
  }
}

void BM_SynthesisPartitions(benchmark::State& state) {
  const PorepParams p = kSizes[state.range(0)];
  const size_t n = size_t(state.range(1));
  std::vector<PorepCircuit> parts;
  for (size_t i = 0; i < n; i++) parts.push_back(PorepCircuit::generate(p, 1 + i));
  const uint64_t constraints = parts[0].size_hint().constraints * n;
  const unsigned threads = std::min<unsigned>(ThreadPool::global().size(), unsigned(n));
  const bool hwm = reset_peak_rss();
  const Usage before = Usage::now();
  double cpu_s = 0;
  for (auto _ : state) {
    const double t0 = process_cpu_s();
    auto out = synth::synthesize_partitions<r1cs::DefaultPolicy>(parts);
    cpu_s += process_cpu_s() - t0;
    benchmark::DoNotOptimize(out.data());
    state.PauseTiming();
    { auto drop = std::move(out); }
    state.ResumeTiming();
  }
  report(state, constraints, threads, before, Usage::now(), hwm, cpu_s);
}

// One partition on `threads` threads (sliced); threads = 1 is the sliced pass on one thread, to
// compare with BM_SynthesisSingle (the serial pass of the build's policy).
void BM_SynthesisSliced(benchmark::State& state) {
  const PorepParams p = kSizes[state.range(0)];
  const unsigned threads = unsigned(state.range(1));
  const PorepCircuit c = PorepCircuit::generate(p, 1);
  const r1cs::ShapeCounts counts = circuits::porep_shape_by_parts(p);
  const bool hwm = reset_peak_rss();
  const Usage before = Usage::now();
  double cpu_s = 0;
  for (auto _ : state) {
    const double t0 = process_cpu_s();
    auto pa = synth::prove_assignment_sliced<r1cs::DefaultPolicy>(c, counts, threads);
    cpu_s += process_cpu_s() - t0;
    benchmark::DoNotOptimize(pa.c().data());
    state.PauseTiming();
    { auto drop = std::move(pa); }
    state.ResumeTiming();
  }
  report(state, counts.constraints, threads, before, Usage::now(), hwm, cpu_s);
}

}  // namespace

BENCHMARK(BM_SynthesisSingle)->ArgName("size")->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SynthesisPolicy)
    ->ArgNames({"size", "policy"})
    ->ArgsProduct({{1, 3}, {0, 1, 2}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SynthesisPartitions)
    ->ArgNames({"size", "partitions"})
    ->Args({1, 2})
    ->Args({1, 4})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SynthesisSliced)
    ->ArgNames({"size", "threads"})
    ->Args({2, 1})
    ->Args({2, 2})
    ->Args({2, 4})
    ->Args({2, 8})
    ->Args({2, 16})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
