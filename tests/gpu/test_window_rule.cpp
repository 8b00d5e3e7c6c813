// The window rules (cuda/msm/msm_params.hpp): the usual one for full-width scalars (gpu_msm_window_bits,
// widths measured on the H200), the proving stage's assignment's (gpu_msm_window_bits_sparse)
// with its sample, and the later rounds' chunk: host code, run everywhere (CI has no GPU). For full-width scalars the
// assignment's rule is the usual one; for an assignment's mix of mostly 0 and 1 it gives each
// window about 2^8 times fewer buckets than it has non-zero digits, which is what the usual rule
// gives full-width scalars up to 2^23 (and, cut per bucket as the assignment's MSMs are, to 2^25).
#include <algorithm>
#include <cmath>
#include <vector>

#include "catch.hpp"
#include "cuda/msm/msm.cuh"
#include "prover/circuits/synthetic_partition.hpp"
#include "prover/msm/msm.hpp"

using namespace cuzk;

namespace {
// `count` values: shares `zero` of 0 and `one` of 1 (placed at random), the rest random.
std::vector<fr_t> mix(size_t count, double zero, double one, uint64_t seed) {
  std::vector<fr_t> v = circuits::random_scalars(count, seed);
  circuits::apply_value_mix(v, {zero, one}, seed + 1);
  return v;
}
// The share of non-zero digits over all windows of c bits, counted digit by digit.
double nonzero_share(const std::vector<fr_t>& v, unsigned c) {
  const unsigned windows = (256 + c - 1) / c;
  size_t nz = 0;
  for (const fr_t& x : v) {
    uint64_t s[4];
    x.to_canonical(s);
    for (unsigned w = 0; w < windows; ++w) nz += msm_signed_digit(s, w, c) != 0;
  }
  return double(nz) / (double(v.size()) * windows);
}
}  // namespace

// The widths the H200 measured fastest (cuda/msm/msm_params.hpp): up to 2^23 scalars about n / 2^8 buckets,
// at most 16 bits; 20 bits above, with equal chunks up to 2^26. Cut per bucket (equal chunks
// turned off, and the sparse rule's MSMs): 16 bits up to 2^25, 19 up to 2^26, 20 above.
TEST_CASE("the window rule for full-width scalars: n / 2^8 buckets up to 2^23, 20 bits above") {
  CHECK(cuda::gpu_msm_window_bits(1) == 6);
  CHECK(cuda::gpu_msm_window_bits(size_t(1) << 20) == 13);
  CHECK(cuda::gpu_msm_window_bits(size_t(1) << 23) == 16);
  CHECK(cuda::gpu_msm_window_bits((size_t(1) << 23) + 1) == 20);
  CHECK(cuda::gpu_msm_window_bits((size_t(1) << 24) - 1) == 20);
  CHECK(cuda::gpu_msm_window_bits(size_t(1) << 26) == 20);
  CHECK(cuda::gpu_msm_window_bits((size_t(1) << 27) - 1) == 20);
  CHECK(cuda::gpu_msm_window_bits(size_t(1) << 30) == 20);
}

TEST_CASE("the window rule for cuts per bucket: 16 bits up to 2^25, 19 up to 2^26, 20 above") {
  CHECK(cuda::gpu_msm_window_bits(1, false) == 6);
  CHECK(cuda::gpu_msm_window_bits(size_t(1) << 20, false) == 13);
  CHECK(cuda::gpu_msm_window_bits((size_t(1) << 24) - 1, false) == 16);
  CHECK(cuda::gpu_msm_window_bits(size_t(1) << 25, false) == 16);
  CHECK(cuda::gpu_msm_window_bits((size_t(1) << 25) + 1, false) == 19);
  CHECK(cuda::gpu_msm_window_bits((size_t(1) << 26) - 1, false) == 19);
  CHECK(cuda::gpu_msm_window_bits(size_t(1) << 26, false) == 19);
  CHECK(cuda::gpu_msm_window_bits((size_t(1) << 26) + 1, false) == 20);
  CHECK(cuda::gpu_msm_window_bits((size_t(1) << 27) - 1, false) == 20);
  CHECK(cuda::gpu_msm_window_bits(size_t(1) << 30, false) == 20);
  // Up to 2^23 both cuts take the same widths.
  for (size_t n : {size_t(1), size_t(1000), size_t(1) << 16, (size_t(1) << 22) + 5, size_t(1) << 23})
    CHECK(cuda::gpu_msm_window_bits(n, false) == cuda::gpu_msm_window_bits(n));
}

