// GPU backend against the CPU reference (run on the GPU machine; skipped elsewhere, see
// gpu_main.cpp). Every random input comes from a fresh seed printed with each case, so a
// failure can be replayed; sizes include non-powers of two, zero scalars and points at infinity.
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <type_traits>

#include "catch.hpp"
#include "harness/measure/recorder.hpp"
#include "cuda/profiling/diagnostics.hpp"
#if CUZK_HAVE_GPU_COUNTERS
#include "cuda/profiling/gpu_counters.hpp"
#endif
#include "cuda/testing/entry_points.hpp"
#include "cuda/stage/cuda_backend.hpp"
#include "prover/circom/circom.hpp"
#include "prover/engine/fault.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/circuits/synthetic_partition.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/instr/phase.hpp"
#include "prover/interop/zkey.hpp"
#include "prover/msm/msm.hpp"
#include "prover/ntt/ntt.hpp"
#include "prover/synth/synth.hpp"
#include "prover/util/thread_pool.hpp"

using namespace cuzk;

namespace {

uint64_t fresh_seed() { return (uint64_t(std::random_device{}()) << 32) | std::random_device{}(); }

template <class F>
std::vector<F> random_elems(size_t n, std::mt19937_64& g) {
  std::vector<F> v(n);
  for (auto& x : v) x = F::random(g);
  return v;
}

// Random G1 (or G2) points: multiples of the generator (so in the subgroup), consecutive sums of
// a random step (cheap, one addition each, all distinct), normalized in one batch.
template <class Affine = g1_affine_t>
std::vector<Affine> random_points(size_t n, std::mt19937_64& g) {
  Affine gen;
  if constexpr (std::is_same_v<Affine, g2_affine_t>) gen = g2_generator();
  else gen = g1_generator();
  using Jacobian = decltype(gen.to_jacobian());
  std::vector<Jacobian> jac(n);
  Jacobian p = gen.to_jacobian().mul(fr_t::random(g));
  const Jacobian step = gen.to_jacobian().mul(fr_t::random(g));
  for (size_t i = 0; i < n; ++i) {
    jac[i] = p;
    p = p + step;
  }
  return batch_to_affine(jac);
}

// The CPU and GPU MSMs of either group, chosen by the points' type.
g1_jacobian_t cpu_msm(std::span<const g1_affine_t> p, std::span<const fr_t> s) { return msm_g1(p, s); }
#if CUZK_GPU_G2
g2_jacobian_t cpu_msm(std::span<const g2_affine_t> p, std::span<const fr_t> s) { return msm_g2(p, s); }
#endif
g1_jacobian_t gpu_msm(std::span<const g1_affine_t> p, std::span<const fr_t> s, unsigned c = 0, unsigned slices = 1) {
  return cuda::msm_g1(p, s, c, slices);
}
#if CUZK_GPU_G2
g2_jacobian_t gpu_msm(std::span<const g2_affine_t> p, std::span<const fr_t> s, unsigned c = 0, unsigned slices = 1) {
  return cuda::msm_g2(p, s, c, slices);
}
#endif

// Clears an injected fault (prover/engine/fault.hpp) when a test leaves, by a failed check too.
struct FaultReset {
  ~FaultReset() { fault::set_for_testing(""); }
};

// Which phases a run opened and which reported GPU time, by leaf name (the CPU G2 thread opens
// its phase on another thread, hence the lock).
class PhaseLog : public instr::PhaseSink {
 public:
  void* begin(const std::string& path) override {
    std::lock_guard lk(mu_);
    ++opened[leaf(path)];
    return nullptr;
  }
  void end(void*) override {}
  void gpu_time(const std::string& path, uint64_t) override {
    std::lock_guard lk(mu_);
    ++gpu[leaf(path)];
  }
  std::map<std::string, size_t> opened, gpu;

 private:
  static std::string leaf(const std::string& p) { return p.substr(p.rfind('/') + 1); }  // npos + 1 == 0: all of it
  std::mutex mu_;
};

}  // namespace

