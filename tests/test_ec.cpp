// BLS12-381 G1 and G2: curve membership, group laws across the point forms, scalar
// multiplication, subgroup checks and batch normalization.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "catch.hpp"
#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"

using namespace cuzk;

namespace {

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

// G1 cofactor h1 = 0x396c8c005555e1568c00aaab0000aaab (draft-irtf-cfrg-pairing-friendly-curves-11,
// section 4.2.1).
constexpr uint64_t g1_cofactor[2] = {0x8c00aaab0000aaabull, 0x396c8c005555e156ull};

// A point of E(Fp) (resp. E'(Fp2)) with the smallest x = start, start+1, ... that is on the
// curve; such points are almost never in the order-r subgroup (the cofactors are large).
g1_affine_t g1_point_from_small_x(uint64_t start) {
  for (uint64_t x = start;; x++) {
    fp_t fx = fp_t::from_u64(x), y;
    if ((fx.sqr() * fx + g1_config::b()).sqrt(y)) return g1_affine_t::from_xy(fx, y);
  }
}
g2_affine_t g2_point_from_small_x(uint64_t start) {
  for (uint64_t x = start;; x++) {
    fp2_t fx, y;
    fx.c0 = fp_t::from_u64(x);
    fx.c1 = fp_t::one();
    if ((fx.sqr() * fx + g2_config::b()).sqrt(y)) return g2_affine_t::from_xy(fx, y);
  }
}

template <class Jac, class Rng> Jac random_point(const Jac& g, Rng& rng) {
  return g.mul(fr_t::random(rng));
}

// Group laws for one curve, checked in Jacobian, XYZZ, and mixed forms.
template <class Aff, class Jac, class Xyzz, class Rng>
void check_group_laws(const Aff& gen, Rng& rng) {
  Jac g = Jac::from_affine(gen);
  Jac p = random_point(g, rng), q = random_point(g, rng), s = random_point(g, rng);
  Aff pa = p.to_affine(), qa = q.to_affine(), sa = s.to_affine();
  REQUIRE(p.is_on_curve());
  REQUIRE(pa.is_on_curve());
  REQUIRE(!pa.is_infinity());

  SECTION("associativity and commutativity") {
    REQUIRE((p + q) + s == p + (q + s));
    REQUIRE(p + q == q + p);
    REQUIRE((p + qa) + sa == p + (q + sa));  // the same with mixed additions
  }
  SECTION("identity and inverse: P + O = P, P + (-P) = O") {
    REQUIRE(p + Jac::infinity() == p);
    REQUIRE(Jac::infinity() + p == p);
    REQUIRE((p + (-p)).is_infinity());
    REQUIRE((p + (-pa)).is_infinity());
    REQUIRE(Jac::infinity().to_affine().is_infinity());
    REQUIRE((Xyzz::from_affine(pa) + (-pa)).is_infinity());
    REQUIRE((Xyzz::from_affine(pa) + Xyzz::from_affine(-pa)).is_infinity());
    REQUIRE(!(p == Jac::infinity()));
  }
  SECTION("doubling equals adding a point to itself (every form)") {
    Jac d = p.dbl();
    REQUIRE(d.is_on_curve());
    REQUIRE(d == p + p);
    REQUIRE(d == p + pa);  // mixed add falls back to doubling
    Xyzz px = Xyzz::from_affine(pa);
    REQUIRE(px.dbl().to_affine() == d.to_affine());
    REQUIRE((px + pa).to_affine() == d.to_affine());
    REQUIRE((px + px).to_affine() == d.to_affine());
    REQUIRE(Xyzz::dbl_affine(pa).to_affine() == d.to_affine());
    REQUIRE(px.dbl().is_on_curve());
  }
  SECTION("Jacobian, XYZZ and mixed additions agree on a chain of additions") {
    std::vector<Aff> pts;
    for (int i = 0; i < 8; i++) pts.push_back(random_point(g, rng).to_affine());
    pts.push_back(pts[3]);                 // repeated point: doubling path
    pts.push_back(Aff::infinity());        // infinity addend
    Jac jm = Jac::infinity(), jf = Jac::infinity();
    Xyzz xm = Xyzz::infinity(), xf = Xyzz::infinity();
    for (auto& a : pts) {
      jm = jm + a;
      jf = jf + Jac::from_affine(a);
      xm = xm + a;
      xf = xf + Xyzz::from_affine(a);
    }
    REQUIRE(jm == jf);
    REQUIRE(xm == xf);
    REQUIRE(xm.is_on_curve());
    REQUIRE(jm.to_affine() == xm.to_affine());
    REQUIRE(xm.to_jacobian() == jm);
    // the accumulator meets its own negation: P + (-P) in the mixed forms
    REQUIRE((jm + (-jm.to_affine())).is_infinity());
    REQUIRE((xm + (-xm.to_affine())).is_infinity());
    // the accumulator meets itself as an affine point: doubling inside the mixed add
    REQUIRE((xm + xm.to_affine()) == xm.dbl());
  }
  SECTION("projective equality ignores the representation") {
    Jac p2 = p.dbl() + (-p);  // same point, different Z
    REQUIRE(p2 == p);
    REQUIRE(!(p2 == q));
    REQUIRE(p2.to_affine() == pa);
  }
}

template <class Aff, class Jac, class Rng> void check_scalar_mul(const Aff& gen, Rng& rng) {
  Jac g = Jac::from_affine(gen);
  fr_t a = fr_t::random(rng), b = fr_t::random(rng);
  SECTION("(a + b) P = aP + bP and (ab) P = a (bP)") {
    REQUIRE(g.mul(a + b) == g.mul(a) + g.mul(b));
    REQUIRE(g.mul(a * b) == g.mul(b).mul(a));
    REQUIRE(g.mul(-a) == -g.mul(a));
  }
  SECTION("small multiples equal repeated addition") {
    Jac acc = Jac::infinity();
    for (uint64_t k = 0; k < 40; k++) {
      INFO("k = " << k);
      REQUIRE(g.mul_u64(k) == acc);
      REQUIRE(g.mul(fr_t::from_u64(k)) == acc);
      acc = acc + gen;
    }
  }
  SECTION("r P = O and (r - 1) P = -P") {
    REQUIRE(g.mul_limbs(bls12_381_r_limbs, 4).is_infinity());
    uint64_t rm1[4] = {bls12_381_r_limbs[0] - 1, bls12_381_r_limbs[1], bls12_381_r_limbs[2],
                       bls12_381_r_limbs[3]};
    REQUIRE(g.mul_limbs(rm1, 4) == -g);
    REQUIRE(g.mul(a).mul_limbs(bls12_381_r_limbs, 4).is_infinity());
  }
  SECTION("scalar 0 and the point at infinity") {
    REQUIRE(g.mul(fr_t::zero()).is_infinity());
    REQUIRE(Jac::infinity().mul(a).is_infinity());
  }
}

template <class Aff, class Jac, class Xyzz, class Rng> void check_batch(const Aff& gen, Rng& rng) {
  Jac g = Jac::from_affine(gen);
  std::vector<Jac> js;
  std::vector<Xyzz> xs;
  for (int i = 0; i < 33; i++) {
    Jac p = (i % 7 == 3) ? Jac::infinity() : random_point(g, rng);
    if (i == 0) p = Jac::infinity();  // infinity first and last too
    if (i == 32) p = Jac::infinity();
    js.push_back(p);
    xs.push_back(Xyzz::infinity());
    if (!p.is_infinity()) xs.back() = Xyzz::from_affine(p.to_affine()).dbl();  // Z != 1
  }
  std::vector<Aff> ja(js.size()), xa(xs.size());
  batch_to_affine(js.data(), ja.data(), js.size());
  batch_to_affine(xs.data(), xa.data(), xs.size());
  for (size_t i = 0; i < js.size(); i++) {
    INFO("point " << i);
    REQUIRE(ja[i] == js[i].to_affine());
    REQUIRE(xa[i] == xs[i].to_affine());
    REQUIRE(ja[i].is_on_curve());
  }
  REQUIRE(ja[0].is_infinity());
  REQUIRE(ja[3].is_infinity());
  REQUIRE(!ja[1].is_infinity());
  std::vector<Aff> empty_out;
  batch_to_affine(js.data(), empty_out.data(), 0);  // n = 0 is allowed
}

}  // namespace

