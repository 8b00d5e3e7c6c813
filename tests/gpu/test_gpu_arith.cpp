// Device field and curve arithmetic against the host's.
// Run on the GPU machine (skipped elsewhere, see gpu_main.cpp); every random input comes from a
// fresh seed printed with each case, so a failure can be replayed.
#include <vector>

#include "catch.hpp"
#include "cuda/testing/entry_points.hpp"
#include "gpu_test_util.hpp"

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