TEST_CASE("device field products equal the host's") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  auto fa = random_elems<fr_t>(4096, g), fb = random_elems<fr_t>(4096, g);
  auto pa = random_elems<fp_t>(4096, g), pb = random_elems<fp_t>(4096, g);
  // edge values: 0, 1, -1 against each other
  const fr_t fe[3] = {fr_t::zero(), fr_t::one(), -fr_t::one()};
  const fp_t pe[3] = {fp_t::zero(), fp_t::one(), -fp_t::one()};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      fa[3 * i + j] = fe[i];
      fb[3 * i + j] = fe[j];
      pa[3 * i + j] = pe[i];
      pb[3 * i + j] = pe[j];
    }
  auto fr_dev = cuda::fr_mul(fa, fb);
  auto fp_dev = cuda::fp_mul(pa, pb);
  size_t bad_fr = 0, bad_fp = 0;
  for (size_t i = 0; i < fa.size(); ++i) {
    bad_fr += fr_dev[i] != fa[i] * fb[i];
    bad_fp += fp_dev[i] != pa[i] * pb[i];
  }
  CHECK(bad_fr == 0);
  CHECK(bad_fp == 0);
}

TEST_CASE("device XYZZ mixed addition equals the host's, exceptional cases included") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  auto pts = random_points(64, g);
  std::vector<g1_xyzz_t> acc(64);
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = random_points(1, g)[0].to_xyzz();
  acc[0] = g1_xyzz_t::infinity();         // O + P
  pts[1] = g1_affine_t::infinity();       // A + O
  acc[2] = pts[2].to_xyzz();              // P + P (doubling)
  acc[3] = (-pts[3]).to_xyzz();           // -P + P
  auto dev = cuda::g1_madd(acc, pts);
  for (size_t i = 0; i < acc.size(); ++i) {
    INFO("element " << i);
    CHECK(dev[i].to_jacobian() == acc[i].add(pts[i]).to_jacobian());
  }
}

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
  const cuda::NttPlan plans[] = {{},        {2, 1},     {4, 3},     {10, 8},   {10, 9},   {10, 10}, {11, 9},
                                 {11, 10},  {11, 11},   {0, 0, 2},  {0, 0, 4}, {4, 3, 2}, {10, 9, 4}, {11, 10, 2}};
  for (const cuda::NttPlan plan : plans) {
    for (unsigned log_n : {1u, 5u, 10u, 11u, 12u, 21u}) {
      if (log_n > 12 && plan.tile_log && plan.max_stages < 8) continue;  // 21 one-stage passes: slow, nothing new
      INFO("log_n " << log_n << " tile 2^" << plan.tile_log << " up to " << plan.max_stages << " stages per pass, "
                    << plan.occupancy << " blocks per SM");
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
  const cuda::NttPlan plans[] = {{}, {2, 1}, {4, 3}, {10, 9}, {11, 10}, {0, 0, 2}, {0, 0, 4}};
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
                     << plan.max_stages << " stages per pass, " << plan.occupancy << " blocks per SM");
        CHECK(cuda::compute_h(conv, w, n, plan) == cpu);
      }
    }
  }
}

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

namespace {

struct PorepFixture {
  std::vector<circuits::PorepCircuit> circuits;
  groth16::ProvingKey pk;
  std::vector<r1cs::ProvingAssignment<>> pas;
  PorepFixture(const circuits::PorepParams& P, uint32_t partitions) {
    for (uint32_t i = 0; i < partitions; ++i) circuits.push_back(circuits::PorepCircuit::generate(P, 11 + i));
    pk = groth16::generate_keys(synth::record_matrices(circuits[0]), 5);
    pas = synth::synthesize_partitions(circuits);
  }
  std::vector<groth16::Witness> witnesses() const {
    std::vector<groth16::Witness> ws;
    for (auto& pa : pas) ws.push_back({pa.a(), pa.b(), pa.c(), pa.input_assignment(), pa.aux_assignment()});
    return ws;
  }
};

// 3 partitions with a labeling layer (SHA-256 bits: 0/1 scalars, and Poseidon field elements),
// r and s from a fresh seed, and the CPU backend's proofs to compare with.
struct PorepBatch {
  PorepFixture f{{2, 1, 1, 4}, 3};
  uint64_t seed = fresh_seed();
  std::vector<groth16::Witness> ws = f.witnesses();
  std::vector<groth16::Randomness> rs;
  std::vector<groth16::Proof> cpu;
  PorepBatch() {
    for (size_t i = 0; i < ws.size(); ++i) rs.push_back(groth16::Randomness::from_seed(seed + i));
    cpu = groth16::make_cpu_backend()->prove_batch(f.pk, ws, rs);
  }
};

}  // namespace

