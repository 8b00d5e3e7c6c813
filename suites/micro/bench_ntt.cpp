// CPU NTT over Fr (forward, both cores) and the H computation of a proof (bellman convention).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "prover/groth16/prover.hpp"
#include "prover/ntt/ntt.hpp"
#include "prover/util/thread_pool.hpp"

using namespace cuzk;

static std::vector<fr_t> random_vec(size_t n) {
  std::mt19937_64 g(7);
  std::vector<fr_t> v(n);
  for (auto& x : v) x = fr_t::random(g);
  return v;
}

static void BM_ntt_forward(benchmark::State& st) {
  Domain d(unsigned(st.range(0)));
  auto v = random_vec(d.size());
  for (auto _ : st) {
    d.forward(v);
    benchmark::DoNotOptimize(v.data());
  }
  st.counters["points"] = double(d.size());
  st.counters["threads"] = ThreadPool::global().size();
}
BENCHMARK(BM_ntt_forward)->DenseRange(12, 20, 4)->Unit(benchmark::kMillisecond)->UseRealTime();

static void BM_compute_h(benchmark::State& st) {
  const size_t n = size_t(1) << st.range(0);
  auto a = random_vec(n), b = random_vec(n), c = random_vec(n), in = random_vec(1);
  groth16::Witness w{a, b, c, in, {}};
  for (auto _ : st) benchmark::DoNotOptimize(groth16::compute_h(groth16::HConvention::kBellman, w, n));
  st.counters["points"] = double(n);
}
BENCHMARK(BM_compute_h)->Arg(16)->Arg(18)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
