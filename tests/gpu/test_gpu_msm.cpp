// The GPU MSM against the CPU's, in both groups, and MSMs sharing one sort of their scalars.
// Run on the GPU machine (skipped elsewhere, see gpu_main.cpp); every random input comes from a
// fresh seed printed with each case, so a failure can be replayed.
#include <algorithm>
#include <span>
#include <stdexcept>
#include <vector>

#include "catch.hpp"
#include "cuda/testing/entry_points.hpp"
#include "cuda/stage/cuda_backend.hpp"
#include "prover/msm/msm.hpp"
#include "gpu_test_util.hpp"

// The GPU MSM of group P (cuda/msm/msm_points.hpp) against the CPU's, on every input that has a
// path of its own in the device code.
template <class P>
void check_gpu_msm_against_cpu(std::mt19937_64& g) {
  using Affine = typename P::affine;
  for (size_t n : {1, 2, 7, 100, 1000, 4097, 65536 + 3}) {
    auto pts = random_points<Affine>(n, g);
    auto sc = random_elems<fr_t>(n, g);
    for (size_t i = 0; i < n; i += 5) sc[i] = fr_t::zero();
    for (size_t i = 2; i < n; i += 7) pts[i] = Affine::infinity();
    if (n > 3) sc[3] = -fr_t::one();  // the largest scalar
    INFO("n " << n);
    const auto want = cpu_msm(pts, sc);
    CHECK(gpu_msm(pts, sc) == want);
    // Small windows: few buckets, each a run across many chunks.
    CHECK(gpu_msm(pts, sc, 4) == want);
    // Windows wider than the rule's 16 (18: 15 windows, 20: 13 windows of 2^19 buckets; keys of
    // 23 bits): the widths msm_h's sweep measures (StageOptions::h_window_bits).
    if (n == 1000 || n == 65536 + 3)
      for (unsigned c : {18u, 20u}) {
        INFO("window bits " << c);
        CHECK(gpu_msm(pts, sc, c) == want);
      }
    // Uploaded in slices that add into the same buckets: 3 slices growing threefold, or equal
    // ones with a short last one where n < 13.
    CHECK(gpu_msm(pts, sc, 0, 3) == want);
    // Chunks of 2 and 3 points (many rounds of partial sums per bucket) and of 4096 (a thread
    // per bucket), resident and uploaded in 7 slices.
    for (uint32_t chunk : {2u, 3u, 4096u}) {
      INFO("chunk " << chunk);
      cuda::DeviceMsm<P> d;
      d.set_chunk(chunk);
      d.upload(pts, sc);
      CHECK(d.run() == want);
      CHECK(d.upload_and_run(pts, sc, 0, 7) == want);
    }
    // Zero digits left out of the sort (the assignment's MSMs): on these scalars most digits are
    // not zero, so after the count every digit is sorted anyway; on a mostly-0/1 mix over the
    // same points only the non-zero ones are.
    auto mostly01 = sc;
    for (size_t i = 0; i < n; ++i)
      if (i % 23 != 1) mostly01[i] = (i % 3) ? fr_t::one() : fr_t::zero();
    const auto want01 = cpu_msm(pts, mostly01);
    for (unsigned c : {0u, 4u}) {
      INFO("zero digits left out, window bits " << c);
      cuda::DeviceMsm<P> dense, sparse;
      dense.set_skip_zero_digits(true);
      sparse.set_skip_zero_digits(true);
      dense.upload(pts, sc);
      CHECK(dense.run(c) == want);
      sparse.upload(pts, mostly01);
      CHECK(sparse.run(c) == want01);
      CHECK(sparse.upload_and_run(pts, mostly01, c, 3) == want01);
    }
    // Equal chunks across buckets (Msm::set_equal_chunks): chunks of 2 and 3 points (a bucket's
    // pieces over many chunks, many rounds), the default, and 4096 (buckets inside one chunk,
    // added into their buckets there); resident, at 4 and 20 bits, in 7 slices, and with zero
    // digits left out.
    for (uint32_t chunk : {0u, 2u, 3u, 4096u}) {
      INFO("equal chunks of " << chunk << " (0: the default)");
      cuda::DeviceMsm<P> d, sparse;
      d.set_equal_chunks(true);
      sparse.set_equal_chunks(true);
      sparse.set_skip_zero_digits(true);
      if (chunk) {
        d.set_chunk(chunk);
        sparse.set_chunk(chunk);
      }
      d.upload(pts, sc);
      CHECK(d.run() == want);
      CHECK(d.run(4) == want);
      if (chunk == 0) CHECK(d.run(20) == want);
      CHECK(d.upload_and_run(pts, sc, 0, 7) == want);
      CHECK(sparse.upload_and_run(pts, mostly01, 0, 3) == want01);
    }
  }
  // Bit-valued scalars (a Groth16 witness is full of them): one bucket holds most points.
  const size_t n = 200000;
  auto pts = random_points<Affine>(n, g);
  std::vector<fr_t> bits(n);
  for (size_t i = 0; i < n; ++i) bits[i] = (g() & 3) ? fr_t::one() : fr_t::zero();
  const auto want = cpu_msm(pts, bits);
  CHECK(gpu_msm(pts, bits) == want);
  CHECK(gpu_msm(pts, bits, 0, 5) == want);
  CHECK(gpu_msm(pts, bits, 0, 32) == want);
  {
    // Page-locked input is copied directly, where pageable input (every call above) goes through
    // the staging buffers on a thread of its own (cuda/stage/staged_upload.cuh).
    cuda::HostPin pin_p(pts.data(), pts.size() * sizeof(Affine)), pin_s(bits.data(), bits.size() * sizeof(fr_t));
    CHECK(gpu_msm(pts, bits, 0, 5) == want);
  }
  {
    // Zero digits left out: only the ones' single digits are sorted.
    cuda::DeviceMsm<P> skip;
    skip.set_skip_zero_digits(true);
    CHECK(skip.upload_and_run(pts, bits, 0, 5) == want);
    CHECK(skip.upload_and_run(pts, bits, 12, 1) == want);
    // Equal chunks: the ones' bucket spans thousands of chunks, zeros sorted or left out.
    cuda::DeviceMsm<P> eq;
    eq.set_equal_chunks(true);
    CHECK(eq.upload_and_run(pts, bits, 0, 5) == want);
    eq.set_skip_zero_digits(true);
    CHECK(eq.upload_and_run(pts, bits, 0, 1) == want);
    // The later rounds in chunks of the first round's size (the former way), where by default
    // they take fewer partial sums a thread as the ones' bucket's dwindle.
    cuda::DeviceMsm<P> former;
    former.set_fill_later_rounds(false);
    former.set_skip_zero_digits(true);
    CHECK(former.upload_and_run(pts, bits, 0, 1) == want);
    CHECK(former.upload_and_run(pts, bits, 12, 3) == want);
  }
  // All zero: the point at infinity (no digit to sort, with zero digits left out or not).
  std::vector<fr_t> zeros(1000, fr_t::zero());
  CHECK(gpu_msm(std::span(pts).first(1000), zeros).is_infinity());
  CHECK(gpu_msm(std::span(pts).first(1000), zeros, 0, 3).is_infinity());
  cuda::DeviceMsm<P> skip;
  skip.set_skip_zero_digits(true);
  skip.upload(std::span(pts).first(1000), zeros);
  CHECK(skip.run().is_infinity());
}