TEST_CASE("GPU proofs of the PoRep-shaped circuit verify, equal the CPU's, and pinning changes nothing") {
  PorepBatch batch;
  INFO("r, s seed " << batch.seed);
  const auto& [f, seed, ws, rs, cpu] = batch;
  auto pageable = cuda::make_cuda_backend({})->prove_batch(f.pk, ws, rs);
  auto pinned = cuda::make_cuda_backend({.pin_abc = true})->prove_batch(f.pk, ws, rs);
  // The assignment's MSMs at another window width (the benchmarks' zc axis) give the same proofs.
  auto narrow = cuda::make_cuda_backend({.assignment_window_bits = 5})->prove_batch(f.pk, ws, rs);
  auto bits12 = cuda::make_cuda_backend({.assignment_window_bits = 12})->prove_batch(f.pk, ws, rs);
  // msm_h at windows wider and narrower than its rule's (the benchmarks' hc axis), in the
  // overlapped schedule too.
  auto h_wide = cuda::make_cuda_backend({.h_window_bits = 20})->prove_batch(f.pk, ws, rs);
  auto h_narrow = cuda::make_cuda_backend({.overlap = true, .h_window_bits = 5})->prove_batch(f.pk, ws, rs);
  // Each assignment MSM sorting its own digits, as before the shared sort.
  auto own_sort = cuda::make_cuda_backend({.share_digits = false})->prove_batch(f.pk, ws, rs);
  // Every digit sorted, zeros included, as before zero digits were left out.
  auto all_digits = cuda::make_cuda_backend({.skip_zero_digits = false})->prove_batch(f.pk, ws, rs);
  REQUIRE(cpu.size() == ws.size());
  for (size_t i = 0; i < ws.size(); ++i) {
    INFO("partition " << i);
    CHECK(groth16::verify(f.pk.vk, pageable[i], f.circuits[i].public_inputs()));
    CHECK(pageable[i] == cpu[i]);
    CHECK(pinned[i] == pageable[i]);
    CHECK(narrow[i] == pageable[i]);
    CHECK(own_sort[i] == pageable[i]);
    CHECK(all_digits[i] == pageable[i]);
    CHECK(bits12[i] == pageable[i]);
    CHECK(h_wide[i] == pageable[i]);
    CHECK(h_narrow[i] == pageable[i]);
  }
  for (unsigned bad : {1u, 21u}) {
    INFO("window bits " << bad);
    CHECK_THROWS_AS(cuda::make_cuda_backend({.assignment_window_bits = bad}), std::invalid_argument);
    CHECK_THROWS_AS(cuda::make_cuda_backend({.h_window_bits = bad}), std::invalid_argument);
  }
  for (const cuda::Staging& bad : {cuda::Staging{.threads = 257}, cuda::Staging{.buffer_bytes = (size_t(1) << 30) + 1},
                                   cuda::Staging{.buffers = 65}})
    CHECK_THROWS_AS(cuda::make_cuda_backend({.upload = bad}), std::invalid_argument);
  // The backend from the registry (the build's pinning choice) agrees too. Every CUDA backend
  // here runs msm_b_g2 where this build puts it (CUZK_GPU_G2): the phases say which path ran.
  cuda::register_backend();
  PhaseLog log;
  instr::set_sink(&log);
  auto reg = groth16::make_backend("cuda")->prove_batch(f.pk, ws, rs);
  instr::set_sink(nullptr);
  CHECK(reg == cpu);
  const bool g2_on_gpu = cuda::msm_b_g2_on_gpu();
  INFO("msm_b_g2 ran " << (g2_on_gpu ? "on the GPU (CUZK_GPU_G2=ON)" : "on CPU threads (CUZK_GPU_G2=OFF)"));
  CHECK(g2_on_gpu == bool(CUZK_GPU_G2));  // the library and this test were built with one flag
  CHECK(log.opened["msm_b_g2"] == ws.size());
  CHECK(log.gpu["msm_b_g1"] == ws.size());
  CHECK(log.gpu["msm_b_g2"] == (g2_on_gpu ? ws.size() : 0));  // GPU time only from the device
}

