// CPU MSM against naive double-and-add sums.
#include <random>
#include <vector>

#include "catch.hpp"
#include "cuda/msm/window_sum.hpp"
#include "prover/ff/fp_ifma.hpp"
#include "prover/msm/msm.hpp"
#include "prover/util/thread_pool.hpp"

using namespace cuzk;

template <class Affine, class Jac>
static Jac naive(const std::vector<Affine>& p, const std::vector<fr_t>& s) {
  Jac acc = Jac::infinity();
  for (size_t i = 0; i < p.size(); ++i) acc = acc + p[i].to_jacobian().mul(s[i]);
  return acc;
}

template <class Jac>
static std::vector<typename Jac::affine_type> random_points(size_t n, const Jac& gen, std::mt19937_64& g) {
  std::vector<typename Jac::affine_type> pts(n);
  for (auto& p : pts) p = gen.mul(fr_t::random(g)).to_affine();
  return pts;
}

TEST_CASE("signed digits recompose the scalar") {
  std::mt19937_64 g(std::random_device{}());
  for (unsigned c : {2u, 5u, 11u, 16u}) {
    for (int t = 0; t < 20; ++t) {
      uint64_t s[4];
      fr_t::random(g).to_canonical(s);
      // recompose sum d_w 2^(wc) as an fr_t and compare
      fr_t acc = fr_t::zero(), base = fr_t::one(), step = fr_t::from_u64(2).pow(uint64_t(c));
      for (unsigned w = 0; w * c < 256 + c; ++w) {
        int d = msm_signed_digit(s, w, c);
        REQUIRE(d <= (1 << (c - 1)));
        REQUIRE(d >= -(1 << (c - 1)));
        fr_t fd = fr_t::from_u64(uint64_t(d < 0 ? -d : d));
        acc += d < 0 ? -(fd * base) : fd * base;
        base *= step;
      }
      uint64_t back[4];
      acc.to_canonical(back);
      for (int i = 0; i < 4; ++i) REQUIRE(back[i] == s[i]);
    }
  }
}

TEST_CASE("G1 MSM equals the naive sum: several sizes, zero scalars, repeated and infinity points") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  ThreadPool pool(2);
  const g1_jacobian_t gen = g1_generator().to_jacobian();
  for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(17), size_t(100), size_t(257), size_t(1500)}) {
    INFO("n " << n);
    auto pts = random_points(n, gen, g);
    std::vector<fr_t> sc(n);
    for (auto& s : sc) s = fr_t::random(g);
    if (n > 3) {
      sc[1] = fr_t::zero();
      pts[2] = pts[0];                       // repeated point
      pts[3] = g1_affine_t::infinity();      // point at infinity
      sc[n - 1] = -fr_t::one();              // r - 1: the largest scalar
    }
    auto expect = naive<g1_affine_t, g1_jacobian_t>(pts, sc);
    REQUIRE(msm_g1(pts, sc, &pool) == expect);
    for (unsigned c : {2u, 7u, 13u}) REQUIRE(msm_g1(pts, sc, &pool, c) == expect);
  }
}