// Equal chunks where the sorted digits average at most 128 a bucket: so with the rule's widths,
// from just above 2^23 scalars (20 bits, 13 windows) up to 2^26, not at 2^23 and below (16 bits
// and under: about 256 digits a bucket) nor above 2^26.
TEST_CASE("the equal-chunk rule: at most 128 sorted digits a bucket") {
  CHECK(cuda::gpu_msm_equal_chunks(0, 1));
  CHECK(cuda::gpu_msm_equal_chunks(128, 1));
  CHECK_FALSE(cuda::gpu_msm_equal_chunks(129, 1));
  CHECK(cuda::gpu_msm_equal_chunks(size_t(128) << 19, size_t(1) << 19));
  auto by_rule = [](size_t n) {
    const unsigned c = cuda::gpu_msm_window_bits(n);
    const size_t windows = (256 + c - 1) / c;
    return cuda::gpu_msm_equal_chunks(windows * n, windows << (c - 1));
  };
  CHECK_FALSE(by_rule(size_t(1) << 20));
  CHECK_FALSE(by_rule(size_t(1) << 23));
  CHECK(by_rule((size_t(1) << 23) + 1));
  CHECK(by_rule((size_t(1) << 24) - 1));
  CHECK(by_rule(size_t(1) << 25));
  CHECK(by_rule(size_t(1) << 26));
  CHECK_FALSE(by_rule((size_t(1) << 26) + 1));
  CHECK_FALSE(by_rule((size_t(1) << 27) - 1));
}

namespace {
// The later rounds of the bucket sums as Msm::sum_runs runs them over runs of `lens` partial
// sums: the rounds, and the additions one after another on the longest run's path (a thread adds
// min(k, len) - 1 of its run's partial sums in a round of chunks of k).
struct LaterRounds {
  unsigned rounds = 0, serial = 0;
};
LaterRounds later_rounds(std::vector<size_t> lens, unsigned sms, uint32_t chunk, bool fill) {
  LaterRounds r;
  size_t tasks = 0;
  for (size_t l : lens) tasks += l;
  while (tasks > lens.size()) {
    const uint32_t k = fill ? cuda::gpu_msm_later_chunk(tasks, sms, chunk) : chunk;
    size_t longest = 0;
    tasks = 0;
    for (size_t& l : lens) {
      longest = std::max(longest, l);
      l = (l + k - 1) / k;
      tasks += l;
    }
    r.serial += unsigned(std::min<size_t>(k, longest) - 1);
    ++r.rounds;
  }
  return r;
}
}  // namespace

TEST_CASE("the later rounds' chunk: one full round of threads, within [4, chunk]") {
  using cuda::gpu_msm_later_chunk;
  const unsigned sms = 132;  // an H100 or H200
  const size_t fill = size_t(sms) * cuda::msm_params::kFillThreadsPerSm;
  CHECK(gpu_msm_later_chunk(size_t(1) << 30, sms, 32) == 32);
  CHECK(gpu_msm_later_chunk(32 * fill, sms, 32) == 32);
  CHECK(gpu_msm_later_chunk(32 * fill - 1, sms, 32) == 31);
  CHECK(gpu_msm_later_chunk(9 * fill, sms, 32) == 9);
  CHECK(gpu_msm_later_chunk(fill, sms, 32) == 4);
  CHECK(gpu_msm_later_chunk(2, sms, 32) == 4);
  // A chunk below 4 (Msm::set_chunk) stays; no SM count reads as one SM.
  CHECK(gpu_msm_later_chunk(2, sms, 2) == 2);
  CHECK(gpu_msm_later_chunk(size_t(1) << 30, sms, 3) == 3);
  CHECK(gpu_msm_later_chunk(10 * 256, 0, 32) == 10);
  // An assignment at 2^24 (PoRep's mix, 12-bit windows): bucket 1 of window 0 holds about 2^23
  // points, 2^18 partial sums after the first round's chunks of 32, beside 22 windows of 2^11
  // buckets with a partial sum or two each. In chunks of 32 its last rounds have 256, 8 and 1
  // threads, each adding 31 partial sums one after another; cut to fill the GPU, the path is
  // under half as long.
  std::vector<size_t> lens(22 << 11, 2);
  lens[0] = size_t(1) << 18;
  const LaterRounds former = later_rounds(lens, sms, 32, false), filled = later_rounds(lens, sms, 32, true);
  CHECK(former.rounds == 4);
  CHECK(former.serial == 31 * 3 + 7);
  CHECK(filled.serial * 2 < former.serial);
  CHECK(filled.rounds <= 9);
  // Full-width scalars at 2^24 (msm_h, equal chunks of 64 at 20 bits): 2 pieces a chunk over
  // 13 windows of 2^19 buckets, one round of 32 either way.
  const std::vector<size_t> pieces(13 << 19, 2);
  CHECK(later_rounds(pieces, sms, 64, true).rounds == 1);
  CHECK(gpu_msm_later_chunk(2 * (size_t(13) << 19), sms, 64) == 64);
}