TEST_CASE("staged uploads copy every byte: empty, one byte, buffer edges, many turns of the ring, page-locked") {
  std::mt19937_64 g(fresh_seed());
  constexpr size_t kBuf = 4096;
  // Both fills; per thread, more threads than pieces (len <= kBuf), pieces spread over several
  // threads' rings, and rings that turn many times (3 MiB: 768 pieces).
  for (cuda::Fill fill : {cuda::Fill::split, cuda::Fill::per_thread})
    for (unsigned threads : {2u, 5u})
      for (size_t len : {size_t(0), size_t(1), kBuf - 1, kBuf, kBuf + 1, 10 * kBuf + 3, size_t(3) << 20}) {
        INFO("fill " << (fill == cuda::Fill::split ? "split" : "per_thread") << ", threads " << threads << ", bytes " << len);
        std::vector<uint8_t> src(len);
        for (auto& b : src) b = uint8_t(g());
        for (unsigned buffers : {2u, 3u})
          CHECK(cuda::staged_round_trip(src, {.fill = fill, .threads = threads, .buffer_bytes = kBuf, .buffers = buffers}) == src);
      }
  std::vector<uint8_t> src(10 * kBuf + 3);
  for (auto& b : src) b = uint8_t(g());
  cuda::HostPin pin(src.data(), src.size());
  CHECK(cuda::staged_round_trip(src, {.buffer_bytes = kBuf}) == src);
}

// The overlapped schedule (CUZK_GPU_OVERLAP; here set per backend): an upload thread on a copy
// stream, the assignment first, a, b, c while its MSMs run, the next circuit's assignment into a
// second buffer. Same r and s: the same proofs as the CPU backend's, pinned or not, for a
// batch (the two z buffers in turn, a, b, c reused) and for one circuit.
TEST_CASE("the overlapped proving stage's proofs equal the CPU's; its phases and errors") {
  PorepBatch batch;
  INFO("r, s seed " << batch.seed);
  const auto& [f, seed, ws, rs, cpu] = batch;
  // Pageable inputs staged in pieces of 4 KiB too, both fills (StageOptions::upload), so that a
  // circuit's arrays cross several staging buffers and threads.
  // The last case's MSMs sum their buckets in equal chunks (StageOptions::equal_chunks).
  struct Case {
    bool pin;
    cuda::Staging upload;
    bool equal = false;
  };
  for (const Case& c : {Case{false, {}}, Case{true, {}}, Case{false, {.fill = cuda::Fill::split, .threads = 3, .buffer_bytes = 4096}},
                        Case{false, {.fill = cuda::Fill::per_thread, .threads = 3, .buffer_bytes = 4096}},
                        Case{false, {}, true}}) {
    const bool pin = c.pin;
    INFO("pin_abc " << pin << ", staging " << (c.upload.fill == cuda::Fill::split ? "split" : "per_thread") << " in "
                    << c.upload.buffer_bytes << " bytes (0: the default), equal chunks " << c.equal);
    auto be = cuda::make_cuda_backend({.pin_abc = pin, .overlap = true, .equal_chunks = c.equal, .upload = c.upload});
    PhaseLog log;
    instr::set_sink(&log);
    auto got = be->prove_batch(f.pk, ws, rs);
    instr::set_sink(nullptr);
    CHECK(got == cpu);
    // h2d: the assignment (with the key, the first time) and a, b, c, each timed on the copy
    // stream and reported once per circuit; pin_abc opened for each array and the unpinning.
    CHECK(log.gpu["h2d"] == ws.size());
    CHECK(log.opened["h2d"] == 4 * ws.size());
    CHECK(log.opened["srs"] == 1);
    CHECK(log.opened["pin_abc"] == (pin ? 4 * ws.size() : 0));
    for (const char* ph : {"ntt_h", "msm_h", "msm_l", "msm_a", "msm_b_g1"}) {
      INFO(ph);
      CHECK(log.gpu[ph] == ws.size());
    }
    CHECK(log.gpu["digits"] == ws.size());  // msm_l/digits: the assignment sorted once per circuit
    // The key stays resident; one circuit alone proves the same.
    for (size_t i = 0; i < ws.size(); ++i)
      CHECK(be->prove_batch(f.pk, std::span(ws).subspan(i, 1), std::span(rs).subspan(i, 1))[0] == cpu[i]);
  }
  // Errors on either thread: in h2d (the upload thread) and in msm_l (the compute thread, while
  // the upload thread still copies a, b, c or the next assignment). The error reaches the
  // caller as it was thrown, and the next job proves.
  const FaultReset reset;
  auto be = cuda::make_cuda_backend({.overlap = true});
  fault::set_for_testing("cuda_error_at:h2d");
  try {
    be->prove_batch(f.pk, ws, rs);
    FAIL("the injected CUDA error in h2d did not fail the job");
  } catch (const cuda::CudaError& e) {
    CHECK(std::string(e.what()).find("CUDA error in h2d") != std::string::npos);
  }
  fault::set_for_testing("cuda_oom_at:msm_l");
  CHECK_THROWS_AS(be->prove_batch(f.pk, ws, rs), cuda::DeviceOutOfMemory);
  fault::set_for_testing("");
  CHECK(be->prove_batch(f.pk, ws, rs) == cpu);
}