TEST_CASE("GPU MSM equals the CPU's: sizes, zero scalars, infinity, crowded buckets") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  check_gpu_msm_against_cpu<cuda::G1Points>(g);
}

// The proving stage's assignment MSMs sort the assignment's digits once (DigitPlan) and sum
// each query's points on that one sort; msm_l skips the public inputs, which have no L point.
TEST_CASE("GPU MSMs sharing one sort of their scalars equal the CPU's; a stale plan is refused") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  auto check = [&](std::span<const fr_t> sc, unsigned c, bool skip_zero = true, bool equal = false) {
    const size_t n = sc.size();
    const std::vector<size_t> skips = {0, std::min<size_t>(3, n), 0, n};
    std::vector<std::vector<g1_affine_t>> pts;
    for (size_t skip : skips) {
      pts.push_back(random_points(n - skip, g));
      for (size_t i = 1; i < pts.back().size(); i += 9) pts.back()[i] = g1_affine_t::infinity();
    }
    const auto got = cuda::msm_g1_planned(pts, skips, sc, c, false, skip_zero, equal);
    REQUIRE(got.size() == skips.size());
    for (size_t k = 0; k < skips.size(); ++k) {
      INFO("set " << k << ", skip " << skips[k]);
      CHECK(got[k] == msm_g1(pts[k], sc.subspan(skips[k])));
    }
    CHECK(got.back().is_infinity());  // every scalar skipped
  };
  for (size_t n : {1, 7, 1000, 65536 + 3}) {
    auto sc = random_elems<fr_t>(n, g);
    for (size_t i = 0; i < n; i += 5) sc[i] = fr_t::zero();
    if (n > 4) sc[4] = -fr_t::one();
    for (unsigned c : {0u, 4u})
      for (bool skip_zero : {true, false})
        for (bool equal : {false, true}) {
          INFO("n " << n << ", window bits " << c << ", zero digits " << (skip_zero ? "left out" : "sorted")
                    << (equal ? ", equal chunks" : ""));
          check(sc, c, skip_zero, equal);
        }
  }
  // Bit-valued scalars (most of an assignment): one bucket run across many chunks.
  std::vector<fr_t> bits(100000);
  for (auto& b : bits) b = (g() & 3) ? fr_t::one() : fr_t::zero();
  for (bool equal : {false, true}) {
    INFO((equal ? "equal chunks" : "chunks by bucket"));
    check(bits, 0, true, equal);
    check(bits, 0, false, equal);
    check(bits, 12, true, equal);  // the sparse rule's width for an assignment at 2^24
    check(std::vector<fr_t>(1000, fr_t::zero()), 0, true, equal);  // nothing to sum: no runs
    check(std::vector<fr_t>(1000, fr_t::zero()), 0, false, equal);
  }
  // Another MSM's sort on the workspace between the plan and its use: refused, not misread.
  auto sc = random_elems<fr_t>(100, g);
  const std::vector<std::vector<g1_affine_t>> pts = {random_points(100, g)};
  const std::vector<size_t> skips = {0};
  CHECK_THROWS_AS(cuda::msm_g1_planned(pts, skips, sc, 0, true), std::logic_error);
  // skip beyond the scalars, and points that do not match: argument errors.
  const std::vector<size_t> too_far = {101};
  CHECK_THROWS_AS(cuda::msm_g1_planned(pts, too_far, sc), std::invalid_argument);
}

// The same device code over Fp2 (msm_b_g2), built and tested in the builds with CUZK_GPU_G2
// (presets gpu-g2 and all): the G2 kernels are compiled only there (cuda/msm/msm.cu says why).
#if CUZK_GPU_G2
TEST_CASE("GPU G2 MSM equals the CPU's: sizes, zero scalars, infinity, crowded buckets") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  check_gpu_msm_against_cpu<cuda::G2Points>(g);
}
#endif