TEST_CASE("the sparse window rule is the usual one for full-width scalars and an empty sample") {
  const auto full = mix(4096, 0, 0, 1);
  for (size_t n : {size_t(1), size_t(100), size_t(1) << 10, size_t(1) << 20, (size_t(1) << 20) + 1, size_t(1) << 24,
                   size_t(1) << 27}) {
    INFO("n " << n);
    CHECK(cuda::gpu_msm_window_bits_sparse(n, {}) == cuda::gpu_msm_window_bits(n));
    CHECK(cuda::gpu_msm_window_bits_sparse(n, full) == cuda::gpu_msm_window_bits(n));
  }
  // A few zeros and ones among full-width values change nothing (over half the digits stay).
  const auto mostly_full = mix(4096, 0.2, 0.2, 2);
  CHECK(cuda::gpu_msm_window_bits_sparse(size_t(1) << 24, mostly_full) == cuda::gpu_msm_window_bits(size_t(1) << 24));
}

TEST_CASE("the sparse window rule narrows the windows of a PoRep assignment's mix") {
  // docs/cuda-backend.md: a PoRep partition's assignment is 51.6% zero, 47.0% one, 1.4% other.
  const auto porep = mix(8192, 0.516, 0.470, 3);
  // Each width's buckets per window track the non-zero digits per window: the usual rule applied
  // to that count, and a fixed point of it (what the rule settles on).
  for (unsigned log_n = 20; log_n <= 27; ++log_n) {
    const size_t n = size_t(1) << log_n;
    const unsigned c = cuda::gpu_msm_window_bits_sparse(n, porep);
    INFO("2^" << log_n << ": " << c << " bits");
    CHECK(c < cuda::gpu_msm_window_bits(n));
    CHECK(c == cuda::gpu_msm_window_bits(size_t(std::ceil(double(n) * nonzero_share(porep, c))), false));
  }
  // The widths worked out in docs/cuda-backend.md from the shares (about 0.035-0.043 of the
  // windows hold a non-zero digit): 12 bits at 2^24, then one more per doubling.
  CHECK(cuda::gpu_msm_window_bits_sparse(size_t(1) << 24, porep) == 12);
  CHECK(cuda::gpu_msm_window_bits_sparse(size_t(1) << 25, porep) == 13);
  CHECK(cuda::gpu_msm_window_bits_sparse(size_t(1) << 27, porep) == 15);
  // Only zeros: no digit at all, the narrowest width; only ones: one digit a scalar.
  CHECK(cuda::gpu_msm_window_bits_sparse(size_t(1) << 24, std::vector<fr_t>(100, fr_t::zero())) == 6);
  const unsigned ones = cuda::gpu_msm_window_bits_sparse(size_t(1) << 24, std::vector<fr_t>(100, fr_t::one()));
  CHECK(ones == cuda::gpu_msm_window_bits((size_t(1) << 24) / ((256 + ones - 1) / ones), false));
}

TEST_CASE("sample_scalars takes evenly spaced values across both parts") {
  std::vector<fr_t> a, b;
  for (uint64_t i = 0; i < 10; ++i) a.push_back(fr_t::from_u64(i));
  for (uint64_t i = 10; i < 1000; ++i) b.push_back(fr_t::from_u64(i));
  CHECK(cuda::sample_scalars(a, b, 0).empty());
  CHECK(cuda::sample_scalars({}, {}, 5).empty());
  // No more than there are: all of them, in order.
  const auto all = cuda::sample_scalars(a, std::span(b).first(5), 100);
  REQUIRE(all.size() == 15);
  for (uint64_t i = 0; i < 15; ++i) CHECK(all[i] == fr_t::from_u64(i));
  // 10 of 1000: the midpoints of ten equal stretches, the first from a, the rest from b.
  const auto ten = cuda::sample_scalars(a, b, 10);
  REQUIRE(ten.size() == 10);
  for (uint64_t j = 0; j < 10; ++j) CHECK(ten[j] == fr_t::from_u64(100 * j + 50));
  const auto one = cuda::sample_scalars(a, b, 1);
  REQUIRE(one.size() == 1);
  CHECK(one[0] == fr_t::from_u64(500));
}