// The proving stage at the size of a real PoRep partition (2^27 constraints, about 130M). A
// proof at that size cannot be checked against a setup: the setup of a 2^27 domain (2^27 fixed-
// base multiplications per query) takes far longer than a test, and the small real circuits
// have keys of their own small domain. So the key is the bench-only one of the stage benchmark
// (random points repeated from a table of 2^20; prover/circuits/synthetic_partition.hpp), and
// what is checked instead:
//  - A and B exactly: with point i = T[i mod 2^20], sum_i z_i P_i = sum_j T[j] (sum_{i = j mod
//    2^20} z_i), a 2^20-point MSM on the CPU over the folded assignment; so A = alpha + that sum
//    (A query) + r delta, and B likewise in G2 (msm_a and msm_b_g2 at full size, on the device
//    or, without CUZK_GPU_G2, on CPU threads);
//  - C: the serial and the overlapped schedules give the same proof (msm_h, msm_l and msm_b_g1
//    enter only C; H at 2^27 rests on the NTT test above, the MSM on the tests of every size).
TEST_CASE("the proving stage at 2^27: A and B equal sums over the repeated table; both schedules agree", "[large]") {
  constexpr unsigned kLog = 27, kTable = 20;
  std::unique_ptr<circuits::SyntheticPartition> part;
  try {
    part = circuits::make_synthetic_partition(kLog, kTable);
  } catch (const std::bad_alloc&) {
    WARN("not run: the 2^27 partition does not fit this host's memory");
    return;
  }
  const groth16::ProvingKey& pk = part->pk;
  const groth16::Witness w = part->witness();
  const size_t n = size_t(1) << kLog, t = size_t(1) << kTable;
  REQUIRE(pk.num_inputs + pk.num_aux == n);
  // The assignment folded onto the table.
  std::vector<fr_t> folded(t);
  ThreadPool::global().parallel_for(t, [&](size_t b, size_t e) {
    for (size_t j = b; j < e; ++j) {
      fr_t acc = fr_t::zero();
      for (size_t i = j; i < n; i += t) acc += i < w.input.size() ? w.input[i] : w.aux[i - w.input.size()];
      folded[j] = acc;
    }
  });
  const auto rs = groth16::Randomness::from_seed(fresh_seed());
  const auto& vk = pk.vk;
  const g1_affine_t want_a =
      (msm_g1(std::span(pk.a_query.data(), t), folded) + vk.alpha_g1 + vk.delta_g1.to_jacobian().mul(rs.r)).to_affine();
  const g2_affine_t want_b =
      (msm_g2(std::span(pk.b_g2_query.data(), t), folded) + vk.beta_g2 + vk.delta_g2.to_jacobian().mul(rs.s)).to_affine();
  std::optional<groth16::Proof> serial;
  // The serial and overlapped schedules, and the overlapped one with every MSM's bucket sums in
  // equal chunks across buckets (StageOptions::equal_chunks).
  for (auto [overlap, equal] : {std::pair{false, false}, std::pair{true, false}, std::pair{true, true}}) {
    INFO("overlapped " << overlap << ", equal chunks " << equal);
    groth16::Proof p;
    try {
      p = cuda::make_cuda_backend({.overlap = overlap, .equal_chunks = equal})->prove(pk, w, rs);  // one resident key at a time
    } catch (const cuda::DeviceOutOfMemory& e) {
      WARN("not run: the 2^27 proving stage does not fit this device: " << e.what());
      return;
    }
    CHECK(p.a == want_a);
    CHECK(p.b == want_b);
    if (serial) CHECK(p == *serial);
    serial = p;
  }
}