// The device MSM's window reduction (cuda/msm/window_sum.hpp), its levels run here on the host with
// the kernel's own segment function, against the plain running sum over all buckets; in G1 and
// G2, the two groups the kernel is built for. The widths cover one level (2 and 16 buckets), two
// (32: a full and a one-segment level; 2^9: a short last level) and four (2^12 with segments of
// 4). Buckets at infinity and repeated ones take the additions' special cases.
template <class Jac>
static void check_window_levels(const Jac& gen, std::mt19937_64& g, std::initializer_list<std::pair<uint32_t, uint32_t>> widths) {
  using Xyzz = xyzz_t<typename Jac::field_t, typename Jac::config_t>;
  const auto table = random_points(64, gen, g);
  for (auto [per_window, seg_len] : widths) {
    INFO("buckets " << per_window << " segments of " << seg_len);
    const uint32_t windows = 3;
    std::vector<Xyzz> buckets(size_t(windows) * per_window);
    for (size_t i = 0; i < buckets.size(); ++i)
      buckets[i] = i % 5 == 2 ? Xyzz::infinity() : Xyzz::from_affine(table[g() % table.size()]);
    if (per_window > 2) buckets[1] = buckets[2] = Xyzz::from_affine(table[0]);
    // The levels as reduce_windows launches them: a thread per segment of every window.
    std::vector<Xyzz> x = buckets, t_prev, t, r;
    for (const cuda::WindowLevel& lv : cuda::window_levels(per_window, seg_len)) {
      const uint32_t segs = lv.segments();
      t.assign(size_t(windows) * segs, {});
      r.assign(t.size(), {});
      for (uint32_t id = 0; id < windows * segs; ++id) {
        const size_t at = size_t(id / segs) * lv.count + size_t(id % segs) * lv.len;
        cuda::window_segment(x.data() + at, lv.first ? nullptr : t_prev.data() + at, lv, t[id], r[id]);
      }
      x = r;
      t_prev = t;
    }
    REQUIRE(t_prev.size() == windows);
    for (uint32_t w = 0; w < windows; ++w) {
      Xyzz running = Xyzz::infinity(), expect = Xyzz::infinity();
      for (uint32_t b = per_window; b-- > 0;) {
        running = running.add(buckets[size_t(w) * per_window + b]);
        expect = expect.add(running);  // sum_b (b + 1) B_b
      }
      CHECK(t_prev[w].to_jacobian() == expect.to_jacobian());
    }
  }
}

TEST_CASE("the device MSM's window reduction by levels equals the running sum, in G1 and G2") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  CHECK(cuda::window_levels(1u << 19, 16).size() == 5);  // 2^19 -> 2^15 -> 2^11 -> 2^7 -> 2^3 -> 1
  check_window_levels(g1_generator().to_jacobian(), g, {{2, 16}, {16, 16}, {32, 16}, {512, 16}, {4096, 4}});
  check_window_levels(g2_generator().to_jacobian(), g, {{2, 16}, {32, 16}, {512, 16}});
}

TEST_CASE("G1 MSM of all-zero scalars is infinity; mismatched sizes are rejected") {
  std::mt19937_64 g(1);
  auto pts = random_points(50, g1_generator().to_jacobian(), g);
  std::vector<fr_t> zero(50, fr_t::zero());
  REQUIRE(msm_g1(pts, zero).is_infinity());
  std::vector<fr_t> short_sc(49, fr_t::one());
  REQUIRE_THROWS(msm_g1(pts, short_sc));
}

TEST_CASE("G2 MSM equals the naive sum") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  const g2_jacobian_t gen = g2_generator().to_jacobian();
  for (size_t n : {size_t(1), size_t(9), size_t(70)}) {
    auto pts = random_points(n, gen, g);
    std::vector<fr_t> sc(n);
    for (auto& s : sc) s = fr_t::random(g);
    if (n > 2) sc[0] = fr_t::zero();
    REQUIRE(msm_g2(pts, sc) == (naive<g2_affine_t, g2_jacobian_t>(pts, sc)));
  }
}

