// CPU MSM throughput (G1 at 2^10..2^18, G2 at 2^12), both cores by default.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "prover/ff/fp_ifma.hpp"
#include "prover/msm/msm.hpp"
#include "prover/util/thread_pool.hpp"

using namespace cuzk;

template <class Affine, class Jac>
static std::vector<Affine> make_points(size_t n, const Affine& gen) {
  // P_i = (i + 1) * G: one addition per point, then one batch normalization.
  std::vector<Jac> jac(n);
  Jac acc = Jac::from_affine(gen);
  for (size_t i = 0; i < n; ++i) {
    jac[i] = acc;
    acc = acc + gen;
  }
  return batch_to_affine(jac);
}

static std::vector<fr_t> make_scalars(size_t n) {
  std::mt19937_64 g(42);
  std::vector<fr_t> s(n);
  for (auto& x : s) x = fr_t::random(g);
  return s;
}

static void BM_msm_g1(benchmark::State& st) {
  const size_t n = size_t(1) << st.range(0);
  static std::vector<g1_affine_t> pts;
  if (pts.size() < n) pts = make_points<g1_affine_t, g1_jacobian_t>(n, g1_generator());
  auto sc = make_scalars(n);
  std::span<const g1_affine_t> p(pts.data(), n);
  for (auto _ : st) benchmark::DoNotOptimize(msm_g1(p, sc));
  st.counters["points"] = double(n);
  st.counters["window"] = msm_window_bits(n);
  st.counters["threads"] = ThreadPool::global().size();
}
BENCHMARK(BM_msm_g1)->DenseRange(10, 18, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Full-width scalars: the Pippenger buckets (batched affine additions); second argument as in
// BM_msm_g2_bits below.
static void BM_msm_g2(benchmark::State& st) {
  const size_t n = size_t(1) << st.range(0);
  const bool ifma = st.range(1) != 0;
  if (ifma && !cpu_has_ifma()) {
    st.SkipWithError("no AVX-512 IFMA on this CPU or in this build");
    return;
  }
  static std::vector<g2_affine_t> pts;
  if (pts.size() < n) pts = make_points<g2_affine_t, g2_jacobian_t>(n, g2_generator());
  auto sc = make_scalars(n);
  std::span<const g2_affine_t> p(pts.data(), n);
  set_ifma_enabled(ifma);
  for (auto _ : st) benchmark::DoNotOptimize(msm_g2(p, sc));
  set_ifma_enabled(true);
  st.counters["points"] = double(n);
}
BENCHMARK(BM_msm_g2)->ArgsProduct({{12, 14, 16}, {0, 1}})->ArgNames({"log_n", "ifma"})->Unit(benchmark::kMillisecond)->UseRealTime();

// A witness-like mix (the PoRep-shaped circuit's assignment: about 52% zeros, 47% ones, the
// rest full-width; suites/micro/bench_gpu.cpp measures it): the zero/one split's case.
// Second argument: 1 lets the batched additions use AVX-512 IFMA where the CPU has it, 0 forces the
// scalar path (the A/B of prover/ff/fp_ifma.hpp).
static void BM_msm_g2_bits(benchmark::State& st) {
  const size_t n = size_t(1) << st.range(0);
  const bool ifma = st.range(1) != 0;
  if (ifma && !cpu_has_ifma()) {
    st.SkipWithError("no AVX-512 IFMA on this CPU or in this build");
    return;
  }
  static std::vector<g2_affine_t> pts;
  if (pts.size() < n) pts = make_points<g2_affine_t, g2_jacobian_t>(n, g2_generator());
  auto sc = make_scalars(n);
  std::mt19937_64 g(5);
  for (auto& x : sc) {
    const auto r = g() % 1000;
    if (r < 516) x = fr_t::zero();
    else if (r < 986) x = fr_t::one();
  }
  std::span<const g2_affine_t> p(pts.data(), n);
  set_ifma_enabled(ifma);
  for (auto _ : st) benchmark::DoNotOptimize(msm_g2(p, sc));
  set_ifma_enabled(true);
  st.counters["points"] = double(n);
}
BENCHMARK(BM_msm_g2_bits)->ArgsProduct({{14, 16, 18}, {0, 1}})->ArgNames({"log_n", "ifma"})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