TEST_CASE("a GPU proof of the circom fixture verifies and equals the CPU's") {
  const std::string dir = std::string(CUZK_SOURCE_DIR) + "/tests/fixtures/";
  auto z = interop::read_zkey(dir + "snarkjs/small.zkey");
  auto wires = circom::read_wtns(dir + "circom/small.wtns");
  auto abc = interop::compute_abc(z, wires, "small.wtns");
  auto w = interop::make_witness(z, wires, abc);
  const auto rs = groth16::Randomness::from_seed(fresh_seed());
  auto gpu = cuda::make_cuda_backend({})->prove(z.pk, w, rs);
  auto cpu = groth16::prove_cpu(z.pk, w, rs);
  std::vector<fr_t> publics(wires.begin() + 1, wires.begin() + 1 + z.n_public);
  CHECK(groth16::verify(z.pk.vk, gpu, publics));
  CHECK(gpu == cpu);
}

TEST_CASE("CUDA errors are exceptions naming what was needed") {
  // Mismatched lengths (no points, three scalars) are refused before anything is uploaded.
  std::vector<g1_affine_t> none;
  std::vector<fr_t> sc(3, fr_t::one());
  CHECK_THROWS_AS(cuda::msm_g1(none, sc), std::invalid_argument);
  // An allocation larger than the device reports DeviceOutOfMemory with what and the sizes.
  const cuda::DeviceInfo d = cuda::probe_device();
  try {
    cuda::try_device_alloc(d.total_bytes + (size_t(1) << 30), "the test's oversized buffer");
    FAIL("an allocation over the device's " << d.total_bytes << " bytes succeeded");
  } catch (const cuda::DeviceOutOfMemory& e) {
    const std::string msg = e.what();
    CHECK(msg.find("device out of memory") != std::string::npos);
    CHECK(msg.find("the test's oversized buffer") != std::string::npos);
    CHECK(msg.find("free of") != std::string::npos);
  }
  // The device is usable afterwards.
  std::vector<fr_t> one(1, fr_t::one());
  CHECK(cuda::fr_mul(one, one)[0] == fr_t::one());
}