TEST_CASE("generators are on the curve and in the r-torsion subgroup", "[ec]") {
  REQUIRE(g1_generator().is_on_curve());
  REQUIRE(g2_generator().is_on_curve());
  REQUIRE(g1_generator().in_subgroup());
  REQUIRE(g2_generator().in_subgroup());
  REQUIRE(!g1_generator().is_infinity());
  REQUIRE(!g2_generator().is_infinity());
  // a perturbed generator is off the curve
  g1_affine_t bad1 = g1_generator();
  bad1.y = bad1.y + fp_t::one();
  REQUIRE(!bad1.is_on_curve());
  g2_affine_t bad2 = g2_generator();
  bad2.x.c1 = bad2.x.c1 + fp_t::one();
  REQUIRE(!bad2.is_on_curve());
}

TEST_CASE("subgroup check rejects curve points outside the r-torsion", "[ec]") {
  g1_affine_t p1 = g1_point_from_small_x(1);
  REQUIRE(p1.is_on_curve());
  REQUIRE(!p1.in_subgroup());
  // clearing the cofactor lands in the subgroup
  g1_affine_t c1 = g1_jacobian_t::from_affine(p1).mul_limbs(g1_cofactor, 2).to_affine();
  REQUIRE(c1.is_on_curve());
  REQUIRE(c1.in_subgroup());
  g2_affine_t p2 = g2_point_from_small_x(1);
  REQUIRE(p2.is_on_curve());
  REQUIRE(!p2.in_subgroup());
}

