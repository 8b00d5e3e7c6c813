// Field microbenchmarks (Google Benchmark): BLS12-381 Fr, Fp, Fp2, Fp12 on one host thread.
// Each multiply/square benchmark runs a dependency chain (x = x * y), so the time per iteration is
// the latency of one operation and the compiler cannot drop or overlap the work; inversions feed
// their result back in the same way. "_portable" and "_adx" name the multiplication path;
// unsuffixed benchmarks use whatever the build and CPU select (ADX where available).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "prover/ff/bls12_381.hpp"
#include "prover/ff/fp_ifma.hpp"

using namespace cuzk;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 g(0x5eed);  // fixed: benchmarks should see the same operands each run
  return g;
}

template <class F, F (*MUL)(const F&, const F&)>
void chain_mul(benchmark::State& st) {
  F x = F::random(rng()), y = F::random(rng());
  for (auto _ : st) {
    x = MUL(x, y);
    benchmark::DoNotOptimize(x);
  }
  st.SetItemsProcessed(st.iterations());
}

// 8 independent chains: time per multiplication when the CPU can overlap them (throughput), as in
// batched work such as MSM bucket updates; the single-chain benchmarks measure latency.
template <class F, F (*MUL)(const F&, const F&)>
void indep_mul8(benchmark::State& st) {
  F x[8];
  for (auto& v : x) v = F::random(rng());
  F y = F::random(rng());
  for (auto _ : st) {
    for (int k = 0; k < 8; k++) x[k] = MUL(x[k], y);
    benchmark::DoNotOptimize(x);
  }
  st.SetItemsProcessed(st.iterations() * 8);
}

template <class F>
F mul_default(const F& a, const F& b) {
  return a * b;
}
template <class F>
F sqr_default(const F& a, const F& b) {
  return a.sqr();
}
template <class F>
F sqr_portable(const F& a, const F& b) {
  return F::mul_portable(a, a);
}
#if CUZK_USE_ADX
template <class F>
F sqr_adx(const F& a, const F& b) {
  return F::mul_adx(a, a);
}
bool adx_or_skip(benchmark::State& st) {
  if (cpu_has_adx()) return true;
  st.SkipWithError("CPU lacks bmi2/adx");
  return false;
}
template <class F, F (*MUL)(const F&, const F&)>
void chain_mul_adx(benchmark::State& st) {
  if (!adx_or_skip(st)) return;
  chain_mul<F, MUL>(st);
}
#endif

template <class F>
void chain_inv(benchmark::State& st) {
  F x = F::random(rng());
  const F one = F::one();
  for (auto _ : st) {
    x = x.inv() + one;  // + 1 keeps the chain away from a fixed point and from 0
    benchmark::DoNotOptimize(x);
  }
  st.SetItemsProcessed(st.iterations());
}
template <class F>
void chain_inv_fermat(benchmark::State& st) {
  F x = F::random(rng());
  const F one = F::one();
  for (auto _ : st) {
    x = x.inv_fermat() + one;
    benchmark::DoNotOptimize(x);
  }
  st.SetItemsProcessed(st.iterations());
}

template <class F>
F add_default(const F& a, const F& b) {
  return a + b;
}
template <class F>
F sub_default(const F& a, const F& b) {
  return a - b;
}
// x = x + y: latency of one addition (the chain of chain_mul)
template <class F>
void chain_add(benchmark::State& st) {
  chain_mul<F, add_default<F>>(st);
}

template <class T>
void chain_ext_mul(benchmark::State& st) {
  T x = T::random(rng()), y = T::random(rng());
  for (auto _ : st) {
    x = x * y;
    benchmark::DoNotOptimize(x);
  }
  st.SetItemsProcessed(st.iterations());
}
template <class T>
void chain_ext_sqr(benchmark::State& st) {
  T x = T::random(rng());
  for (auto _ : st) {
    x = x.sqr();
    benchmark::DoNotOptimize(x);
  }
  st.SetItemsProcessed(st.iterations());
}

void BM_fp12_cyclotomic_square(benchmark::State& st) {
  fp12_t f = fp12_t::random(rng());
  fp12_t t = f.conjugate() * f.inv();
  fp12_t x = t.frobenius_map(2) * t;  // in the cyclotomic subgroup
  for (auto _ : st) {
    x = x.cyclotomic_square();
    benchmark::DoNotOptimize(x);
  }
  st.SetItemsProcessed(st.iterations());
}
void BM_fp12_mul_by_014(benchmark::State& st) {
  fp12_t x = fp12_t::random(rng());
  fp2_t a = fp2_t::random(rng()), b = fp2_t::random(rng()), c = fp2_t::random(rng());
  for (auto _ : st) {
    x = x.mul_by_014(a, b, c);
    benchmark::DoNotOptimize(x);
  }
  st.SetItemsProcessed(st.iterations());
}
void BM_fp2_sqrt(benchmark::State& st) {
  fp2_t x = fp2_t::random(rng()).sqr();
  fp2_t r;
  for (auto _ : st) {
    bool ok = x.sqrt(r);
    benchmark::DoNotOptimize(ok);
    x = r.sqr() + r.sqr();  // next input depends on this result (a square about half the time)
  }
  st.SetItemsProcessed(st.iterations());
}