// GPU time (gpu_ns, CUDA events) is the metric compare judges GPU phases by: it must measure the
// GPU's work, not the host's. A kernel that spins for a known time on the GPU's own clock is
// timed while every core runs a CPU load, so the timing thread has to wait for a core.
TEST_CASE("gpu_ns of a phase whose GPU work is a known sleep kernel is within 5% of it under a CPU load") {
  constexpr uint64_t kSleepNs = 20'000'000;  // long next to the events' microseconds of overhead
  constexpr int kReps = 10;
  cuzk::RecorderOptions ro;
  ro.nvtx = false;
  cuzk::Recorder rec(ro);
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i)
    load.emplace_back([&] {
      volatile uint64_t x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  // One untimed launch first: CUDA loads a kernel's module at its first launch (lazy loading),
  // between the events, which is a first-launch cost (--stable loads eagerly), not GPU work.
  cuda::sleep_phase("sleep", 1000);
  std::vector<double> gpu, wall;
  rec.install();
  for (int i = 0; i < kReps; ++i) {
    rec.take_sample();
    cuda::sleep_phase("sleep", kSleepNs);
    cuzk::Sample s = rec.take_sample();
    REQUIRE(s.phases.count("sleep"));
    REQUIRE(s.phases["sleep"].gpu_ns.has_value());
    gpu.push_back(double(*s.phases["sleep"].gpu_ns));
    wall.push_back(double(s.phases["sleep"].wall_ns));
  }
  rec.uninstall();
  stop = true;
  for (auto& t : load) t.join();
  for (int i = 0; i < kReps; ++i) {
    INFO("repetition " << i << ": gpu_ns " << gpu[i] << ", wall_ns " << wall[i] << " for a " << kSleepNs << " ns kernel");
    CHECK(gpu[i] >= 0.95 * kSleepNs);
    CHECK(gpu[i] <= 1.05 * kSleepNs);
  }
}

#if CUZK_HAVE_GPU_COUNTERS
TEST_CASE("GPU counters per range (CUPTI Range Profiler): known DRAM bytes, compute-bound SM throughput, idle, bad names") {
  namespace gc = cuzk::cuda::gpu_counters;
  constexpr size_t kBytes = size_t(512) << 20;  // 8.5x the H200's L2: the reads come from DRAM
  cuda::ReadBuffer buf(kBytes);
  const std::vector<std::string> metrics = {"dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                            "pcie__read_bytes.sum", "nvlrx__bytes.sum"};
  gc::RangeProfiler prof(metrics);
  INFO("chip " << prof.chip() << ", " << prof.passes() << " passes");
  std::string unavailable;
  for (const auto& st : prof.status()) {
    INFO(st.name << ": " << (st.available ? "available" : st.reason));
    CHECK((st.available || !st.reason.empty()));
    if (!st.available) unavailable = st.name;
  }
  size_t runs = 0;
  prof.collect([&] {
    ++runs;
    prof.push("read");
    buf.read_once();
    prof.pop();
    prof.push("compute");
    cuda::compute_bound(20000);
    prof.pop();
    prof.push("idle");
    prof.pop();
  });
  CHECK(runs == prof.passes());
  auto r = prof.results();
  REQUIRE(r.count("read"));
  REQUIRE(r.count("compute"));
  REQUIRE(r.count("idle"));
  const auto dram = r["read"]["dram__bytes_read.sum"];
  REQUIRE(dram.has_value());
  INFO("DRAM read bytes " << *dram << " for a " << kBytes << "-byte read");
  CHECK(*dram >= 0.9 * kBytes);
  CHECK(*dram <= 1.1 * kBytes);
  const auto sm = r["compute"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"];
  REQUIRE(sm.has_value());
  // Measured 58.8% (docs/counters.md) and 48.8% (2026-12-03, the GPU shared with other work):
  // the check is that a compute-bound kernel reads as busy, far from the idle range's 0.
  CHECK(*sm > 25);
  const auto idle = r["idle"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"];
  CHECK((!idle.has_value() || *idle < 1));
  // A metric that cannot be collected here is null in every range, with its reason above.
  if (!unavailable.empty()) CHECK_FALSE(r["read"][unavailable].has_value());
  // An unknown name is an error before any work.
  CHECK_THROWS_AS(gc::RangeProfiler({"nonsense__metric.sum"}), gc::GpuCounterError);
}
#endif  // CUZK_HAVE_GPU_COUNTERS

// Fault injection on the device (docs/reliability.md): a job that runs out of device memory or
// hits a CUDA error mid-stage fails with the reason, gives back every device buffer it held,
// and the same backend proves the next job. Run alone: `test_gpu "[faults]"`.
TEST_CASE("a device fault mid-proof fails the job, frees device memory, and the next job proves", "[faults]") {
  // A circuit whose key and a/b/c take tens of MiB on the device, so that a leak would show
  // beyond cudaMemGetInfo's granularity (2 MiB pages).
  circuits::PorepParams P{1, 0, 0, 8};
  while (circuits::PorepCircuit::shape(P).constraints < (1u << 16) && P.challenges < 64) P.challenges *= 2;
  PorepFixture f(P, 1);
  auto ws = f.witnesses();
  const std::vector<groth16::Randomness> rs{groth16::Randomness::from_seed(fresh_seed())};
  constexpr size_t kSlack = size_t(4) << 20;
  const FaultReset reset;

  auto be = cuda::make_cuda_backend(cuda::build_stage_options());
  const size_t free0 = cuda::probe_device().free_bytes;

  // A CUDA error in ntt_h: the key and a/b/c are on the device by then.
  fault::set_for_testing("cuda_error_at:ntt_h");
  try {
    be->prove_batch(f.pk, ws, rs);
    FAIL("the injected CUDA error did not fail the job");
  } catch (const cuda::CudaError& e) {
    CHECK(std::string(e.what()).find("CUDA error in ntt_h") != std::string::npos);
    CHECK(std::string(e.what()).find("injected") != std::string::npos);
  }
  const size_t free1 = cuda::probe_device().free_bytes;
  CHECK(free1 + kSlack >= free0);

  // The next job on the same backend proves and verifies; its buffers stay resident.
  auto ok = be->prove_batch(f.pk, ws, rs);
  REQUIRE(ok.size() == 1);
  CHECK(groth16::verify(f.pk.vk, ok[0], f.circuits[0].public_inputs()));
  const size_t free2 = cuda::probe_device().free_bytes;
  INFO("free: fresh " << free0 << ", after the error " << free1 << ", after a proof " << free2);
  REQUIRE(free2 + 4 * kSlack < free0);  // the job's footprint is visible: a leak could be seen

  // Out of device memory in msm_h, and with CUZK_GPU_G2 in msm_b_g2 (a GPU phase then, whose G2
  // query and MSM buffers shared with the G1 MSMs must go too): DeviceOutOfMemory, everything is
  // given back again, and the next job proves.
  std::vector<std::string> oom_at = {"msm_h"};
  if (cuda::msm_b_g2_on_gpu()) oom_at.push_back("msm_b_g2");
  for (const std::string& phase : oom_at) {
    INFO("out of memory in " << phase);
    fault::set_for_testing("cuda_oom_at:" + phase);
    CHECK_THROWS_AS(be->prove_batch(f.pk, ws, rs), cuda::DeviceOutOfMemory);
    const size_t free3 = cuda::probe_device().free_bytes;
    INFO("after the out-of-memory " << free3);
    CHECK(free3 + kSlack >= free0);
    fault::set_for_testing("");
    auto again = be->prove_batch(f.pk, ws, rs);
    CHECK(again == ok);  // same r, s: the same proof
  }
}

// The engine (through `cuzk-bench engine --backend cuda`) reports the failed job and serves the
// others.
TEST_CASE("cuzk-bench engine on the GPU keeps serving after an injected out-of-memory", "[faults]") {
  const char* bench = std::getenv("CUZK_BENCH");
  if (!bench || !*bench) {
    WARN("CUZK_BENCH is not set (ctest sets it): not run");
    return;
  }
  char tmpl[] = "/tmp/cuzk-gpu-fault-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string cmd = "cd '" + dir + "' && CUZK_INJECT_FAULT=cuda_oom_at:msm_h '" + bench +
                          "' engine --backend cuda --jobs 3 --partitions 1 --challenges 1 --depth 4 --counters '' "
                          "--out e.jsonl >out.txt 2>err.txt";
  const int st = std::system(cmd.c_str());
  auto slurp = [&](const std::string& name) {
    std::ifstream in(dir + "/" + name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string out = slurp("out.txt"), err = slurp("err.txt"), results = slurp("e.jsonl");
  INFO(out << err);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 1);
  CHECK(out.find("1 JOB(S) FAILED") != std::string::npos);
  CHECK(err.find("device out of memory in msm_h") != std::string::npos);
  size_t samples = 0;
  for (size_t p = results.find("\"type\":\"sample\""); p != std::string::npos; p = results.find("\"type\":\"sample\"", p + 1))
    ++samples;
  CHECK(samples == 2);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // best effort: a leftover temporary folder fails nothing
}