TEST_CASE("fast subgroup checks (endomorphisms) agree with r * P == O", "[ec]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  g1_jacobian_t g1 = g1_jacobian_t::from_affine(g1_generator());
  g2_jacobian_t g2 = g2_jacobian_t::from_affine(g2_generator());
  // the endomorphisms act as the expected eigenvalues on the groups
  REQUIRE(g2_psi(g2) == -g2.mul_by_x_abs(bls12_381_x_abs));
  REQUIRE(!(g1_beta().is_one()));
  REQUIRE((g1_beta().sqr() * g1_beta()).is_one());
  for (int i = 0; i < 6; i++) {
    INFO("round " << i);
    g1_jacobian_t p = g1.mul(fr_t::random(rng));
    g2_jacobian_t q = g2.mul(fr_t::random(rng));
    REQUIRE(g1_config::in_subgroup(p));
    REQUIRE(p.in_subgroup_by_order());
    REQUIRE(g2_config::in_subgroup(q));
    REQUIRE(q.in_subgroup_by_order());
    // off-subgroup points: a small-x curve point, alone and shifted by a subgroup point
    g1_jacobian_t t1 = g1_jacobian_t::from_affine(g1_point_from_small_x(1 + 7 * i));
    g2_jacobian_t t2 = g2_jacobian_t::from_affine(g2_point_from_small_x(1 + 7 * i));
    for (auto bad : {t1, t1 + p}) {
      REQUIRE(!g1_config::in_subgroup(bad));
      REQUIRE(!bad.in_subgroup_by_order());
    }
    for (auto bad : {t2, t2 + q}) {
      REQUIRE(!g2_config::in_subgroup(bad));
      REQUIRE(!bad.in_subgroup_by_order());
    }
    // a point of small order times the cofactor-cleared point: cofactor multiples are in G1
    g1_jacobian_t cleared = t1.mul_limbs(g1_cofactor, 2);
    REQUIRE(g1_config::in_subgroup(cleared));
    REQUIRE(cleared.in_subgroup_by_order());
  }
}

TEST_CASE("G1 group laws", "[ec]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  check_group_laws<g1_affine_t, g1_jacobian_t, g1_xyzz_t>(g1_generator(), rng);
}

TEST_CASE("G2 group laws", "[ec]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  check_group_laws<g2_affine_t, g2_jacobian_t, g2_xyzz_t>(g2_generator(), rng);
}

TEST_CASE("G1 scalar multiplication", "[ec]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  check_scalar_mul<g1_affine_t, g1_jacobian_t>(g1_generator(), rng);
}

TEST_CASE("G2 scalar multiplication", "[ec]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  check_scalar_mul<g2_affine_t, g2_jacobian_t>(g2_generator(), rng);
}

TEST_CASE("batch normalization equals per-point normalization, infinity included", "[ec]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  SECTION("G1") { check_batch<g1_affine_t, g1_jacobian_t, g1_xyzz_t>(g1_generator(), rng); }
  SECTION("G2") { check_batch<g2_affine_t, g2_jacobian_t, g2_xyzz_t>(g2_generator(), rng); }
  SECTION("all points at infinity") {
    std::vector<g1_jacobian_t> js(5, g1_jacobian_t::infinity());
    auto out = batch_to_affine(js);
    for (auto& a : out) REQUIRE(a.is_infinity());
  }
}

// The GPU MSM clears its XYZZ buckets to all-zero bytes (a memset) and relies on their acting as
// infinity in every addition and conversion.
template <class Affine, class Xyzz>
static void check_zero_bytes_are_infinity(const Affine& gen) {
  Xyzz z;
  std::memset(static_cast<void*>(&z), 0, sizeof z);
  const Xyzz p = Xyzz::from_affine(gen);
  REQUIRE(z.is_infinity());
  CHECK(z == Xyzz::infinity());
  CHECK(z.add(p) == p);
  CHECK(p.add(z) == p);
  CHECK(z.add(gen) == p);
  CHECK(z.dbl().is_infinity());
  CHECK(z.to_jacobian().is_infinity());
  CHECK(z.to_affine().is_infinity());
}

TEST_CASE("XYZZ points of all-zero bytes are infinity", "[ec]") {
  check_zero_bytes_are_infinity<g1_affine_t, g1_xyzz_t>(g1_generator());
  check_zero_bytes_are_infinity<g2_affine_t, g2_xyzz_t>(g2_generator());
}
