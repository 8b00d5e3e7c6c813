// Curve and pairing microbenchmarks (single thread): point additions and doublings in the forms
// the MSMs use, scalar multiplication, one pairing and a four-term multi-pairing (the shape of
// a Groth16 verification). Numbers and machine: docs/arithmetic.md.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"
#include "prover/pairing/pairing.hpp"

using namespace cuzk;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 r(20240601);
  return r;
}

template <class Jac> std::vector<typename Jac::affine_type> random_affine(const Jac& g, int n) {
  std::vector<Jac> js;
  for (int i = 0; i < n; i++) js.push_back(g.mul(fr_t::random(rng())));
  return batch_to_affine(js);
}

const g1_jacobian_t& g1() {
  static g1_jacobian_t g = g1_jacobian_t::from_affine(g1_generator());
  return g;
}
const g2_jacobian_t& g2() {
  static g2_jacobian_t g = g2_jacobian_t::from_affine(g2_generator());
  return g;
}

// Chains of dependent operations over 64 distinct points; per-iteration time = one operation.
void BM_g1_mixed_add(benchmark::State& st) {  // Jacobian += affine (madd-2007-bl)
  auto pts = random_affine(g1(), 64);
  g1_jacobian_t acc = g1().dbl();
  size_t i = 0;
  for (auto _ : st) {
    acc = acc + pts[i++ & 63];
    benchmark::DoNotOptimize(acc);
  }
}
BENCHMARK(BM_g1_mixed_add);

void BM_g1_xyzz_mixed_add(benchmark::State& st) {  // XYZZ += affine (madd-2008-s), MSM buckets
  auto pts = random_affine(g1(), 64);
  g1_xyzz_t acc = g1_xyzz_t::from_affine(g1().dbl().to_affine());
  size_t i = 0;
  for (auto _ : st) {
    acc = acc + pts[i++ & 63];
    benchmark::DoNotOptimize(acc);
  }
}
BENCHMARK(BM_g1_xyzz_mixed_add);

void BM_g1_add(benchmark::State& st) {  // Jacobian + Jacobian (add-2007-bl)
  g1_jacobian_t acc = g1().dbl(), p = g1().mul(fr_t::random(rng()));
  for (auto _ : st) {
    acc = acc + p;
    benchmark::DoNotOptimize(acc);
  }
}
BENCHMARK(BM_g1_add);

void BM_g1_double(benchmark::State& st) {
  g1_jacobian_t acc = g1().mul(fr_t::random(rng()));
  for (auto _ : st) {
    acc = acc.dbl();
    benchmark::DoNotOptimize(acc);
  }
}
BENCHMARK(BM_g1_double);

void BM_g2_mixed_add(benchmark::State& st) {
  auto pts = random_affine(g2(), 64);
  g2_jacobian_t acc = g2().dbl();
  size_t i = 0;
  for (auto _ : st) {
    acc = acc + pts[i++ & 63];
    benchmark::DoNotOptimize(acc);
  }
}
BENCHMARK(BM_g2_mixed_add);

void BM_g2_double(benchmark::State& st) {
  g2_jacobian_t acc = g2().mul(fr_t::random(rng()));
  for (auto _ : st) {
    acc = acc.dbl();
    benchmark::DoNotOptimize(acc);
  }
}
BENCHMARK(BM_g2_double);

void BM_g1_scalar_mul(benchmark::State& st) {  // 255-bit scalar, 4-bit fixed windows
  g1_jacobian_t p = g1().mul(fr_t::random(rng()));
  fr_t k = fr_t::random(rng());
  for (auto _ : st) {
    benchmark::DoNotOptimize(p.mul(k));
    k += fr_t::one();
  }
}
BENCHMARK(BM_g1_scalar_mul)->Unit(benchmark::kMicrosecond);

void BM_g2_scalar_mul(benchmark::State& st) {
  g2_jacobian_t p = g2().mul(fr_t::random(rng()));
  fr_t k = fr_t::random(rng());
  for (auto _ : st) {
    benchmark::DoNotOptimize(p.mul(k));
    k += fr_t::one();
  }
}
BENCHMARK(BM_g2_scalar_mul)->Unit(benchmark::kMicrosecond);

void BM_miller_loop(benchmark::State& st) {
  g1_affine_t p = g1().mul(fr_t::random(rng())).to_affine();
  g2_affine_t q = g2().mul(fr_t::random(rng())).to_affine();
  for (auto _ : st) benchmark::DoNotOptimize(miller_loop(p, q));
}
BENCHMARK(BM_miller_loop)->Unit(benchmark::kMicrosecond);

void BM_final_exponentiation(benchmark::State& st) {
  fp12_t f = miller_loop(g1_generator(), g2_generator());
  for (auto _ : st) benchmark::DoNotOptimize(final_exponentiation(f));
}
BENCHMARK(BM_final_exponentiation)->Unit(benchmark::kMicrosecond);

void BM_pairing(benchmark::State& st) {
  g1_affine_t p = g1().mul(fr_t::random(rng())).to_affine();
  g2_affine_t q = g2().mul(fr_t::random(rng())).to_affine();
  for (auto _ : st) benchmark::DoNotOptimize(pairing(p, q));
}
BENCHMARK(BM_pairing)->Unit(benchmark::kMicrosecond);

// e(A,B) e(-alpha,beta) e(-L,gamma) e(-C,delta) == 1: four Miller loops sharing squarings,
// one final exponentiation; G2 points unprepared (preparation is inside the timing).
void BM_multi_pairing_4(benchmark::State& st) {
  std::vector<std::pair<g1_affine_t, g2_affine_t>> terms;
  for (int i = 0; i < 4; i++)
    terms.emplace_back(g1().mul(fr_t::random(rng())).to_affine(), g2().mul(fr_t::random(rng())).to_affine());
  for (auto _ : st) benchmark::DoNotOptimize(multi_pairing_is_one(terms));
}
BENCHMARK(BM_multi_pairing_4)->Unit(benchmark::kMicrosecond);

// The same with the G2 side prepared once (a verifier with a fixed verification key).
void BM_multi_pairing_4_prepared(benchmark::State& st) {
  std::vector<g2_prepared_t> prep;
  std::vector<g1_affine_t> ps;
  for (int i = 0; i < 4; i++) {
    ps.push_back(g1().mul(fr_t::random(rng())).to_affine());
    prep.push_back(g2_prepare(g2().mul(fr_t::random(rng())).to_affine()));
  }
  std::vector<std::pair<g1_affine_t, const g2_prepared_t*>> terms;
  for (int i = 0; i < 4; i++) terms.emplace_back(ps[i], &prep[i]);
  for (auto _ : st) benchmark::DoNotOptimize(multi_pairing_is_one(terms));
}
BENCHMARK(BM_multi_pairing_4_prepared)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
