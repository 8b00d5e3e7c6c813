// The GPU NTT and H against the CPU's, under every pass plan, and the NTT at 2^27.
// Run on the GPU machine (skipped elsewhere, see gpu_main.cpp); every random input comes from a
// fresh seed printed with each case, so a failure can be replayed.
#include <atomic>
#include <bit>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "catch.hpp"
#include "cuda/testing/entry_points.hpp"
#include "cuda/stage/cuda_backend.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/ntt/ntt.hpp"
#include "prover/util/thread_pool.hpp"
#include "gpu_test_util.hpp"

TEST_CASE("GPU NTTs equal the CPU's at several sizes") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  for (unsigned log_n : {0u, 1u, 3u, 8u, 9u, 13u, 16u, 17u, 20u}) {
    INFO("log_n " << log_n);
    Domain dom(log_n);
    const fr_t shift = fr_t::random(g);
    auto x = random_elems<fr_t>(size_t(1) << log_n, g);
    auto cpu = x, gpu = x;
    dom.forward(cpu);
    cuda::ntt_forward(gpu);
    CHECK(cpu == gpu);
    dom.inverse(cpu);
    cuda::ntt_inverse(gpu);
    CHECK(cpu == gpu);
    CHECK(gpu == x);
    dom.coset_forward(cpu, shift);
    cuda::ntt_coset_forward(gpu, shift);
    CHECK(cpu == gpu);
    dom.coset_inverse(cpu, shift);
    cuda::ntt_coset_inverse(gpu, shift);
    CHECK(cpu == gpu);
  }
}

// Every pass split the kernels take (cuda/ntt/ntt_plan.hpp): one pass or several, odd and even stage
// counts per pass, tiles of several groups or one, and the last pass storing natural order
// through the context's scratch array.
TEST_CASE("GPU NTTs under every pass plan equal the CPU's; plans the kernels cannot run are refused") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  // The occupancies (2 and 4 blocks per SM: more and fewer registers than the default 3) build
  // kernels of their own, so they run too, in both the default rule's tiles and explicit ones.
  // Every plan launches its passes early (the default); the last two also plainly.
  const cuda::NttPlan plans[] = {{},        {2, 1},     {4, 3},     {10, 8},   {10, 9},   {10, 10}, {11, 9},
                                 {11, 10},  {11, 11},   {0, 0, 2},  {0, 0, 4}, {4, 3, 2}, {10, 9, 4}, {11, 10, 2},
                                 {0, 0, 0, false}, {4, 3, 0, false}};
  for (const cuda::NttPlan plan : plans) {
    for (unsigned log_n : {1u, 5u, 10u, 11u, 12u, 21u}) {
      if (log_n > 12 && plan.tile_log && plan.max_stages < 8) continue;  // 21 one-stage passes: slow, nothing new
      INFO("log_n " << log_n << " tile 2^" << plan.tile_log << " up to " << plan.max_stages << " stages per pass, "
                    << plan.occupancy << " blocks per SM, early launch " << plan.early_launch);
      Domain dom(log_n);
      const fr_t shift = fr_t::random(g);
      auto x = random_elems<fr_t>(size_t(1) << log_n, g);
      auto cpu = x, gpu = x;
      dom.forward(cpu);
      cuda::ntt_forward(gpu, plan);
      CHECK(cpu == gpu);
      dom.inverse(cpu);
      cuda::ntt_inverse(gpu, plan);
      CHECK(cpu == gpu);
      dom.coset_forward(cpu, shift);
      cuda::ntt_coset_forward(gpu, shift, plan);
      CHECK(cpu == gpu);
      dom.coset_inverse(cpu, shift);
      cuda::ntt_coset_inverse(gpu, shift, plan);
      CHECK(cpu == gpu);
    }
  }
  std::vector<fr_t> v(16, fr_t::one());
  for (const cuda::NttPlan bad : {cuda::NttPlan{12, 8}, cuda::NttPlan{10, 11}, cuda::NttPlan{10, 0}, cuda::NttPlan{1, 1},
                                  cuda::NttPlan{0, 8}, cuda::NttPlan{10, 9, 1}, cuda::NttPlan{10, 9, 5},
                                  cuda::NttPlan{0, 0, 8}}) {
    INFO("tile 2^" << bad.tile_log << " up to " << bad.max_stages << " occupancy " << bad.occupancy);
    CHECK_THROWS_AS(cuda::ntt_forward(v, bad), std::invalid_argument);
  }
}