// Eight lanes at a time with AVX-512 IFMA (fp_ifma.hpp) over arrays of 1024 independent
// operands: throughput, like indep_mul8, including the repacking from and to fp_t on each call.
template <class F, void (*OP)(const F*, const F*, F*, size_t)>
void ifma_array(benchmark::State& st) {
  if (!cpu_has_ifma()) {
    st.SkipWithError("no AVX-512 IFMA on this CPU or in this build");
    return;
  }
  constexpr size_t n = 1024;
  std::vector<F> a(n), b(n), r(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = F::random(rng());
    b[i] = F::random(rng());
  }
  for (auto _ : st) {
    OP(a.data(), b.data(), r.data(), n);
    benchmark::DoNotOptimize(r.data());
  }
  st.SetItemsProcessed(st.iterations() * n);
}
void fp2_sqr_ifma(const fp2_t* a, const fp2_t*, fp2_t* r, size_t n) { ifma::fp2_sqr_n(a, r, n); }

}  // namespace

// ---- prime fields ----
BENCHMARK_TEMPLATE(chain_mul, fp_t, mul_default<fp_t>)->Name("BM_fp_mul");
BENCHMARK_TEMPLATE(chain_mul, fp_t, fp_t::mul_portable)->Name("BM_fp_mul_portable");
BENCHMARK_TEMPLATE(chain_mul, fr_t, mul_default<fr_t>)->Name("BM_fr_mul");
BENCHMARK_TEMPLATE(chain_mul, fr_t, fr_t::mul_portable)->Name("BM_fr_mul_portable");
BENCHMARK_TEMPLATE(chain_mul, fp_t, sqr_default<fp_t>)->Name("BM_fp_sqr");
BENCHMARK_TEMPLATE(chain_mul, fp_t, sqr_portable<fp_t>)->Name("BM_fp_sqr_portable");
BENCHMARK_TEMPLATE(chain_mul, fr_t, sqr_default<fr_t>)->Name("BM_fr_sqr");
BENCHMARK_TEMPLATE(indep_mul8, fp_t, mul_default<fp_t>)->Name("BM_fp_mul_throughput");
BENCHMARK_TEMPLATE(indep_mul8, fr_t, mul_default<fr_t>)->Name("BM_fr_mul_throughput");
#if CUZK_USE_ADX
BENCHMARK_TEMPLATE(chain_mul_adx, fp_t, fp_t::mul_adx)->Name("BM_fp_mul_adx");
BENCHMARK_TEMPLATE(chain_mul_adx, fr_t, fr_t::mul_adx)->Name("BM_fr_mul_adx");
BENCHMARK_TEMPLATE(chain_mul_adx, fp_t, sqr_adx<fp_t>)->Name("BM_fp_sqr_adx");
#endif
BENCHMARK_TEMPLATE(ifma_array, fp_t, ifma::fp_mul_n)->Name("BM_fp_mul_ifma_x8");
BENCHMARK_TEMPLATE(ifma_array, fp_t, ifma::fp_add_n)->Name("BM_fp_add_ifma_x8");
BENCHMARK_TEMPLATE(chain_add, fp_t)->Name("BM_fp_add");
BENCHMARK_TEMPLATE(chain_mul, fp_t, sub_default<fp_t>)->Name("BM_fp_sub");
BENCHMARK_TEMPLATE(indep_mul8, fp_t, add_default<fp_t>)->Name("BM_fp_add_throughput");
BENCHMARK_TEMPLATE(chain_add, fr_t)->Name("BM_fr_add");
BENCHMARK_TEMPLATE(chain_inv, fp_t)->Name("BM_fp_inverse");
BENCHMARK_TEMPLATE(chain_inv_fermat, fp_t)->Name("BM_fp_inverse_fermat");
BENCHMARK_TEMPLATE(chain_inv, fr_t)->Name("BM_fr_inverse");
BENCHMARK_TEMPLATE(chain_inv_fermat, fr_t)->Name("BM_fr_inverse_fermat");

// ---- extension fields (use the default multiplication path) ----
BENCHMARK_TEMPLATE(chain_ext_mul, fp2_t)->Name("BM_fp2_mul");
BENCHMARK_TEMPLATE(chain_ext_sqr, fp2_t)->Name("BM_fp2_sqr");
BENCHMARK_TEMPLATE(indep_mul8, fp2_t, mul_default<fp2_t>)->Name("BM_fp2_mul_throughput");
BENCHMARK_TEMPLATE(ifma_array, fp2_t, ifma::fp2_mul_n)->Name("BM_fp2_mul_ifma_x8");
BENCHMARK_TEMPLATE(ifma_array, fp2_t, fp2_sqr_ifma)->Name("BM_fp2_sqr_ifma_x8");
BENCHMARK_TEMPLATE(chain_ext_mul, fp6_t)->Name("BM_fp6_mul");
BENCHMARK_TEMPLATE(chain_ext_mul, fp12_t)->Name("BM_fp12_mul");
BENCHMARK_TEMPLATE(chain_ext_sqr, fp12_t)->Name("BM_fp12_sqr");
BENCHMARK(BM_fp12_cyclotomic_square);
BENCHMARK(BM_fp12_mul_by_014);
BENCHMARK(BM_fp2_sqrt);

BENCHMARK_MAIN();