TEST_CASE("MSMs of mostly-bit scalars (the zero/one split) equal sums of small MSMs") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  // Above the split threshold (4096): half 0, most of the rest 1, a few full-width values.
  const size_t n = 6000;
  const g1_jacobian_t g1 = g1_generator().to_jacobian();
  auto pts = random_points(n, g1, g);
  std::vector<fr_t> s(n);
  for (size_t i = 0; i < n; ++i) {
    const auto r = g() % 10;
    s[i] = r < 5 ? fr_t::zero() : r < 9 ? fr_t::one() : fr_t::random(g);
  }
  pts[7] = g1_affine_t::infinity();
  s[7] = fr_t::one();  // a one on the point at infinity
  // Reference: the same sum in pieces below the threshold (plain Pippenger each).
  g1_jacobian_t ref = g1_jacobian_t::infinity();
  for (size_t b = 0; b < n; b += 2000)
    ref = ref + msm_g1(std::span(pts).subspan(b, 2000), std::span<const fr_t>(s).subspan(b, 2000));
  CHECK(msm_g1(pts, s) == ref);
  // G2 takes the same path.
  const g2_jacobian_t g2 = g2_generator().to_jacobian();
  auto q = random_points(4500, g2, g);
  std::vector<fr_t> s2(s.begin(), s.begin() + 4500);
  g2_jacobian_t ref2 = msm_g2(std::span(q).first(2250), std::span<const fr_t>(s2).first(2250)) +
                       msm_g2(std::span(q).subspan(2250), std::span<const fr_t>(s2).subspan(2250));
  CHECK(msm_g2(q, s2) == ref2);
  // Canonical scalars (the CPU prover converts once for several MSMs) take the same split.
  const CanonicalScalars c2 = to_canonical(s2);
  CHECK(msm_g2_canonical(q, c2.data(), c2.size()) == ref2);
  // The assignment in two parts (input, aux), as the GPU backend's msm_b_g2 passes it: the
  // split reads Montgomery form across the seam; with full-width scalars (no split) all are
  // converted.
  for (size_t seam : {size_t(0), size_t(1), size_t(3), size_t(2250), size_t(4500)}) {
    INFO("seam " << seam);
    const std::span<const fr_t> all(s2);
    CHECK(msm_g2(q, all.first(seam), all.subspan(seam)) == ref2);
  }
  std::vector<fr_t> full(4500);
  for (auto& x : full) x = fr_t::random(g);
  const std::span<const fr_t> fs(full);
  CHECK(msm_g2(q, fs.first(2), fs.subspan(2)) == msm_g2(q, fs));
}

TEST_CASE("batched affine sums handle doublings, negations and infinity") {
  std::mt19937_64 g(std::random_device{}());
  const g1_jacobian_t g1 = g1_generator().to_jacobian();
  auto pts = random_points(37, g1, g);
  pts[3] = pts[2];    // P + P in one pair: a doubling
  pts[5] = -pts[4];   // P + (-P): infinity
  pts[9] = g1_affine_t::infinity();
  pts[20] = pts[0];   // equal points meeting at a later level is also possible
  g1_jacobian_t ref = g1_jacobian_t::infinity();
  for (auto& p : pts) ref = ref + p.to_jacobian();
  auto scratch = pts;
  CHECK(sum_affine_batched(scratch) == ref);
  std::vector<g1_affine_t> none, one{pts[0]};
  CHECK(sum_affine_batched(none).is_infinity());
  CHECK(sum_affine_batched(one) == pts[0].to_jacobian());
  std::vector<g1_affine_t> cancel{pts[4], pts[5]};
  CHECK(sum_affine_batched(cancel).is_infinity());
}

// Windows of 11 bits hold 1024 buckets: with a few thousand points each task fills them with
// batched affine additions (msm.cpp, AffineBatch), where windows of 5 bits use XYZZ buckets.
TEST_CASE("MSMs with batched affine buckets equal the naive sum, also on repeated and opposite points") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  ThreadPool pool(2);
  const g1_jacobian_t gen = g1_generator().to_jacobian();
  const size_t n = 2500;
  auto pts = random_points(n, gen, g);
  std::vector<fr_t> sc(n);
  for (auto& s : sc) s = fr_t::random(g);
  REQUIRE(msm_g1(pts, sc, &pool, 11) == (naive<g1_affine_t, g1_jacobian_t>(pts, sc)));
  // Six points and their negations with scalars below 64: the same bucket meets the same point
  // (a doubling) and its negation (infinity) inside one batch, in window 0 and window 1.
  auto few = random_points(6, gen, g);
  std::vector<g1_affine_t> rep(n);
  std::vector<fr_t> small(n);
  for (size_t i = 0; i < n; ++i) {
    rep[i] = (i / 6) % 2 ? -few[i % 6] : few[i % 6];
    small[i] = fr_t::from_u64(1 + g() % 63);
  }
  REQUIRE(msm_g1(rep, small, &pool, 11) == (naive<g1_affine_t, g1_jacobian_t>(rep, small)));
  REQUIRE(msm_g1(rep, small, &pool, 5) == (naive<g1_affine_t, g1_jacobian_t>(rep, small)));
  // G2: the batched buckets (c = 11) against the XYZZ ones (c = 5), on full-width scalars.
  const g2_jacobian_t gen2 = g2_generator().to_jacobian();
  auto q = random_points(n, gen2, g);
  REQUIRE(msm_g2(q, sc, &pool, 11) == msm_g2(q, sc, &pool, 5));
}