// The largest domain the backend is asked for. The CPU's Domain would hold 4 GiB of twiddles,
// so the check is by properties, every one exact: the transform of a unit vector e_p is
// omega^(p k) at every k; random data at a few random k equals the direct sum; inverse and
// coset inverse undo forward and coset forward.
TEST_CASE("GPU NTT at 2^27", "[large]") {
  const unsigned log_n = 27;
  const size_t n = size_t(1) << log_n;
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  ThreadPool& tp = ThreadPool::global();
  const fr_t omega = fr_t::root_of_unity(log_n);
  // Counts the k in [0, n) where got[k] != base^k (base^k computed from b in each chunk).
  auto mismatches_of_powers = [&](const std::vector<fr_t>& got, const fr_t& base) {
    std::atomic<size_t> bad{0};
    tp.parallel_for(n, [&](size_t b, size_t e) {
      fr_t p = base.pow(uint64_t(b));
      size_t mine = 0;
      for (size_t k = b; k < e; ++k, p *= base) mine += got[k] != p;
      bad += mine;
    });
    return bad.load();
  };
  std::vector<fr_t> x(n, fr_t::zero());
  const size_t pos = g() % n;
  x[pos] = fr_t::one();
  try {
    cuda::ntt_forward(x);
  } catch (const cuda::DeviceOutOfMemory& e) {
    WARN("not run: a 2^27 NTT does not fit this device: " << e.what());  // Catch2 v2 has no SKIP
    return;
  }
  CHECK(mismatches_of_powers(x, omega.pow(uint64_t(pos))) == 0);

  tp.parallel_for(n, [&](size_t b, size_t e) {
    std::mt19937_64 gg(seed ^ (b * 0x9e3779b97f4a7c15ull));
    for (size_t i = b; i < e; ++i) x[i] = fr_t::random(gg);
  });
  const std::vector<fr_t> orig = x;
  cuda::ntt_forward(x);
  for (int t = 0; t < 3; ++t) {
    const size_t k = g() % n;
    INFO("k " << k);
    const fr_t wk = omega.pow(uint64_t(k));
    std::mutex mu;
    fr_t sum = fr_t::zero();
    tp.parallel_for(n, [&](size_t b, size_t e) {
      fr_t p = wk.pow(uint64_t(b)), part = fr_t::zero();
      for (size_t j = b; j < e; ++j, p *= wk) part += orig[j] * p;
      std::lock_guard lk(mu);
      sum += part;
    });
    CHECK(x[k] == sum);
  }
  cuda::ntt_inverse(x);
  CHECK(x == orig);
  const fr_t shift = fr_t::random(g);
  cuda::ntt_coset_forward(x, shift);
  CHECK(x != orig);
  cuda::ntt_coset_inverse(x, shift);
  CHECK(x == orig);
}

// H runs the inverse DIF and forward DIT passes (the plain transforms above run DIF only), so
// the plans again: one pass or several, odd and even stage counts, and the default rule.
TEST_CASE("GPU H equals the CPU's in both conventions, under every pass plan") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  const cuda::NttPlan plans[] = {{}, {2, 1}, {4, 3}, {10, 9}, {11, 10}, {0, 0, 2}, {0, 0, 4}, {0, 0, 0, false}};
  for (uint64_t rows : {1ull, 100ull, 1000ull, 4096ull, 70000ull}) {
    const uint64_t n = std::bit_ceil(rows);
    auto a = random_elems<fr_t>(rows, g), b = random_elems<fr_t>(rows, g), c = random_elems<fr_t>(rows, g);
    std::vector<fr_t> one{fr_t::one()};
    groth16::Witness w{a, b, c, one, {}};
    for (auto conv : {groth16::HConvention::kBellman, groth16::HConvention::kSnarkjs}) {
      const std::vector<fr_t> cpu = groth16::compute_h(conv, w, n);
      for (const cuda::NttPlan plan : plans) {
        if (n > 4096 && plan.max_stages < 8 && plan.tile_log) continue;  // 17 one-stage passes: slow, nothing new
        INFO("rows " << rows << " convention " << int(conv) << " tile 2^" << plan.tile_log << " up to "
                     << plan.max_stages << " stages per pass, " << plan.occupancy << " blocks per SM, early launch "
                     << plan.early_launch);
        CHECK(cuda::compute_h(conv, w, n, plan) == cpu);
      }
    }
  }
}