// The ones of a mostly-bit MSM are summed in 512 lanes (msm.cpp, sum_indexed): points repeating
// with a period dividing 512 meet themselves and their negations in a lane.
TEST_CASE("mostly-one MSMs on repeated and opposite points equal the plain sum") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  ThreadPool pool(2);
  const g2_jacobian_t gen = g2_generator().to_jacobian();
  auto few = random_points(4, gen, g);
  const size_t n = 5000;
  std::vector<g2_affine_t> pts(n);
  std::vector<fr_t> s(n, fr_t::one());
  g2_jacobian_t ref = g2_jacobian_t::infinity();
  for (size_t i = 0; i < n; ++i) {
    pts[i] = (i / 1024) % 3 == 1 ? -few[i % 4] : few[i % 4];
    if (g() % 4 == 0) s[i] = fr_t::zero();
    if (i % 97 == 0) s[i] = fr_t::from_u64(3);
    if (!s[i].is_zero()) ref = ref + pts[i].to_jacobian().mul(s[i]);
  }
  CHECK(msm_g2(pts, s, &pool) == ref);
}

// The batched additions of both groups run eight lanes at a time with AVX-512 IFMA where the CPU
// has it (prover/msm/affine_batch_ifma.cpp): both paths must give the naive sum, on the buckets
// (c = 11, full-width scalars, also points meeting themselves and their negations inside a batch)
// and, in G2, on the ones' running sums (mostly-one scalars on repeated and opposite points).
template <class Affine, class Jac, class Msm>
void check_ifma_against_naive(const Jac& gen, Msm msm) {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  ThreadPool pool(2);
  const size_t n = 2500;
  auto pts = random_points(n, gen, g);
  auto few = random_points(5, gen, g);
  std::vector<Affine> rep(n);
  std::vector<fr_t> full(n), small(n), bits(n);
  for (size_t i = 0; i < n; ++i) {
    full[i] = fr_t::random(g);
    rep[i] = (i / 5) % 2 ? -few[i % 5] : few[i % 5];
    small[i] = fr_t::from_u64(1 + g() % 63);
    bits[i] = g() % 3 ? fr_t::one() : g() % 2 ? fr_t::zero() : fr_t::from_u64(2 + g() % 1000);
  }
  rep[17] = Affine::infinity();
  const auto ref_full = naive<Affine, Jac>(pts, full);
  const auto ref_small = naive<Affine, Jac>(rep, small);
  const auto ref_bits = naive<Affine, Jac>(rep, bits);
  // 9000 mostly-one scalars: above the split threshold, over 512 ones per chunk
  std::vector<Affine> rep9(9000);
  std::vector<fr_t> bits9(9000);
  Jac ref9 = Jac::infinity();
  for (size_t i = 0; i < rep9.size(); ++i) {
    rep9[i] = rep[i % n];
    bits9[i] = bits[i % n];
    if (!bits9[i].is_zero()) ref9 = ref9 + rep9[i].to_jacobian().mul(bits9[i]);
  }
  for (bool on : {true, false}) {
    INFO("IFMA " << (on ? "allowed" : "off") << ", present: " << cpu_has_ifma());
    set_ifma_enabled(on);
    CHECK(msm(pts, full, &pool, 11) == ref_full);
    CHECK(msm(rep, small, &pool, 11) == ref_small);
    CHECK(msm(rep, bits, &pool, 0) == ref_bits);
    CHECK(msm(rep9, bits9, &pool, 0) == ref9);
  }
  set_ifma_enabled(true);
}

TEST_CASE("G1 MSMs with and without AVX-512 IFMA equal the naive sum", "[ifma]") {
  check_ifma_against_naive<g1_affine_t>(g1_generator().to_jacobian(), [](auto&&... a) { return msm_g1(a...); });
}

TEST_CASE("G2 MSMs with and without AVX-512 IFMA equal the naive sum", "[ifma]") {
  check_ifma_against_naive<g2_affine_t>(g2_generator().to_jacobian(), [](auto&&... a) { return msm_g2(a...); });
}
